"""Voyage AI rerank API (Voyage's endpoint, or MongoDB's managed one via a base URL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.rerank.base import clamp01


class VoyageReranker:
    """`relevance_score` per document, mapped back to input order (Voyage returns best first)."""

    name = "voyage"
    calibration = "voyage"

    def __init__(
        self,
        api_key: str | None,
        model: str = "rerank-2.5-lite",
        base_url: str | None = None,
        client: Any = None,
    ) -> None:
        self.model = model
        if client is not None:
            self._client = client
            return
        if not api_key:
            raise ProviderConfigError("RERANKER=voyage needs VOYAGE_API_KEY")
        from voyageai.client_async import AsyncClient

        kwargs: dict[str, Any] = {"api_key": api_key}
        if base_url:
            kwargs["base_url"] = base_url
        self._client = AsyncClient(**kwargs)

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        try:
            res = await self._client.rerank(query, list(texts), model=self.model, truncation=True)
        except Exception as exc:
            raise ProviderError(f"voyage rerank failed: {exc}") from exc
        scores = [0.0] * len(texts)
        for item in res.results:
            index = int(item.index)
            if not 0 <= index < len(texts):
                raise ProviderError(f"voyage rerank returned index {index} for {len(texts)} texts")
            scores[index] = clamp01(float(item.relevance_score))
        return scores
