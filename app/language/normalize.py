"""The one normalisation every reader of words uses before matching: routing, screening, names.

`normalize(text)` returns the text as a reader would see it, so an obfuscated word matches like
its plain form:

1. Unicode NFKC: full-width letters (`ｒｅｆｕｎｄ`), ligatures and compatibility forms become
   their ordinary characters;
2. invisible characters removed: zero-width spaces and joiners, the word joiner, the byte-order
   mark, soft hyphens, bidirectional marks (`ref\u200bund` → `refund`);
3. look-alikes folded: a word that mixes Latin letters with Cyrillic or Greek letters drawn like
   them (`pаssword` with a Cyrillic `а`), or is written wholly in such look-alikes, has them
   replaced by the Latin letters (`CONFUSABLES`, a data table). A word in real Cyrillic or Greek
   uses letters with no Latin twin and stays as written;
4. spaced-out words joined: three or more single letters separated by one and the same space,
   hyphen, dot or underscore (`R E F U N D`, `r-e-f-u-n-d`) become one word. A one-letter word
   in front (`want a r e f u n d`) stays apart (`ONE_LETTER_WORDS`).

Case is kept (names and codes need it); callers casefold as they match. Pure: no I/O, and no
import from `app.turn`, `app.providers`, `app.store` or `app.search`. The text shown to people
and stored is never this copy: it is what matching reads.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters that render as nothing (or only as a break hint) and so can hide inside a word.
INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f"
    "\u3164\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09\ufe0a\ufe0b\ufe0c"
    "\ufe0d\ufe0e\ufe0f\ufeff\uffa0"
)

# Cyrillic and Greek letters drawn like a Latin letter, as (look-alike, Latin) pairs.
CONFUSABLES: dict[str, str] = {
    # Cyrillic lower case
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k",
    "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g", "ү": "y", "ꙇ": "i",
    # Cyrillic upper case
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "З": "3", "І": "I", "Ї": "I", "Ј": "J", "К": "K",
    "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S",
    "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I", "Ү": "Y",
    # Greek lower case
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    # Greek upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
}  # fmt: skip

# One-letter words that may stand in front of a spaced-out word: lower case, and only where it
# follows a word as an article would ("want a r e f u n d"). At the start, or in capitals, the
# letter belongs to the word ("a t t o r n e y", "I g n o r e").
ONE_LETTER_WORDS = frozenset({"a", "à", "y"})
_AFTER_WORD = re.compile(r"[^\W_] $")

# a look-alike that NFKC turns into another letter (Greek lunate sigma `ϲ` → `ς`) folds as well
CONFUSABLES.update(
    {
        unicodedata.normalize("NFKC", alike): latin
        for alike, latin in list(CONFUSABLES.items())
        if unicodedata.normalize("NFKC", alike) != alike
    }
)
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
