"""Voyage AI rerank API (Voyage's endpoint, or MongoDB's managed one via a base URL).

Calls go through the process's shared `VoyageConnection` (pooled session, budget-bounded timeout
and retry, health), the same one the Voyage embedder uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderError
from app.providers.rerank.base import clamp01
from app.providers.voyage_connection import VoyageConnection


class VoyageReranker:
    """`relevance_score` per document, mapped back to input order (Voyage returns best first)."""

    name = "voyage"
    calibration = "voyage"

    def __init__(self, connection: VoyageConnection, model: str = "rerank-2.5-lite") -> None:
        self.connection = connection
        self.health = connection.health
        self.model = model

    async def aclose(self) -> None:
        await self.connection.aclose()

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        documents = list(texts)

        async def call() -> Any:
            return await self.connection.client.rerank(
                query, documents, model=self.model, truncation=True
            )

        res = await self.connection.call(call)
        scores = [0.0] * len(texts)
        seen = 0
        for item in res.results:
            index = int(item.index)
            if not 0 <= index < len(texts):
                raise ProviderError(
                    f"voyage rerank returned index {index} for {len(texts)} texts", "bad_response"
                )
            scores[index] = clamp01(float(item.relevance_score))
            seen += 1
        if seen != len(texts):
            raise ProviderError(
                f"voyage rerank scored {seen} of {len(texts)} texts", "bad_response"
            )
        return scores
