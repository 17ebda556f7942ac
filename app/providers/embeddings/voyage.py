"""Voyage AI embeddings (Voyage's API or MongoDB's managed endpoint via a base URL).

Calls go through the process's shared `VoyageConnection` (pooled session, budget-bounded timeout
and retry, health). The model's allowed output dimensions are checked when the embedder is built,
so a wrong `VOYAGE_EMBEDDING_DIMENSIONS` stops the service at start instead of failing (or, worse,
silently mixing vector widths) at the first query.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.voyage_connection import VoyageConnection

log = logging.getLogger(__name__)

MAX_BATCH = 128  # Voyage accepts up to 1,000 texts per call; smaller batches fail more cheaply

_FLEXIBLE = (256, 512, 1024, 2048)
# Output dimensions per model (Voyage's documentation): a tuple means `output_dimension` may be
# chosen from it; a single int means the width is fixed and the parameter must not be sent.
DIMENSIONS: dict[str, tuple[int, ...] | int] = {
    "voyage-4-large": _FLEXIBLE,
    "voyage-4": _FLEXIBLE,
    "voyage-4-lite": _FLEXIBLE,
    "voyage-3.5": _FLEXIBLE,
    "voyage-3.5-lite": _FLEXIBLE,
    "voyage-3-large": _FLEXIBLE,
    "voyage-code-3": _FLEXIBLE,
    "voyage-context-3": _FLEXIBLE,
    "voyage-3": 1024,
    "voyage-3-lite": 512,
    "voyage-finance-2": 1024,
    "voyage-law-2": 1024,
    "voyage-multilingual-2": 1024,
    "voyage-code-2": 1536,
}


def check_dimensions(model: str, dimensions: int) -> bool:
    """Raise `ProviderConfigError` when `model` cannot produce `dimensions`-wide vectors.

    Returns whether `output_dimension` must be sent (flexible models). An unknown model is let
    through with a warning (the first call's vector width is still checked)."""
    allowed = DIMENSIONS.get(model)
    if allowed is None:
        log.warning(
            "unknown Voyage model %r: cannot check %d dimensions in advance", model, dimensions
        )
        return True
    if isinstance(allowed, int):
        if dimensions != allowed:
            raise ProviderConfigError(
                f"{model} produces {allowed}-dimensional vectors, not {dimensions} "
                "(set VOYAGE_EMBEDDING_DIMENSIONS accordingly)"
            )
        return False
    if dimensions not in allowed:
        raise ProviderConfigError(
            f"{model} supports output dimensions {list(allowed)}, not {dimensions} "
            "(VOYAGE_EMBEDDING_DIMENSIONS)"
        )
    return True


class VoyageEmbedder:
    name = "voyage"

    def __init__(
        self, connection: VoyageConnection, model: str = "voyage-3.5", dimensions: int = 1024
    ) -> None:
        self._send_dimension = check_dimensions(model, dimensions)
        self.connection = connection
        self.health = connection.health
        self.model = model
        self.dimensions = dimensions

    async def aclose(self) -> None:
        await self.connection.aclose()

    async def _embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            batch = list(texts[start : start + MAX_BATCH])
            kwargs: dict[str, Any] = {"model": self.model, "input_type": input_type}
            if self._send_dimension:
                kwargs["output_dimension"] = self.dimensions

            async def call(batch: list[str] = batch, kwargs: dict[str, Any] = kwargs) -> Any:
                return await self.connection.client.embed(batch, **kwargs)

            res = await self.connection.call(call)
            vectors = [[float(x) for x in v] for v in res.embeddings]
            if len(vectors) != len(batch) or any(len(v) != self.dimensions for v in vectors):
                raise ProviderError(
                    f"voyage returned {len(vectors)} vectors of width "
                    f"{sorted({len(v) for v in vectors})} for {len(batch)} texts "
                    f"(expected {self.dimensions})",
                    "bad_response",
                )
            out.extend(vectors)
        return out

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(texts, "document") if texts else []

    async def embed_query(self, text: str) -> list[float]:
        return (await self._embed([text], "query"))[0]
