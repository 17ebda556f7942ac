"""The disk cache of document embeddings: a restart re-embeds nothing it has seen."""

from __future__ import annotations

from pathlib import Path

from app.providers.embeddings.cache import CachedEmbedder
from app.providers.embeddings.fake import FakeEmbedder


async def test_cache_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "emb.npz"
    first = FakeEmbedder(dimensions=16)
    cached = CachedEmbedder(first, path)
    vecs = await cached.embed_documents(["alpha", "beta", "alpha"])
    assert first.calls == [["alpha", "beta"]]  # duplicates embedded once
    cached.save()
    second = FakeEmbedder(dimensions=16)
    again = CachedEmbedder(second, path)
    assert await again.embed_documents(["beta", "alpha"]) == [vecs[1], vecs[0]]
    assert second.calls == []  # all hits
    await again.embed_documents(["gamma"])
    assert second.calls == [["gamma"]]


async def test_a_cache_of_another_width_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "emb.npz"
    narrow = CachedEmbedder(FakeEmbedder(dimensions=8), path)
    await narrow.embed_documents(["alpha"])
    narrow.save()
    wide_inner = FakeEmbedder(dimensions=16)
    wide = CachedEmbedder(wide_inner, path)
    [vec] = await wide.embed_documents(["alpha"])
    assert len(vec) == 16 and wide_inner.calls == [["alpha"]]


async def test_corrupt_cache_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "emb.npz"
    path.write_bytes(b"not a zip")
    inner = FakeEmbedder(dimensions=8)
    cached = CachedEmbedder(inner, path)
    assert len((await cached.embed_documents(["x"]))[0]) == 8


async def test_query_vectors_are_shared_within_a_turn_only() -> None:
    from app.providers.embeddings.memo import TurnMemo, one_turn

    inner = FakeEmbedder(dimensions=8)
    memo = TurnMemo(inner)
    with one_turn():
        a = await memo.embed_query("reset my password")
        b = await memo.embed_query("reset my password")
        await memo.embed_query("something else")
    assert a == b and inner.calls == [["reset my password"], ["something else"]]
    await memo.embed_query("reset my password")  # outside a turn: nothing is remembered
    assert len(inner.calls) == 3
    assert memo.calls is inner.calls  # extras of the wrapped embedder stay reachable
