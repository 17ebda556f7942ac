"""The embedding interface every stage depends on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed width."""

    name: str
    dimensions: int

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for corpus texts (passages, tickets)."""
        ...

    async def embed_query(self, text: str) -> list[float]:
        """Vector for a search query (some providers embed queries differently)."""
        ...
