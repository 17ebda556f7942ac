"""The Voyage embedder and reranker against a fake Voyage HTTP server on 127.0.0.1: the real
voyageai SDK request path, with our pooled session, budget-bounded timeouts and retries."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from app.providers import budget
from app.providers.budget import RetryPolicy
from app.providers.embeddings import build_embedder, cache_file_name
from app.providers.embeddings.cache import CachedEmbedder
from app.providers.embeddings.voyage import VoyageEmbedder, check_dimensions
from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.rerank.voyage import VoyageReranker
from app.providers.voyage_connection import VoyageConnection
from app.settings import Settings
from tests.fake_voyage import API_KEY, FakeVoyage
from tuning import TUNING

PRODUCTION = RetryPolicy.from_tuning(TUNING)


def connect(api: FakeVoyage, key: str = API_KEY, **retry: Any) -> VoyageConnection:
    return VoyageConnection(
        key, base_url=api.base_url, retry=dataclasses.replace(PRODUCTION, **retry)
    )


async def test_embedder_sends_model_type_and_dimension_and_reuses_one_connection() -> None:
    async with FakeVoyage().serve() as api:
        conn = connect(api)
        embedder = VoyageEmbedder(conn, model="voyage-3.5", dimensions=512)
        docs = await embedder.embed_documents(["alpha", "beta"])
        query = await embedder.embed_query("alpha")
        await conn.aclose()
    assert len(docs) == 2 and all(len(v) == 512 for v in docs)
    assert len(query) == 512 and query == docs[0]  # the fake embeds by text only
    (p1, h1, b1), (_, _, b2) = api.requests
    assert p1 == "/v1/embeddings" and h1["Authorization"] == f"Bearer {API_KEY}"
    assert b1["model"] == "voyage-3.5" and b1["output_dimension"] == 512
    assert b1["input_type"] == "document" and b2["input_type"] == "query"
    assert api.client_ports[0] == api.client_ports[1]  # one pooled session, one connection
    assert conn.health.calls == 2 and conn.health.config_error is None


async def test_reranker_maps_scores_back_to_input_order() -> None:
    async with FakeVoyage().serve() as api:
        conn = connect(api)
        scores = await VoyageReranker(conn).rerank(
            "reset the room panel", ["billing plans", "reset the room panel", "panel"]
        )
        assert await VoyageReranker(conn).rerank("q", []) == []  # no texts, no call
        await conn.aclose()
    assert scores[1] == 1.0 and scores[0] == 0.0 and 0.0 < scores[2] < 1.0
    ((path, _, body),) = api.requests
    assert path == "/v1/rerank" and body["model"] == "rerank-2.5-lite" and body["truncation"]


async def test_a_server_that_never_answers_ends_at_the_stage_budget() -> None:
    """Item 1: without our deadline the SDK would wait up to 600 s."""
    async with FakeVoyage().script("hang", "hang").serve() as api:
        conn = connect(api)
        embedder = VoyageEmbedder(conn, model="voyage-3.5", dimensions=1024)
        with budget.deadline(1.5), pytest.raises(ProviderError) as caught:
            await embedder.embed_query("hello")
        await conn.aclose()
    assert caught.value.kind == "timeout"
    assert len(api.requests) == 1  # nothing left of the budget for a retry
    assert conn.health.failures["timeout"] == 1


async def test_rate_limits_are_retried_when_the_retry_after_fits() -> None:
    async with FakeVoyage(retry_after="0").script("429").serve() as api:
        conn = connect(api)
        with budget.deadline(10):
            scores = await VoyageReranker(conn).rerank("q", ["q"])
        await conn.aclose()
    assert scores == [1.0] and len(api.requests) == 2


async def test_a_retry_after_beyond_the_budget_is_not_waited_for() -> None:
    async with FakeVoyage(retry_after="45").script("429", "ok").serve() as api:
        conn = connect(api)
        with budget.deadline(5), pytest.raises(ProviderError) as caught:
            await VoyageReranker(conn).rerank("q", ["q"])
        await conn.aclose()
    assert caught.value.kind == "rate_limit" and "does not fit" in str(caught.value)
    assert len(api.requests) == 1


async def test_a_rejected_key_is_a_configuration_error_in_health() -> None:
    async with FakeVoyage().serve() as api:
        conn = connect(api, key="pa-revoked")
        with pytest.raises(ProviderConfigError):
            await VoyageEmbedder(conn, model="voyage-3.5").embed_query("x")
        await conn.aclose()
    assert len(api.requests) == 1  # never retried
    assert conn.health.view()["ok"] is False and conn.health.config_error


async def test_vectors_of_the_wrong_width_are_refused() -> None:
    async with FakeVoyage(width=256).serve() as api:
        conn = connect(api)
        with pytest.raises(ProviderError, match="width"):
            await VoyageEmbedder(conn, model="voyage-3.5", dimensions=1024).embed_query("x")
        await conn.aclose()


# --------------------------------------------------------------------------- item 3


@pytest.mark.parametrize(
    ("model", "dims", "ok"),
    [
        ("voyage-3.5", 1024, True),
        ("voyage-3.5", 2048, True),
        ("voyage-3.5", 384, False),
        ("voyage-3-large", 256, True),
        ("voyage-3", 1024, True),
        ("voyage-3", 512, False),
    ],
)
def test_dimensions_are_validated_per_model(model: str, dims: int, ok: bool) -> None:
    if ok:
        check_dimensions(model, dims)
    else:
        with pytest.raises(ProviderConfigError):
            check_dimensions(model, dims)


def test_a_wrong_dimension_setting_stops_the_service_at_start(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        mongodb_uri=None,
        _env_file=None,
        embedder="voyage",
        voyage_api_key="pa-k",
        voyage_embedding_model="voyage-3.5",
        voyage_embedding_dimensions=384,
        embedding_cache_dir=tmp_path,
    )
    with pytest.raises(ProviderConfigError, match="384"):
        build_embedder(settings)


def test_the_embedding_cache_file_is_keyed_by_provider_model_and_dimensions(
    tmp_path: Path,
) -> None:
    names = set()
    for model in ("voyage-3.5", "voyage-3-large"):
        settings = Settings(  # type: ignore[call-arg]
            mongodb_uri=None,
            _env_file=None,
            embedder="voyage",
            voyage_api_key="pa-k",
            voyage_base_url=f"http://127.0.0.1:9/{model}",
            voyage_embedding_model=model,
            voyage_embedding_dimensions=1024,
            embedding_cache_dir=tmp_path,
        )
        cached = build_embedder(settings).inner
        assert isinstance(cached, CachedEmbedder)
        names.add(cached.path.name)
    assert names == {
        "embeddings-voyage-voyage-3.5-1024.npz",
        "embeddings-voyage-voyage-3-large-1024.npz",
    }


async def test_a_cache_written_by_another_model_is_not_read(tmp_path: Path) -> None:
    async with FakeVoyage().serve() as api:
        conn = connect(api)
        path = tmp_path / "shared.npz"  # same file name on purpose (e.g. an old naming scheme)
        first = CachedEmbedder(VoyageEmbedder(conn, model="voyage-3.5"), path)
        await first.embed_documents(["alpha"])
        first.save()
        other = CachedEmbedder(VoyageEmbedder(conn, model="voyage-3-large"), path)
        await other.embed_documents(["alpha"])
        await conn.aclose()
    assert other.misses == 1 and other.hits == 0  # re-embedded, not reused
    assert len(api.requests) == 2
    assert cache_file_name(first.inner) != cache_file_name(other.inner)
