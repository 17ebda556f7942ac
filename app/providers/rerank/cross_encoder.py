"""A sentence-transformers `CrossEncoder` (e.g. ms-marco-MiniLM-L-6-v2), logits → sigmoid.

The model loads lazily, once, in a worker thread. We ask the model for raw logits (identity
activation) and apply the sigmoid ourselves, so the [0, 1] mapping does not depend on whatever
activation a model's saved config declares.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Sequence
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.rerank.base import clamp01


def sigmoid(x: float) -> float:
    """Numerically stable logistic function."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


class CrossEncoderReranker:
    name = "cross-encoder"
    calibration = "cross-encoder"

    def __init__(
        self,
        model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2",
        *,
        device: str = "cpu",
        max_length: int = 512,
        batch_size: int = 16,
    ) -> None:
        self.model_name = model
        self.device = device
        self.max_length = max_length
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import torch
                    from sentence_transformers import CrossEncoder
                except ImportError as exc:  # pragma: no cover - dependency is pinned
                    raise ProviderConfigError("sentence-transformers is not installed") from exc
                try:
                    self._model = CrossEncoder(
                        self.model_name,
                        device=self.device,
                        max_length=self.max_length,
                        activation_fn=torch.nn.Identity(),
                    )
                except Exception as exc:
                    raise ProviderConfigError(
                        f"cannot load cross-encoder {self.model_name!r}: {exc}"
                    ) from exc
            return self._model

    def _predict(self, query: str, texts: list[str]) -> list[float]:
        model = self._load()
        logits = model.predict(
            [(query, t) for t in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [clamp01(sigmoid(float(x))) for x in logits.reshape(len(texts), -1)[:, 0]]

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        try:
            return await asyncio.to_thread(self._predict, query, list(texts))
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"cross-encoder rerank failed: {exc}") from exc
