"""Tenant synonyms for the lexical side of retrieval: groups of equivalent terms (pure, no I/O;
why query-side expansion: docs/language.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from app.language.analyzer import query_terms
from app.language.text import content_terms, normalize, stem

_WORD = re.compile(r"[^\W_]+")


def phrase_words(text: str) -> tuple[str, ...]:
    """The normalised, lightly stemmed words a member or a query is matched by ("two-factor"
    matches "two factor", "SSOs" matches "SSO")."""
    return tuple(stem(w) for w in _WORD.findall(normalize(text)))


def member_problem(member: str) -> str | None:
    """Why `member` cannot be a group entry (None when it can): blank, or only stop words (it
    would add nothing to the lexical query, and match almost every question)."""
    if not member.strip():
        return "is empty"
    if not phrase_words(member) or not query_terms(member):
        return f"{member!r} has no searchable word (only stop words or punctuation)"
    return None


def _contains(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(tuple(words[i : i + n]) == tuple(phrase) for i in range(len(words) - n + 1))


@dataclass(frozen=True)
class SynonymTable:
    """Groups of equivalent terms, as a tenant file lists them (validated there)."""

    groups: tuple[tuple[str, ...], ...] = ()
    _words: tuple[tuple[tuple[str, ...], ...], ...] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        words = tuple(tuple(phrase_words(m) for m in group) for group in self.groups)
        object.__setattr__(self, "_words", words)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def matches(self, text: str) -> list[tuple[int, int]]:
        """(group, member) index pairs of every member `text` contains as a whole word/phrase."""
        if not self.groups or not text:
            return []
        words = phrase_words(text)
        return [
            (g, m)
            for g, group in enumerate(self._words)
            for m, phrase in enumerate(group)
            if phrase and _contains(words, phrase)
        ]

    def additions(self, text: str) -> list[str]:
        """The members of matched groups that `text` does not itself contain, in group order."""
        found = self.matches(text)
        hit_groups = dict.fromkeys(g for g, _ in found)
        present = set(found)
        return [
            member
            for g in hit_groups
            for m, member in enumerate(self.groups[g])
            if (g, m) not in present
        ]


EMPTY = SynonymTable()


def expand_query(text: str, table: SynonymTable) -> str:
    """`text` followed by the other members of every group it mentions, one a line (so the
    analyzer's same-line joins never pair a question word with an addition)."""
    added = table.additions(text)
    return "\n".join([text, *added]) if added else text


@lru_cache(maxsize=8192)  # passages come from a fixed corpus and recur turn after turn
def _covered(text: str, table: SynonymTable) -> frozenset[str]:
    found = table.matches(text)
    groups = dict.fromkeys(g for g, _ in found)
    return frozenset(t for g in groups for member in table.groups[g] for t in content_terms(member))


def covered_terms(text: str, table: SynonymTable) -> frozenset[str]:
    """Question terms a passage covers through its synonyms: the content terms of every member
    of each group the passage mentions ("United Kingdom" in the passage → `uk`, `unit`,
    `kingdom`, `great`, `britain`). Empty without groups."""
    if not table:
        return frozenset()
    return _covered(text, table)
