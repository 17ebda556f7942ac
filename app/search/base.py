"""The search interface both backends implement, and the hit they return.

Every method takes the entitlement `SearchFilter` and must apply it *inside* the ranking, before
the top-k cut: a backend may return fewer hits than `limit`, never a hit the filter excludes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from app.search.filters import SearchFilter
from app.search.vocabulary import CorpusVocabulary

Kind = Literal["doc", "ticket"]


class SearchError(Exception):
    """A search backend could not run a query (bad vector width, cluster error)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked passage: a chunk of a help article, or a resolved ticket.

    `passage_id` is the fusion key: the chunk id (`slug#i`) or the ticket id. A BM25 article hit
    carries the id of its best-matching chunk, so it fuses with a dense hit on that chunk.
    `score` is the ranker's own score (cosine mapped to [0, 1], or BM25): comparable only within
    one ranker, which is why fusion uses ranks. `vector` is the passage's stored embedding when
    the backend has it at hand (LocalSearch does; AtlasSearch projects vectors out), so the
    offline reranker need not embed the passage again.
    """

    passage_id: str
    kind: Kind
    doc_id: str
    title: str
    breadcrumb: str
    text: str
    score: float
    audience: str = "all"
    locale: str = "en"
    resolved_at: datetime | None = None
    page: int | None = None  # a PDF chunk's page, for the citation link
    vector: tuple[float, ...] | None = field(default=None, repr=False, compare=False)


@runtime_checkable
class SearchBackend(Protocol):
    """Three rankers over two corpora (DESIGN 5.3), each pre-filtered by entitlement."""

    name: str

    async def dense_chunks(
        self, vector: Sequence[float], filt: SearchFilter, limit: int, num_candidates: int
    ) -> list[Hit]:
        """Help-article chunks nearest to `vector` (cosine), best first."""
        ...

    async def bm25_articles(self, text: str, filt: SearchFilter, limit: int) -> list[Hit]:
        """Whole articles by BM25 (title ×3, tags ×2, body), each mapped to its best chunk."""
        ...

    async def dense_tickets(
        self,
        vector: Sequence[float],
        filt: SearchFilter,
        limit: int,
        min_quality: float,
        num_candidates: int | None = None,
    ) -> list[Hit]:
        """Resolved tickets of quality ≥ `min_quality` nearest to `vector`, best first."""
        ...

    async def vocabulary(self) -> CorpusVocabulary:
        """The words of the searchable corpus, per audience and locale (for typo repair)."""
        ...


def ticket_breadcrumb(product: str) -> str:
    return f"Resolved ticket › {product}" if product else "Resolved ticket"


def ticket_text(symptom: str, resolution: str) -> str:
    """What a ticket contributes as a passage: the symptom as reported, then the fix (if any)."""
    fix = resolution.strip()
    return f"{symptom.strip()}\n\nResolution: {fix}" if fix else symptom.strip()


def cosine_to_score(cosine: float) -> float:
    """Atlas reports cosine similarity as (1 + cos) / 2; LocalSearch reports the same."""
    return (1.0 + cosine) / 2.0
