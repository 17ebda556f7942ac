"""The lexical ranker's one analyzer, for both backends (issue 12; its token rules are in
docs/language.md and `tests/test_search_analyzer.py`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict

from app.language.text import DIGIT, LUCENE_STOPWORDS, TOKEN, normalize, stem, unique

# Bump when `analyze` changes: stored `searchTerms` of another version are rewritten at the next
# ingestion (and LocalSearch recomputes them), so the two backends never read different tokens.
ANALYZER_VERSION = "2"  # 2: irregular past forms stem to their verb (text.stem)

_SPACES = re.compile(r"[ \t]+")
_GLUED = re.compile(r"([^\W\d_]{3,})(\d{2,})")  # auth302, ord1042: a code typed without a separator


class SearchTermFields(TypedDict):
    """What is stored as an article's `searchTerms` (and indexed with `lucene.whitespace`)."""

    version: str
    title: str
    tags: str
    body: str


def _joins(word: str, nxt: str) -> bool:
    """Whether `word nxt` is written like a code with a space ("auth 302", "ab xy10")."""
    return word.isalpha() and word not in LUCENE_STOPWORDS and bool(DIGIT.search(nxt))


def analyze_line(line: str) -> list[str]:
    """Tokens of one line of already normalised text (see the module docstring)."""
    out: list[str] = []
    prev: str | None = None  # the previous plain word, while a pair may still form
    prev_end = 0
    for match in TOKEN.finditer(line):
        token = match.group(0)
        if "-" in token or "_" in token:
            parts = re.split(r"[_-]", token)
            out.append("-".join(parts))
            out.append("".join(parts))
            out.extend(stem(p) for p in parts if p not in LUCENE_STOPWORDS)
            prev = None
        else:
            if token not in LUCENE_STOPWORDS:
                out.append(stem(token))
            if DIGIT.search(token):  # the rare case: only tokens with digits join or split
                glued = _GLUED.fullmatch(token)
                if glued:
                    out.extend(glued.groups())
                if (
                    prev is not None
                    and _joins(prev, token)
                    and _SPACES.fullmatch(line, prev_end, match.start())
                ):
                    out.append(prev + token)
            prev = token
        prev_end = match.end()
    return out


def analyze(text: str) -> list[str]:
    """Every token of `text` in order, for documents and queries alike."""
    return [t for line in normalize(text).splitlines() for t in analyze_line(line)]


def analyzed_field(text: str) -> str:
    """`text` as stored for `lucene.whitespace`: tokens joined by spaces, one line per line
    (so Atlas's highlighter still has passages to return)."""
    lines = (" ".join(analyze_line(line)) for line in normalize(text).splitlines())
    return "\n".join(line for line in lines if line)


def query_terms(text: str) -> list[str]:
    """A query's distinct tokens: what both backends search for."""
    return unique(analyze(text))


def tag_terms(tags: Iterable[str]) -> list[str]:
    """Distinct tokens of an article's tags (a tag counts once, whatever its repetitions)."""
    return unique(t for tag in tags for t in analyze(tag))


def search_term_fields(title: str, tags: Iterable[str], body: str) -> SearchTermFields:
    return {
        "version": ANALYZER_VERSION,
        "title": analyzed_field(title),
        "tags": " ".join(tag_terms(tags)),
        "body": analyzed_field(body),
    }


def field_tokens(stored: str) -> list[str]:
    """A stored analysed field read back as `lucene.whitespace` reads it."""
    return stored.split()
