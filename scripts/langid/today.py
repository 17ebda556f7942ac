"""The hand-written detector `app.language.utterance.detect_language` was before py3langid
replaced it (function words from the lexicon plus letters only one language uses), kept here only
so `scripts.measure_langid` can compare the two."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from app.language.lexicon import LANGUAGES, word_set

_FUNCTION_WORDS: Final[dict[str, frozenset[str]]] = {
    lang: word_set(lang, "function_words") for lang in LANGUAGES
}
_LETTERS: Final[dict[str, re.Pattern[str]]] = {
    "de": re.compile(r"[äöüß]"),
    "fr": re.compile(r"[éèêàâçùûîïôœ]"),
}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_EVIDENCE: Final = 2  # at least two signals before we claim a language


def detect_language(text: str, languages: Iterable[str] = ("en", "de", "fr")) -> str | None:
    """The language of `text` among `languages`, or None when the evidence is too thin."""
    words = [w.casefold() for w in _WORD.findall(text.replace("’", "'").replace("'", " "))]
    scores: dict[str, float] = {}
    for lang in languages:
        vocab = _FUNCTION_WORDS.get(lang)
        if vocab is None:
            continue
        score = float(sum(1 for w in words if w in vocab))
        letters = _LETTERS.get(lang)
        if letters is not None:
            score += 1.5 * min(2, len(letters.findall(text.casefold())))
        scores[lang] = score
    if not scores:
        return None
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best, top = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    if top < MIN_EVIDENCE or top <= runner_up:
        return None
    return best
