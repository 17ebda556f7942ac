"""The reranking interface: score passages against the customer's question, in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Reranker(Protocol):
    """Scores each text's relevance to `query`, in input order, every score within [0, 1].

    `name` identifies it in traces. `calibration` keys its confidence thresholds in
    `tuning.confidence` (None: never calibrated, so its scores never reach a confident band), so
    scores from different rerankers are never compared against each other's bands. Each text is
    a passage as `rerank.passage_text` formats it: a heading line (breadcrumb or ticket
    subject), a newline, then the passage body.
    """

    name: str

    @property
    def calibration(self) -> str | None: ...

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]: ...


@runtime_checkable
class VectorReranker(Reranker, Protocol):
    """A reranker that can reuse the passages' stored embeddings instead of embedding them.

    `vectors[i]` is the stored embedding of `texts[i]`, or None when the backend did not supply
    one (the reranker then embeds that text itself).
    """

    async def rerank_with_vectors(
        self, query: str, texts: Sequence[str], vectors: Sequence[Sequence[float] | None]
    ) -> list[float]: ...


def clamp01(x: float) -> float:
    """Into [0, 1]; NaN (a broken model output) becomes 0, never a confident score."""
    if x != x:  # NaN
        return 0.0
    return min(1.0, max(0.0, x))
