"""Rerankers, chosen from settings by name (DESIGN 5.5)."""

from __future__ import annotations

from app.providers.embeddings.base import Embedder
from app.providers.rerank.base import Reranker
from app.providers.rerank.fake import FakeReranker
from app.providers.rerank.offline import OfflineReranker
from app.settings import Settings


def build_reranker(settings: Settings, embedder: Embedder | None) -> Reranker:
    """`offline` (default, reuses the embedder), `cross-encoder` or `voyage`."""
    if settings.reranker == "voyage":
        from app.providers.rerank.voyage import VoyageReranker

        key = settings.voyage_api_key.get_secret_value() if settings.voyage_api_key else None
        return VoyageReranker(
            key, model=settings.voyage_rerank_model, base_url=settings.voyage_base_url
        )
    if settings.reranker == "cross-encoder":
        from app.providers.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(settings.cross_encoder_model)
    return OfflineReranker(embedder)


__all__ = ["FakeReranker", "OfflineReranker", "Reranker", "build_reranker"]
