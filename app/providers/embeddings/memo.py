"""One turn embeds the same text several times (router, retrieval, offline reranker): within a
turn, each distinct query text is embedded once. Nothing is kept across turns."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from app.providers.embeddings.base import Embedder

_TURN: ContextVar[dict[str, list[float]] | None] = ContextVar("turn_query_vectors", default=None)


@contextmanager
def one_turn() -> Iterator[None]:
    """Query vectors computed inside this block are reused inside it, then forgotten."""
    token = _TURN.set({})
    try:
        yield
    finally:
        _TURN.reset(token)


class TurnMemo:
    """Wraps an `Embedder`; `embed_query` reuses vectors within `one_turn()`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions

    def __getattr__(self, name: str) -> Any:  # the wrapped embedder's extras (cache save, counts)
        return getattr(self.inner, name)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        memo = _TURN.get()
        if memo is None:
            return await self.inner.embed_query(text)
        if text not in memo:
            memo[text] = await self.inner.embed_query(text)
        return memo[text]
