"""A disk-backed cache of document embeddings, so a restart does not re-embed the corpus.

Keyed by (provider, model and width — in the file name and stored in the file — and the sha256
of the text): switching `VOYAGE_EMBEDDING_MODEL` or the width never reuses another model's
vectors. Only `embed_documents` is cached: queries are new text almost every time. The file is
a plain `.npz` (keys + matrix + identity), written atomically.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.providers.embeddings.base import Embedder

log = logging.getLogger(__name__)


def cache_identity(embedder: Embedder) -> str:
    """Provider, model and width: vectors of any other combination are not interchangeable."""
    model = getattr(embedder, "model", None)
    parts = [embedder.name] + ([model] if isinstance(model, str) and model != embedder.name else [])
    return "-".join([*parts, str(embedder.dimensions)])


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CachedEmbedder:
    """Wraps an `Embedder`; misses go to it, hits come from memory (loaded from `path`)."""

    def __init__(self, inner: Embedder, path: Path, identity: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        # provider, model and width (the file name carries it too; this survives a rename)
        self.identity = identity or cache_identity(inner)
        self.path = path
        self._vectors: dict[str, list[float]] = {}
        self._dirty = False
        self.hits = 0
        self.misses = 0
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, matrix = data["keys"], data["vectors"]
                if matrix.ndim != 2 or matrix.shape[1] != self.dimensions:
                    return
                if "identity" in data and str(data["identity"]) != self.identity:
                    log.warning("ignoring embedding cache %s: made by another model", self.path)
                    return
                self._vectors = {
                    str(k): [float(x) for x in row] for k, row in zip(keys, matrix, strict=True)
                }
        except (OSError, ValueError, KeyError) as exc:
            log.warning("ignoring unreadable embedding cache %s: %s", self.path, exc)

    def save(self) -> None:
        """Write the cache if anything new was embedded (atomic rename)."""
        if not self._dirty or not self._vectors:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype="U64")
        matrix = np.array(list(self._vectors.values()), dtype=np.float32)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".npz")
        os.close(fd)
        try:
            np.savez(tmp, keys=keys, vectors=matrix, identity=np.array(self.identity))
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._dirty = False

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [_key(t) for t in texts]
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k not in self._vectors:
                first.setdefault(k, i)
        missing = sorted(first.values())
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = await self.inner.embed_documents([texts[i] for i in missing])
            for i, vec in zip(missing, fresh, strict=True):
                self._vectors[keys[i]] = vec
            self._dirty = True
        return [self._vectors[k] for k in keys]

    async def embed_query(self, text: str) -> list[float]:
        return await self.inner.embed_query(text)
