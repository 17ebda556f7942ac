"""The one normalisation every reader of words uses before matching: routing, screening, names
(NFKC, invisible characters, look-alike letters, spaced-out words; docs/language.md). Pure."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import yaml


def _data(name: str) -> dict[str, str]:
    data: dict[str, str] = yaml.safe_load(Path(__file__).with_name(name).read_text("utf-8"))
    return data


# Characters that render as nothing (or only as a break hint) and so can hide inside a word.
INVISIBLE = frozenset(chr(int(c, 16)) for c in _data("invisible.yaml")["invisible"].split())
# Cyrillic and Greek letters drawn like a Latin letter, look-alike → Latin (a data file); a
# look-alike that NFKC turns into another letter (Greek lunate sigma `ϲ` → `ς`) folds as well
_ALIKE = {a: latin for latin, alikes in _data("confusables.yaml").items() for a in alikes.split()}
CONFUSABLES = _ALIKE | {unicodedata.normalize("NFKC", a): latin for a, latin in _ALIKE.items()}

# One-letter words that may stand in front of a spaced-out word: lower case, and only where it
# follows a word as an article would ("want a r e f u n d"). At the start, or in capitals, the
# letter belongs to the word ("a t t o r n e y", "I g n o r e").
ONE_LETTER_WORDS = frozenset({"a", "à", "y"})
_AFTER_WORD = re.compile(r"[^\W_] $")

_WORD = re.compile(r"[^\W_]+")
_TABLE = str.maketrans(CONFUSABLES)
_INVISIBLE = str.maketrans(dict.fromkeys(INVISIBLE))
# 3+ single letters, one repeated separator between them, the run not part of a longer word
_SPACED = re.compile(r"(?<![^\W_])[^\W\d_](?P<sep>[ .\-_])[^\W\d_](?:(?P=sep)[^\W\d_])+(?![^\W_])")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def _fold_word(m: re.Match[str]) -> str:
    word = m.group(0)
    if not any(ch in CONFUSABLES for ch in word):
        return word
    letters = [ch for ch in word if ch.isalpha()]
    mixed = bool(_LATIN.search(word))
    all_alike = all(ch in CONFUSABLES for ch in letters)
    return word.translate(_TABLE) if mixed or all_alike else word


def fold_confusables(text: str) -> str:
    """Look-alike Cyrillic and Greek letters in a Latin (or wholly look-alike) word → Latin."""
    return _WORD.sub(_fold_word, text)


def _join(m: re.Match[str]) -> str:
    run = m.group(0)
    letters = run.split(m.group("sep"))
    first, rest = letters[0], letters[1:]
    apart = first in ONE_LETTER_WORDS and bool(_AFTER_WORD.search(m.string[: m.start()]))
    if m.group("sep") == " " and len(rest) >= 3 and apart:
        return first + " " + "".join(rest)
    return "".join(letters)


def join_spaced_letters(text: str) -> str:
    """`R E F U N D`, `r-e-f-u-n-d`, `r.e.f.u.n.d` → one word."""
    return _SPACED.sub(_join, text)


@lru_cache(maxsize=8192)
def normalize(text: str) -> str:
    """The text as matching reads it (see the module doc)."""
    if text.isascii():
        return join_spaced_letters(text)
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return join_spaced_letters(fold_confusables(text))
