"""A deterministic reranker for tests: scripted scores or plain term overlap; records calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.language.text import content_terms, term_set
from app.providers.rerank.base import clamp01


class FakeReranker:
    """With `scores`, a text scores the highest value whose key it contains (else `default`);
    without, the fraction of the query's content terms the text contains. `calibration` picks
    which thresholds of `tuning.confidence` its scores are read against (e.g. "offline")."""

    name = "fake"

    def __init__(
        self,
        scores: Mapping[str, float] | None = None,
        default: float = 0.0,
        *,
        calibration: str | None = "fake",
    ) -> None:
        self.calibration = calibration
        self.scores = dict(scores or {})
        self.default = default
        self.calls: list[tuple[str, list[str]]] = []
        self.fail_with: Exception | None = None

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        if self.fail_with:
            raise self.fail_with
        self.calls.append((query, list(texts)))
        if self.scores:
            return [
                clamp01(max((v for k, v in self.scores.items() if k in t), default=self.default))
                for t in texts
            ]
        terms = content_terms(query)
        if not terms:
            return [clamp01(self.default) for _ in texts]
        return [len(set(terms) & term_set(t)) / len(terms) for t in texts]
