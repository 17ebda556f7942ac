"""Confidence band from the top rerank score, with thresholds per reranker (DESIGN 5.5). Pure."""

from __future__ import annotations

import logging
from typing import Literal

from tuning import Tuning

Band = Literal["strong", "weak", "none"]

log = logging.getLogger(__name__)


def confidence_band(top_score: float | None, reranker: str | None, tuning: Tuning) -> Band:
    """`strong` ≥ bands.strong, `weak` ≥ bands.weak, else `none`.

    No score (nothing retrieved, or the reranker failed) is `none`. A reranker without
    calibrated thresholds in tuning is never trusted beyond `none`: an uncalibrated score
    must not let the bot answer with confidence.
    """
    if top_score is None or top_score != top_score:  # None or NaN
        return "none"
    bands = tuning.confidence.get(reranker) if reranker else None
    if bands is None:
        log.warning("no confidence thresholds for reranker %r in tuning; band is none", reranker)
        return "none"
    if top_score >= bands.strong:
        return "strong"
    if top_score >= bands.weak:
        return "weak"
    return "none"
