"""Content words in German and French for lexical matching: stop words and light stemmers
(lexicon data; why: docs/language.md). Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from app.language.lexicon import word_list, word_set
from tuning import TUNING

STOPWORDS: Final[dict[str, frozenset[str]]] = {
    lang: word_set(lang, "stopwords") for lang in ("de", "fr")
}
# longest first: "blinkend", "blinkt", "blinken" -> "blink"; "clignotement" -> "clignot"
_ENDINGS: Final[dict[str, tuple[str, ...]]] = {
    lang: word_list(lang, "endings") for lang in ("de", "fr")
}


def _stripper(endings: tuple[str, ...]) -> Callable[[str], str]:
    def stem(word: str) -> str:
        w = word.casefold()
        if any(c.isdigit() for c in w) or "_" in w:
            return w  # identifiers are compared as written
        for ending in endings:
            if w.endswith(ending) and len(w) - len(ending) >= TUNING.stem_min_length:
                return w[: -len(ending)]
        return w

    return stem


STEMMERS: Final[dict[str, Callable[[str], str]]] = {
    lang: _stripper(endings) for lang, endings in _ENDINGS.items()
}


def fold_terms(
    terms: Sequence[str], language: str
) -> tuple[list[str], Callable[[str], str] | None]:
    """A question's content terms in `language` (German, French: stemmed, stop words out) and
    the stemmer for the passage's terms; other languages unchanged and None."""
    stem = STEMMERS.get(language)
    if stem is None:
        return list(terms), None
    stop = STOPWORDS[language]
    return list(dict.fromkeys(stem(t) for t in terms if t not in stop)) or list(terms), stem
