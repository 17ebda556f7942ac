"""Each language's word lists, read once from `lexicon/<lang>.yaml`: data, not rules."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import yaml

LEXICON_DIR = Path(__file__).with_name("lexicon")
LANGUAGES = ("en", "de", "fr")


@functools.cache
def lexicon(lang: str) -> dict[str, Any]:
    """The lexicon of `lang` (empty for a language without one)."""
    path = LEXICON_DIR / f"{lang}.yaml"
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: expected a mapping of word lists")
    return data


def word_list(lang: str, key: str) -> tuple[str, ...]:
    """One space-separated list of `lang`, in its written order (empty when absent)."""
    value = lexicon(lang).get(key) or ""
    return tuple(str(value).split())


def word_set(lang: str, key: str) -> frozenset[str]:
    """One list of `lang` as a set."""
    return frozenset(word_list(lang, key))


def word_map(lang: str, key: str) -> dict[str, str]:
    """A mapping list (`base: form form …`) of `lang`, read as form → base."""
    table = lexicon(lang).get(key) or {}
    return {form: base for base, forms in table.items() for form in str(forms).split()}


def phrases(key: str) -> tuple[str, ...]:
    """Every language's phrases listed under `key` ("sentiment.angry"), in file order."""
    group, _, name = key.partition(".")
    out: list[str] = []
    for lang in LANGUAGES:
        table = lexicon(lang).get(group) or {}
        out += [str(p) for p in ((table.get(name) or []) if name else table)]
    return tuple(out)


_MARKS = {"*": r"\w*", "#": r"\d+", "'": "['’]?"}


def _part(part: str) -> str:
    options = ["".join(_MARKS.get(c, re.escape(c)) for c in o) for o in part.split("/")]
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def phrase_pattern(phrase: str) -> str:
    """One phrase as a regex (the syntax `alternation` describes)."""
    words = phrase.split()
    return r"\s+".join(
        r"[\w-]+" if w == "_" else r"[\s-]".join(map(_part, w.split("-"))) for w in words
    )


def alternation(key: str) -> str:
    """The phrases under `key` as one regex alternation, longest first. In a phrase, words match
    across any spacing, `*` ends a word with any letters, `#` is a number, `_` any one word, an
    apostrophe may be left out, `a/b` is either word and a hyphen may be a space."""
    listed = sorted(set(phrases(key)), key=lambda p: (-len(p), p))
    return "|".join(phrase_pattern(p) for p in listed)


@functools.cache
def matcher(key: str) -> re.Pattern[str]:
    """Whether any phrase under `key` occurs as whole words (case-insensitive)."""
    return re.compile(rf"\b(?:{alternation(key)})\b", re.IGNORECASE)
