"""The language a customer wrote in: `py3langid`, over the candidates only (the tenant's locales),
chosen by `python -m scripts.measure_langid`. Under two words once anything with a digit is
dropped, or no candidate at MIN_SHARE, gives `fallback` (the caller knows better)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Any, Final

from tuning import TUNING

MIN_SHARE: Final = TUNING.language_min_share  # tuning.py says how it and the word minimum were set


@functools.cache
def _model() -> Any:
    import py3langid.langid as langid  # type: ignore[import-untyped]

    return langid.LanguageIdentifier.from_modelpath(langid.MODEL_DIR / langid.MODEL_FILE)


def language_shares(text: str, candidates: Iterable[str]) -> dict[str, float]:
    """Each known candidate's probability among the candidates (keyed as spelled: de-AT is de)."""
    wanted = {c.split("-")[0].lower(): c for c in candidates}
    scores = {wanted[lang]: logp for lang, logp in _model().rank(text) if lang in wanted}
    weights = {k: math.exp(v - max(scores.values())) for k, v in scores.items()}
    return {lang: w / sum(weights.values()) for lang, w in weights.items()}


def detect_language(
    text: str, candidates: Iterable[str] = ("en", "de", "fr"), fallback: str | None = None
) -> str | None:
    """The language of `text` among `candidates`, or `fallback` when too short or unsure."""
    words = re.sub(r"\S*\d\S*", " ", text)
    enough = len(re.findall(r"[^\W\d_]{2,}", words)) >= TUNING.language_min_words
    shares = language_shares(words, candidates) if enough else {}
    best = max(shares, key=shares.__getitem__, default=None)
    return best if best is not None and shares[best] >= MIN_SHARE else fallback
