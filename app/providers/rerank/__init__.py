"""Rerankers, chosen from settings by name (DESIGN 5.5)."""

from __future__ import annotations

from app.language.synonyms import EMPTY, SynonymTable
from app.providers.budget import RetryPolicy
from app.providers.embeddings.base import Embedder
from app.providers.rerank.base import Reranker
from app.providers.rerank.fake import FakeReranker
from app.providers.rerank.offline import OfflineReranker
from app.settings import Settings
from tuning import TUNING, Tuning


def build_reranker(
    settings: Settings,
    embedder: Embedder | None,
    tuning: Tuning = TUNING,
    synonyms: SynonymTable = EMPTY,
) -> Reranker:
    """`offline` (default, reuses the embedder), `cross-encoder` or `voyage`.

    `synonyms` (the tenant's) reach the offline reranker's lexical features; the model-based
    rerankers read the customer's words as written."""
    if settings.reranker == "voyage":
        from app.providers.rerank.voyage import VoyageReranker
        from app.providers.voyage_connection import shared_connection

        key = settings.voyage_api_key.get_secret_value() if settings.voyage_api_key else None
        connection = shared_connection(
            key,
            base_url=settings.voyage_base_url,
            retry=RetryPolicy.from_tuning(tuning),
            what="RERANKER",
        )
        return VoyageReranker(connection, model=settings.voyage_rerank_model)
    if settings.reranker == "cross-encoder":
        from app.providers.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(settings.cross_encoder_model)
    return OfflineReranker(embedder, synonyms=synonyms)


__all__ = ["FakeReranker", "OfflineReranker", "Reranker", "build_reranker"]
