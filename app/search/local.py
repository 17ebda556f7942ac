"""`LocalSearch`: the embedded default's in-process equivalent of the three Atlas indexes.

- Dense rankers: exact cosine over the stored vectors with numpy (the corpus is small; exact
  search is both faster to build and more accurate than an ANN graph at this size).
- BM25 over whole articles with `bm25s`, one index per field, combined as
  `t·BM25(title) + g·BM25(tags) + BM25(body)` (boosts t, g from tuning: 0.5, swept on external
  data whose passages open with their title, and DESIGN's 2, which no external set can move:
  its passages have no tags; k1 and b from tuning, Lucene's defaults). This is what the Atlas
  compound query computes (the sum of its `should` clause scores, each multiplied by its boost),
  and unlike repeating the title three times in one field it neither distorts body length
  normalisation nor lets BM25's term-frequency saturation swallow the boost.
- An article hit is represented by its best chunk: BM25 over all chunks (IDF from the whole
  chunk corpus, so a rare code weighs what it should), arg-max over that article's chunks;
  when no chunk matches a term (the hit came from the title or tags) its first chunk.

The entitlement filter becomes a boolean mask computed *before* top-k: only rows it admits are
candidates for the cut (similarities are computed for the whole matrix in one product, which is
cheaper than gathering the admitted rows first, but a masked row is never selected), and BM25
hits with score ≤ 0 (no query term at all) are dropped, so the zero-score padding a top-k over
the whole corpus would return can never surface a filtered-out or unrelated document. Masks are
cached per filter on the snapshot: a deployment has a handful of distinct filters.

The index is an immutable snapshot: `refresh()` builds a new one from the store and swaps it in,
so a query never sees a half-built index. Call it after ingestion.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import bm25s
import numpy as np
import numpy.typing as npt

from app.language.analyzer import (
    ANALYZER_VERSION,
    analyze,
    field_tokens,
    query_terms,
    tag_terms,
)
from app.search.base import Hit, SearchError, cosine_to_score, ticket_breadcrumb, ticket_text
from app.search.filters import SearchFilter
from app.search.vocabulary import CorpusVocabulary, vocabulary_of
from app.store.models import Article, Chunk, Ticket
from tuning import TUNING, Tuning

if TYPE_CHECKING:
    from app.store import Store

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
VECTOR_CACHE_ROWS = 2048  # hit vectors kept as tuples per snapshot (~12 KB a row at 384-d)


class _FieldIndex:
    """BM25 over one text field of a fixed list of documents."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float, b: float) -> None:
        self.size = len(docs)
        self._bm25: bm25s.BM25 | None = None
        if any(docs):  # bm25s divides by the mean document length
            self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            self._bm25.index([list(d) for d in docs], show_progress=False)

    def scores(self, query: Sequence[str]) -> FloatArray:
        if self._bm25 is None or not query:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(list(query)), dtype=np.float32)


def _unit_rows(vectors: Sequence[Sequence[float]]) -> tuple[FloatArray, BoolArray, int]:
    """Stack vectors into unit rows; rows of another width (or empty) are marked unusable."""
    widths = Counter(len(v) for v in vectors if v)
    dim = widths.most_common(1)[0][0] if widths else 0
    matrix = np.zeros((len(vectors), dim), dtype=np.float32)
    usable = np.zeros(len(vectors), dtype=bool)
    for i, v in enumerate(vectors):
        if dim and len(v) == dim:
            row = np.asarray(v, dtype=np.float32)
            norm = float(np.linalg.norm(row))
            if norm > 0:
                matrix[i] = row / norm
                usable[i] = True
    skipped = sum(1 for v in vectors if v and len(v) != dim)
    if skipped:
        log.warning("LocalSearch: %d vectors of a width other than %d ignored", skipped, dim)
    return matrix, usable, dim


def _strings(values: Sequence[str]) -> npt.NDArray[np.str_]:
    return np.asarray(list(values), dtype=np.str_) if values else np.asarray([], dtype=np.str_)


@dataclass(frozen=True)
class _DensePlan:
    """What one filter reads of the partitioned chunk vectors."""

    spans: tuple[tuple[int, int], ...]  # admitted partitions, as slices of the stored order
    positions: npt.NDArray[np.intp]  # stored positions of admitted usable rows, by row
    rows: npt.NDArray[np.intp]  # those rows, ascending


def _partition(
    vecs: FloatArray, keys: Sequence[tuple[str, str, str]]
) -> tuple[FloatArray, npt.NDArray[np.intp], dict[tuple[str, str, str], tuple[int, int]]]:
    """Rows grouped by partition key (stable: row order kept inside a partition)."""
    order = sorted(range(len(keys)), key=lambda r: keys[r])
    perm = np.asarray(order, dtype=np.intp)
    pos = np.empty(len(keys), dtype=np.intp)
    pos[perm] = np.arange(len(keys), dtype=np.intp)
    parts: dict[tuple[str, str, str], tuple[int, int]] = {}
    for i, r in enumerate(order):
        start, _ = parts.get(keys[r], (i, i))
        parts[keys[r]] = (start, i + 1)
    return np.ascontiguousarray(vecs[perm]), pos, parts


@dataclass(frozen=True)
class _Snapshot:
    articles: tuple[Article, ...]
    chunks: tuple[Chunk, ...]
    tickets: tuple[Ticket, ...]
    article_titles: dict[str, str]
    # chunks: vectors stored grouped by (status, locale, audience) partition, so a filter reads
    # only the partitions it admits; `chunk_pos[row]` is a chunk row's place in that order
    chunk_vecs: FloatArray
    chunk_pos: npt.NDArray[np.intp]
    chunk_parts: dict[tuple[str, str, str], tuple[int, int]]
    chunk_usable: BoolArray
    chunk_dim: int
    chunk_audience: npt.NDArray[np.str_]
    chunk_locale: npt.NDArray[np.str_]
    chunk_status: npt.NDArray[np.str_]
    chunk_bm25: _FieldIndex
    chunks_of: dict[str, list[int]]  # article id -> chunk rows in chunkIndex order
    # articles
    title_bm25: _FieldIndex
    tags_bm25: _FieldIndex
    body_bm25: _FieldIndex
    article_audience: npt.NDArray[np.str_]
    article_locale: npt.NDArray[np.str_]
    article_status: npt.NDArray[np.str_]
    # tickets
    ticket_vecs: FloatArray
    ticket_usable: BoolArray
    ticket_dim: int
    ticket_audience: npt.NDArray[np.str_]
    ticket_locale: npt.NDArray[np.str_]
    ticket_status: npt.NDArray[np.str_]
    ticket_quality: npt.NDArray[np.float64]  # float64: a quality of exactly 0.7 must pass ≥ 0.7
    masks: dict[tuple[object, ...], BoolArray] = field(default_factory=dict)
    plans: dict[object, _DensePlan] = field(default_factory=dict)
    # hits carry their row's vector as a tuple (for the reranker); the same rows come back turn
    # after turn, and converting 384 floats was a measurable share of a turn's CPU
    vectors: dict[tuple[str, int], tuple[float, ...] | None] = field(default_factory=dict)

    def mask(self, key: tuple[object, ...], build: Callable[[], BoolArray]) -> BoolArray:
        """The filter mask for `key`, built once per snapshot (read-only)."""
        cached = self.masks.get(key)
        if cached is None:
            if len(self.masks) >= 256:  # bounded: filters come from a small closed set
                self.masks.clear()
            cached = build()
            cached.setflags(write=False)
            self.masks[key] = cached
        return cached

    def vector(self, kind: str, row: int) -> tuple[float, ...] | None:
        """A chunk's or ticket's unit vector as a tuple (None when it has none), cached."""
        key = (kind, row)
        if key in self.vectors:
            return self.vectors[key]
        if kind == "doc":
            vec = (
                tuple(self.chunk_vecs[self.chunk_pos[row]].tolist())
                if self.chunk_usable[row]
                else None
            )
        else:
            vec = tuple(self.ticket_vecs[row].tolist()) if self.ticket_usable[row] else None
        if len(self.vectors) >= VECTOR_CACHE_ROWS:
            self.vectors.clear()
        self.vectors[key] = vec
        return vec


def _article_terms(article: Article) -> tuple[list[str], list[str], list[str]]:
    """Title, tags and body tokens: the stored `searchTerms` Atlas indexes, read as
    `lucene.whitespace` reads them (recomputed only when absent or of another analyzer,
    straight to tokens: `field_tokens(analyzed_field(x)) == analyze(x)`)."""
    stored = article.search_terms
    if stored is None or stored.version != ANALYZER_VERSION:
        return analyze(article.title), tag_terms(article.tags), analyze(article.body)
    return field_tokens(stored.title), field_tokens(stored.tags), field_tokens(stored.body)


def _snapshot(
    articles: Sequence[Article],
    chunks: Sequence[Chunk],
    tickets: Sequence[Ticket],
    tuning: Tuning = TUNING,
) -> _Snapshot:
    articles = tuple(sorted(articles, key=lambda a: a.id))
    chunks = tuple(sorted(chunks, key=lambda c: (c.article_id, c.chunk_index)))
    tickets = tuple(sorted(tickets, key=lambda t: t.id))
    chunk_vecs, chunk_usable, chunk_dim = _unit_rows([c.embedding for c in chunks])
    chunk_vecs, chunk_pos, chunk_parts = _partition(
        chunk_vecs, [(c.status, c.locale, c.audience) for c in chunks]
    )
    ticket_vecs, ticket_usable, ticket_dim = _unit_rows([t.embedding for t in tickets])
    chunks_of: dict[str, list[int]] = {}
    for row, c in enumerate(chunks):
        chunks_of.setdefault(c.article_id, []).append(row)
    article_terms = [_article_terms(a) for a in articles]
    k1, b = tuning.bm25_k1, tuning.bm25_b
    return _Snapshot(
        articles=articles,
        chunks=chunks,
        tickets=tickets,
        article_titles={a.id: a.title for a in articles},
        chunk_vecs=chunk_vecs,
        chunk_pos=chunk_pos,
        chunk_parts=chunk_parts,
        chunk_usable=chunk_usable,
        chunk_dim=chunk_dim,
        chunk_audience=_strings([c.audience for c in chunks]),
        chunk_locale=_strings([c.locale for c in chunks]),
        chunk_status=_strings([c.status for c in chunks]),
        chunk_bm25=_FieldIndex([analyze(f"{c.breadcrumb}\n{c.text}") for c in chunks], k1, b),
        chunks_of=chunks_of,
        title_bm25=_FieldIndex([title for title, _, _ in article_terms], k1, b),
        tags_bm25=_FieldIndex([tags for _, tags, _ in article_terms], k1, b),
        body_bm25=_FieldIndex([body for _, _, body in article_terms], k1, b),
        article_audience=_strings([a.audience for a in articles]),
        article_locale=_strings([a.locale for a in articles]),
        article_status=_strings([a.status for a in articles]),
        ticket_vecs=ticket_vecs,
        ticket_usable=ticket_usable,
        ticket_dim=ticket_dim,
        ticket_audience=_strings([t.audience for t in tickets]),
        ticket_locale=_strings([t.locale for t in tickets]),
        ticket_status=_strings([t.status for t in tickets]),
        ticket_quality=np.asarray([t.quality for t in tickets], dtype=np.float64),
    )


def _doc_mask(
    filt: SearchFilter,
    audience: npt.NDArray[np.str_],
    locale: npt.NDArray[np.str_],
    status: npt.NDArray[np.str_],
) -> BoolArray:
    mask = np.isin(audience, list(filt.audiences)) & (status == filt.status)
    if filt.locale is not None:
        mask &= locale == filt.locale
    return np.asarray(mask, dtype=bool)


def _top(scores: FloatArray, rows: npt.NDArray[np.intp], limit: int) -> list[tuple[int, float]]:
    """The `limit` best (row, score) among `rows` (ascending), ties broken by row order."""
    if limit <= 0 or rows.size == 0:
        return []
    return _top_of(scores[rows], rows, limit)


def _top_of(sub: FloatArray, rows: npt.NDArray[np.intp], limit: int) -> list[tuple[int, float]]:
    """`_top` with `sub[i]` the score of `rows[i]`.

    Linear, not a full sort: a partition finds the `limit`-th best score, and only the rows
    scoring at least that (ties included, so the cut is exact) are sorted.
    """
    if limit <= 0 or rows.size == 0:
        return []
    if limit < sub.size:
        kth = np.partition(-sub, limit - 1)[limit - 1]
        candidates = np.flatnonzero(-sub <= kth)
    else:
        candidates = np.arange(sub.size)
    order = candidates[np.argsort(-sub[candidates], kind="stable")][:limit]
    return [(int(rows[i]), float(sub[i])) for i in order]


def _query_vector(vector: Sequence[float], dim: int) -> FloatArray:
    q = np.asarray(vector, dtype=np.float32)
    if q.ndim != 1 or q.shape[0] != dim:
        raise SearchError(f"query vector has width {q.shape[-1] if q.ndim else 0}, index {dim}")
    norm = float(np.linalg.norm(q))
    if not np.isfinite(norm) or norm == 0:
        raise SearchError("query vector is zero or not finite")
    return q / norm


class LocalSearch:
    """In-process dense + BM25 search with Atlas's filter semantics. See the module docstring."""

    name = "local"

    def __init__(
        self,
        articles: Sequence[Article] = (),
        chunks: Sequence[Chunk] = (),
        tickets: Sequence[Ticket] = (),
        *,
        tuning: Tuning = TUNING,
        store: Store | None = None,
    ) -> None:
        self._tuning = tuning
        self._store = store
        self._snap = _snapshot(articles, chunks, tickets, self._tuning)
        self._vocabulary: CorpusVocabulary | None = None

    @classmethod
    async def build(cls, store: Store, tuning: Tuning = TUNING) -> LocalSearch:
        """Index everything currently in the store's knowledge collections."""
        search = cls(tuning=tuning, store=store)
        await search.refresh()
        return search

    def describe(self) -> str:
        """What the in-process indexes hold (for `make indexes` and logs)."""
        snap = self._snap
        return (
            f"dense: {len(snap.chunks)} chunk vectors ({snap.chunk_dim}-d) and "
            f"{len(snap.tickets)} ticket vectors; BM25: {len(snap.articles)} articles "
            f"(title x{self._tuning.bm25_title_boost:g}, tags x{self._tuning.bm25_tags_boost:g}, "
            f"body; stored searchTerms, analyzer v{ANALYZER_VERSION}) + chunk index for "
            "article→chunk mapping; "
            "filters: audience, locale, status, ticket quality — applied before top-k"
        )

    async def refresh(self) -> None:
        """Rebuild from the store (after ingestion) and swap the new snapshot in atomically."""
        if self._store is None:
            raise SearchError("this LocalSearch was built from records, not from a store")
        articles = await self._store.articles.list()
        chunks = await self._store.chunks.all()
        tickets = await self._store.tickets.all()
        self._snap = _snapshot(articles, chunks, tickets, self._tuning)
        self._vocabulary = None
        log.info(
            "LocalSearch indexed %d articles, %d chunks, %d tickets",
            len(articles),
            len(chunks),
            len(tickets),
        )

    async def refresh_tickets(self) -> None:
        """Re-read only the tickets (a resolution became knowledge, or one was edited): the
        article and chunk indexes are kept, so a new ticket is searchable at once and cheaply."""
        if self._store is None:
            raise SearchError("this LocalSearch was built from records, not from a store")
        tickets = await self._store.tickets.all()
        fresh = _snapshot((), (), tickets, self._tuning)
        old = self._snap
        self._snap = replace(
            old,
            tickets=fresh.tickets,
            ticket_vecs=fresh.ticket_vecs,
            ticket_usable=fresh.ticket_usable,
            ticket_dim=fresh.ticket_dim,
            ticket_audience=fresh.ticket_audience,
            ticket_locale=fresh.ticket_locale,
            ticket_status=fresh.ticket_status,
            ticket_quality=fresh.ticket_quality,
            masks={},  # ticket masks are cached per filter: a new snapshot starts empty
            plans=dict(old.plans),
            vectors={k: v for k, v in old.vectors.items() if k[0] == "doc"},  # rows moved
        )
        self._vocabulary = None
        log.info("LocalSearch re-indexed %d tickets", len(tickets))

    async def vocabulary(self) -> CorpusVocabulary:
        """The words of the indexed corpus (built on first use after each refresh)."""
        if self._vocabulary is None:
            snap = self._snap
            self._vocabulary = vocabulary_of(
                snap.articles, snap.tickets, self._tuning.ticket_min_quality
            )
        return self._vocabulary

    @property
    def counts(self) -> dict[str, int]:
        s = self._snap
        return {"articles": len(s.articles), "chunks": len(s.chunks), "tickets": len(s.tickets)}

    def _chunk_hit(self, row: int, score: float) -> Hit:
        c = self._snap.chunks[row]
        return Hit(
            passage_id=c.id,
            kind="doc",
            doc_id=c.article_id,
            title=c.title or self._snap.article_titles.get(c.article_id, ""),
            breadcrumb=c.breadcrumb,
            text=c.text,
            score=score,
            audience=c.audience,
            locale=c.locale,
            page=c.page,
            vector=self._snap.vector("doc", row),
        )

    async def dense_chunks(
        self, vector: Sequence[float], filt: SearchFilter, limit: int, num_candidates: int
    ) -> list[Hit]:
        s = self._snap
        if not s.chunks or not s.chunk_dim:
            return []
        q = _query_vector(vector, s.chunk_dim)
        plan = self._dense_plan(filt)
        # only the partitions the filter admits are multiplied: entitlement shrinks the work
        sims = np.empty(len(s.chunks), dtype=np.float32)
        for start, end in plan.spans:
            sims[start:end] = s.chunk_vecs[start:end] @ q
        top = _top_of(sims[plan.positions], plan.rows, limit)
        return [self._chunk_hit(r, cosine_to_score(sc)) for r, sc in top]

    def _dense_plan(self, filt: SearchFilter) -> _DensePlan:
        s = self._snap
        plan = s.plans.get(filt)
        if plan is None:
            mask = _doc_mask(filt, s.chunk_audience, s.chunk_locale, s.chunk_status)
            rows = np.flatnonzero(mask & s.chunk_usable)
            spans = tuple(
                span
                for (status, locale, audience), span in sorted(s.chunk_parts.items())
                if status == filt.status
                and audience in filt.audiences
                and (filt.locale is None or locale == filt.locale)
            )
            plan = _DensePlan(spans=spans, positions=s.chunk_pos[rows], rows=rows)
            if len(s.plans) >= 256:  # bounded: filters come from a small closed set
                s.plans.clear()
            s.plans[filt] = plan
        return plan

    async def bm25_articles(self, text: str, filt: SearchFilter, limit: int) -> list[Hit]:
        s = self._snap
        query = query_terms(text)
        if not s.articles or not query:
            return []
        t = self._tuning
        scores = (
            t.bm25_title_boost * s.title_bm25.scores(query)
            + t.bm25_tags_boost * s.tags_bm25.scores(query)
            + s.body_bm25.scores(query)
        )
        mask = s.mask(
            ("articles", filt),
            lambda: _doc_mask(filt, s.article_audience, s.article_locale, s.article_status),
        )
        rows = np.flatnonzero(mask & (scores > 0))
        chunk_scores = s.chunk_bm25.scores(query)
        chunk_mask = s.mask(
            ("chunks", filt),
            lambda: _doc_mask(filt, s.chunk_audience, s.chunk_locale, s.chunk_status),
        )
        hits: list[Hit] = []
        # the best few usually suffice; an article with no admissible chunk is skipped, so
        # widen to every matching article only when they did not
        ranked = _top(scores, rows, 2 * limit)
        if (
            len(ranked) < len(rows)
            and sum(
                any(chunk_mask[r] for r in s.chunks_of.get(s.articles[row].id, []))
                for row, _ in ranked
            )
            < limit
        ):
            ranked = _top(scores, rows, len(rows))
        for row, score in ranked:
            article = s.articles[row]
            # only chunks the filter admits: a stale chunk never speaks for its article
            candidates = [r for r in s.chunks_of.get(article.id, []) if chunk_mask[r]]
            if not candidates:
                log.debug("article %s matched but has no admissible chunks", article.id)
                continue
            best = max(candidates, key=lambda r: (float(chunk_scores[r]), -r))
            hits.append(self._chunk_hit(best, score))
            if len(hits) >= limit:
                break
        return hits

    async def dense_tickets(
        self,
        vector: Sequence[float],
        filt: SearchFilter,
        limit: int,
        min_quality: float,
        num_candidates: int | None = None,
    ) -> list[Hit]:
        s = self._snap
        if not s.tickets or not s.ticket_dim:
            return []
        q = _query_vector(vector, s.ticket_dim)

        def build() -> BoolArray:
            mask = (
                np.isin(s.ticket_audience, list(filt.audiences))
                & (s.ticket_status == filt.ticket_status)
                & (s.ticket_quality >= min_quality)
                & s.ticket_usable
            )
            if filt.locale is not None:
                mask &= s.ticket_locale == filt.locale
            return np.asarray(mask, dtype=bool)

        rows = np.flatnonzero(s.mask(("tickets", filt, min_quality), build))
        sims = s.ticket_vecs @ q
        hits = []
        for row, sim in _top(sims, rows, limit):
            t = s.tickets[row]
            hits.append(
                Hit(
                    passage_id=t.id,
                    kind="ticket",
                    doc_id=t.id,
                    title=t.subject,
                    breadcrumb=ticket_breadcrumb(t.product),
                    text=ticket_text(t.symptom, t.resolution),
                    score=cosine_to_score(sim),
                    audience=t.audience,
                    locale=t.locale,
                    resolved_at=t.resolved_at,
                    vector=s.vector("ticket", row),
                )
            )
        return hits
