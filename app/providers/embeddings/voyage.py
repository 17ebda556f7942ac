"""Voyage AI embeddings (Voyage's API or MongoDB's managed endpoint via a base URL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError

MAX_BATCH = 128  # Voyage accepts up to 1,000 texts per call; smaller batches fail more cheaply


class VoyageEmbedder:
    name = "voyage"

    def __init__(
        self,
        api_key: str | None,
        model: str = "voyage-3.5",
        dimensions: int = 1024,
        base_url: str | None = None,
        client: Any = None,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        if client is not None:
            self._client = client
            return
        if not api_key:
            raise ProviderConfigError("EMBEDDER=voyage needs VOYAGE_API_KEY")
        import voyageai  # type: ignore[import-untyped,unused-ignore]

        kwargs: dict[str, Any] = {"api_key": api_key}
        if base_url:
            kwargs["base_url"] = base_url
        self._client = voyageai.AsyncClient(**kwargs)  # type: ignore[attr-defined]

    async def _embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            batch = list(texts[start : start + MAX_BATCH])
            try:
                res = await self._client.embed(
                    batch,
                    model=self.model,
                    input_type=input_type,
                    output_dimension=self.dimensions,
                )
            except Exception as exc:
                raise ProviderError(f"voyage embedding failed: {exc}") from exc
            out.extend([[float(x) for x in v] for v in res.embeddings])
        return out

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(texts, "document") if texts else []

    async def embed_query(self, text: str) -> list[float]:
        return (await self._embed([text], "query"))[0]
