"""Each language's word lists, read once from `lexicon/<lang>.yaml`: data, not rules."""

from __future__ import annotations

import functools
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
