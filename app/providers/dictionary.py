"""General word lists for typo repair: the words a language has, whether or not a corpus uses
them (so "caribou" or "wielded" is never "repaired" into a corpus word one edit away).

English: the `pyspellchecker` package's frequency list (~160k words) plus the local embedder's
WordPiece words; German and French: that package's lists. Loaded once per language, on first
use (call it off the event loop: the English list takes a few hundred milliseconds). A language
without a list gets an empty set, and the caller then repairs nothing in it.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
from importlib import resources

log = logging.getLogger(__name__)

LANGUAGES = ("en", "de", "fr")


@functools.cache
def known_words(language: str) -> frozenset[str]:
    """The case-folded words of `language` (empty when no list is installed for it)."""
    if language not in LANGUAGES:
        return frozenset()
    words: set[str] = set()
    try:
        raw = (resources.files("spellchecker") / "resources" / f"{language}.json.gz").read_bytes()
        words |= {w.casefold() for w in json.loads(gzip.decompress(raw)) if w.isalpha()}
    except (ModuleNotFoundError, OSError, ValueError) as exc:
        log.warning("no %s word list for typo repair: %s", language, exc)
    if language == "en":
        from app.providers.embeddings.local_minilm import dictionary_words

        words |= dictionary_words()
    return frozenset(words)
