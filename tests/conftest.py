"""Shared fixtures. Tests never reach the network: a guard refuses non-loopback connections."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from app.providers.embeddings.fake import FakeEmbedder
from app.settings import Settings
from app.store import Store, open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Tests get a fresh in-memory store each; a test that wants the durable file store asks for it
# with its own directory. DATA_DIR points into a temp dir so nothing ever touches ./data.
os.environ.setdefault("EMBEDDED_STORE", "memory")
os.environ.setdefault("DATA_DIR", tempfile.mkdtemp(prefix="concierge-test-data-"))

_real_connect = socket.socket.connect
_ATLAS_URI = os.environ.get("MONGODB_URI")


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    allowed = {"127.0.0.1", "::1", "localhost"}
    if (
        isinstance(host, str)
        and host not in allowed
        and not host.startswith("/")
        and not _ATLAS_URI
    ):
        raise RuntimeError(f"tests must not reach the network (tried {address!r})")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]


# A test starts the whole app (seeded store, HTTP or a server process) when its module uses one of
# these, or it takes one of these fixtures: it is then `integration`, which `make smoke` leaves out.
_APP_HELPERS = frozenset({"running_app", "served", "create_app", "LiveApp"})
_APP_FIXTURES = frozenset({"api", "live"})


def _starts_the_app(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    names = vars(module) if module is not None else {}
    if _APP_HELPERS & names.keys() or _APP_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    return any(getattr(v, "__module__", "") == "tests.serverproc" for v in names.values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_atlas = pytest.mark.skip(reason="MONGODB_URI not set")
    for item in items:
        # the marker, not `"atlas" in item.keywords`: keywords also hold folder names, so a
        # checkout in a folder named `atlas` skipped every test
        if item.get_closest_marker("atlas") is not None and not _ATLAS_URI:
            item.add_marker(skip_atlas)
        if "integration" not in item.keywords and _starts_the_app(item):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def settings() -> Settings:
    return Settings(mongodb_uri=None, embedder="fake", seed_on_start=False, _env_file=None)  # type: ignore[call-arg]


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    s = open_store(settings)
    yield s
    await s.close()


def _backends() -> list[Any]:
    params: list[Any] = [pytest.param("embedded", id="embedded")]
    params.append(pytest.param("embedded-file", id="embedded-file"))
    params.append(pytest.param("atlas", id="atlas", marks=pytest.mark.atlas))
    return params


async def _snapshot(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every document by collection (indexes are not stored: they are created at each start)."""
    db = store.db
    snap = {
        name: await db[name].find({}).sort("_id", 1).to_list()
        for name in sorted(await db.list_collection_names())
    }
    return {name: docs for name, docs in snap.items() if docs}


@pytest.fixture(params=_backends())
async def any_store(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Store]:
    """The contract suite's store: embedded in memory and durable (every test then also checks
    that reopening the file gives back exactly what was in memory), and a real cluster when
    MONGODB_URI is set."""
    if request.param == "embedded":
        s = open_store(Settings(mongodb_uri=None, _env_file=None))  # type: ignore[call-arg]
        yield s
        await s.close()
        return
    if request.param == "embedded-file":
        settings = Settings(  # type: ignore[call-arg]
            mongodb_uri=None, embedded_store="file", data_dir=tmp_path, _env_file=None
        )
        s = open_store(settings)
        yield s
        before = await _snapshot(s)
        await s.close()
        reopened = open_store(settings)
        after = await _snapshot(reopened)
        await reopened.close()
        assert after == before, "the durable store did not reload what it held"
        return
    name = f"concierge_test_{uuid.uuid4().hex[:8]}"
    s = open_store(Settings(mongodb_uri=_ATLAS_URI, mongodb_db=name, _env_file=None))  # type: ignore[call-arg]
    try:
        yield s
    finally:
        await s.client.drop_database(name)
        await s.close()


# --- one set of Atlas search indexes per run ------------------------------------------------
# A Free-tier cluster allows three search indexes in total: the search-parity and index-readiness
# suites share this one database (the parity corpus loaded, our three indexes built once, read by
# every case) instead of each building its own. Session loop: an async client belongs to the
# loop it was opened on, so the tests that use it run on the session loop too.


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def atlas_search_store() -> AsyncIterator[Store | None]:
    """None without MONGODB_URI (the tests that read it are marked `atlas` and skipped)."""
    if not _ATLAS_URI:
        yield None
        return
    from test_search_corpus import load_corpus

    from app.store.indexes import ensure_search_indexes

    name = f"concierge_search_{uuid.uuid4().hex[:8]}"
    store = open_store(Settings(mongodb_uri=_ATLAS_URI, mongodb_db=name, _env_file=None))  # type: ignore[call-arg]
    try:
        await load_corpus(store)
        await ensure_search_indexes(
            store.db, FakeEmbedder().dimensions, progress=lambda _: None, timeout_s=600
        )
        yield store
    finally:
        await store.client.drop_database(name)
        await store.close()
