"""The words the knowledge base is written in, per entitlement rung. Pure.

A customer who types "pasword" or "okat" searches for words no passage holds: BM25 finds
nothing and the embedding of a broken word drifts. Retrieval repairs such a word towards the
words of the corpus (`app.language.spelling.Speller`), and this module says what those words are.

The counts are kept per (audience, locale) and merged for one `SearchFilter`, so a repair can
only land on a word of a passage the customer may retrieve: a Free customer's typo is never
"repaired" into the name of an Enterprise-only feature (which the trace would show). Only
published articles (title, tags, body) and resolved tickets of the minimum quality count: a
draft's words are not searchable, so they are no repair either.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from app.search.filters import PUBLISHED, RESOLVED, SearchFilter
from app.store.models import Article, Ticket

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def word_counts(text: str) -> Counter[str]:
    """Case-folded letter runs of `text` and how often each occurs."""
    return Counter(w.casefold() for w in _WORD.findall(text))


@dataclass(frozen=True, eq=False)
class CorpusVocabulary:
    """Word counts per (audience, locale); `words(filt)` merges what one filter may see.

    Compared by identity: a new corpus is a new object, so a cache keyed on it (the speller of
    `app.turn.retrieve`) can never serve an old corpus's words.
    """

    counts: Mapping[tuple[str, str], Counter[str]]
    _merged: dict[tuple[tuple[str, ...], str | None], Counter[str]] = field(
        default_factory=dict, repr=False
    )

    @classmethod
    def from_texts(cls, rows: Iterable[tuple[str, str, str]]) -> CorpusVocabulary:
        """From (audience, locale, text) rows."""
        counts: dict[tuple[str, str], Counter[str]] = {}
        for audience, locale, text in rows:
            counts.setdefault((audience, locale), Counter()).update(word_counts(text))
        return cls(counts)

    def words(self, filt: SearchFilter) -> Counter[str]:
        """The words of everything `filt` admits, with their counts (cached per filter)."""
        key = (tuple(sorted(filt.audiences)), filt.locale)
        merged = self._merged.get(key)
        if merged is None:
            merged = Counter()
            for (audience, locale), counts in self.counts.items():
                if audience in filt.audiences and (filt.locale is None or locale == filt.locale):
                    merged.update(counts)
            self._merged[key] = merged
        return merged

    def __len__(self) -> int:
        return len({w for c in self.counts.values() for w in c})


def vocabulary_of(
    articles: Iterable[Article], tickets: Iterable[Ticket], min_quality: float
) -> CorpusVocabulary:
    """The searchable words of these records: published articles, resolved tickets of at least
    `min_quality` (what the rankers admit besides audience and locale)."""
    rows = [
        (a.audience, a.locale, article_words(a.title, a.tags, a.body))
        for a in articles
        if a.status == PUBLISHED
    ]
    rows += [
        (t.audience, t.locale, ticket_words(t.subject, t.symptom, t.resolution))
        for t in tickets
        if t.status == RESOLVED and t.quality >= min_quality
    ]
    return CorpusVocabulary.from_texts(rows)


def article_words(title: str, tags: Iterable[str], body: str) -> str:
    """The searchable text of an article, for counting its words."""
    return "\n".join([title, " ".join(tags), body])


def ticket_words(subject: str, symptom: str, resolution: str) -> str:
    """The searchable text of a resolved ticket, for counting its words."""
    return "\n".join([subject, symptom, resolution])
