"""`AtlasSearch`: the three rankers as `$vectorSearch` / `$search` pipelines run by the cluster.

The pipeline builders are pure functions (unit-tested stage by stage). The entitlement filter is
always *inside* the search stage — `$vectorSearch.filter`, and the `filter` clause of the
`$search` compound — never a later `$match`, which would shrink the page instead of changing it.

Article → best chunk (DESIGN 5.3): the `$search` stage asks for highlights on the analysed body
(`searchTerms.body`, see `app/language/analyzer.py`), and the
same pipeline `$lookup`s the article's chunks (the same filter again, embeddings projected out).
The chunk whose words best cover the highest-scoring highlight passages wins; when the match was
in the title or tags only (no body highlight), the chunk sharing most query terms, else the first.
One round trip, no second query per article, and no text index needed on `kb_chunks`.

Production parity (issue 12): `exact: true` (ENN, like LocalSearch) while a collection is
small, ANN with numCandidates ≥ 20× `limit` above it; a live-state `$match` after each
`$vectorSearch` (search indexes are eventually consistent: a just-unpublished article can still
come back from the index for a while; the filter stays inside the stage, the `$match` only
removes what the index has not caught up with); BM25 over-fetches before `$lookup` and drops
articles with no admissible chunk before cutting to `limit`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from app.language.analyzer import analyze, field_tokens, query_terms
from app.search.base import Hit, SearchError, ticket_breadcrumb, ticket_text
from app.search.filters import PUBLISHED, RESOLVED, SearchFilter
from app.search.vocabulary import CorpusVocabulary, article_words, ticket_words
from tuning import TUNING, Tuning

log = logging.getLogger(__name__)

CHUNKS_VECTOR_INDEX = "kb_chunks_vector"
ARTICLES_SEARCH_INDEX = "kb_articles_search"
TICKETS_VECTOR_INDEX = "tickets_vector"
MAX_NUM_CANDIDATES = 10_000  # Atlas's ceiling for numCandidates
SIZE_TTL_S = 300.0  # how long a collection's document count decides exact vs ANN
VOCABULARY_TTL_S = 600.0  # how long the corpus words are reused before they are read again

Doc = dict[str, Any]
Pipeline = list[Doc]


# --- filters -------------------------------------------------------------------------------


def doc_vector_filter(filt: SearchFilter) -> Doc:
    """`$vectorSearch.filter` for `kb_chunks` (MQL subset: $in, $eq, $and)."""
    clauses: list[Doc] = [
        {"audience": {"$in": list(filt.audiences)}},
        {"status": {"$eq": filt.status}},
    ]
    if filt.locale is not None:
        clauses.append({"locale": {"$eq": filt.locale}})
    return {"$and": clauses}


def ticket_vector_filter(filt: SearchFilter, min_quality: float) -> Doc:
    """`$vectorSearch.filter` for `tickets`: resolved, good enough, entitled, same locale."""
    clauses: list[Doc] = [
        {"audience": {"$in": list(filt.audiences)}},
        {"status": {"$eq": filt.ticket_status}},
        {"quality": {"$gte": min_quality}},
    ]
    if filt.locale is not None:
        clauses.append({"locale": {"$eq": filt.locale}})
    return {"$and": clauses}


def doc_live_match(filt: SearchFilter) -> Doc:
    """The same conditions as `doc_vector_filter`, on the documents as they are now."""
    match: Doc = {"audience": {"$in": list(filt.audiences)}, "status": filt.status}
    if filt.locale is not None:
        match["locale"] = filt.locale
    return match


def ticket_live_match(filt: SearchFilter, min_quality: float) -> Doc:
    match: Doc = {
        "audience": {"$in": list(filt.audiences)},
        "status": filt.ticket_status,
        "quality": {"$gte": min_quality},
    }
    if filt.locale is not None:
        match["locale"] = filt.locale
    return match


def search_filter_clauses(filt: SearchFilter) -> list[Doc]:
    """The compound `filter` clause: `in`/`equals` on fields mapped as `token`."""
    clauses: list[Doc] = [
        {"in": {"path": "audience", "value": list(filt.audiences)}},
        {"equals": {"path": "status", "value": filt.status}},
    ]
    if filt.locale is not None:
        clauses.append({"equals": {"path": "locale", "value": filt.locale}})
    return clauses


# --- pipelines -----------------------------------------------------------------------------


def _num_candidates(limit: int, num_candidates: int, per_limit: int = 1) -> int:
    return min(max(num_candidates, limit * per_limit, limit), MAX_NUM_CANDIDATES)


def vector_breadth(
    limit: int,
    num_candidates: int,
    *,
    exact: bool = False,
    per_limit: int = TUNING.atlas_candidates_per_limit,
) -> Doc:
    """`exact: true` (ENN: no numCandidates allowed), else ANN with numCandidates at least
    `per_limit` × limit and at least `num_candidates`, capped at Atlas's ceiling."""
    if exact:
        return {"exact": True}
    return {"numCandidates": _num_candidates(limit, num_candidates, per_limit)}


def dense_chunks_pipeline(
    vector: Sequence[float],
    filt: SearchFilter,
    limit: int,
    num_candidates: int,
    *,
    exact: bool = False,
    per_limit: int = TUNING.atlas_candidates_per_limit,
) -> Pipeline:
    return [
        {
            "$vectorSearch": {
                "index": CHUNKS_VECTOR_INDEX,
                "path": "embedding",
                "queryVector": [float(x) for x in vector],
                **vector_breadth(limit, num_candidates, exact=exact, per_limit=per_limit),
                "limit": limit,
                "filter": doc_vector_filter(filt),
            }
        },
        {"$match": doc_live_match(filt)},
        {
            "$project": {
                "_id": 1,
                "articleId": 1,
                "chunkIndex": 1,
                "text": 1,
                "breadcrumb": 1,
                "page": 1,
                "title": 1,
                "audience": 1,
                "locale": 1,
                "score": {"$meta": "vectorSearchScore"},
            }
        },
    ]


def dense_tickets_pipeline(
    vector: Sequence[float],
    filt: SearchFilter,
    limit: int,
    min_quality: float,
    num_candidates: int,
    *,
    exact: bool = False,
    per_limit: int = TUNING.atlas_candidates_per_limit,
) -> Pipeline:
    return [
        {
            "$vectorSearch": {
                "index": TICKETS_VECTOR_INDEX,
                "path": "embedding",
                "queryVector": [float(x) for x in vector],
                **vector_breadth(limit, num_candidates, exact=exact, per_limit=per_limit),
                "limit": limit,
                "filter": ticket_vector_filter(filt, min_quality),
            }
        },
        {"$match": ticket_live_match(filt, min_quality)},
        {
            "$project": {
                "_id": 1,
                "subject": 1,
                "symptom": 1,
                "resolution": 1,
                "product": 1,
                "audience": 1,
                "locale": 1,
                "resolvedAt": 1,
                "score": {"$meta": "vectorSearchScore"},
            }
        },
    ]


# The analysed fields `ArticleRepo.upsert` stores, indexed with `lucene.whitespace`.
TITLE_TERMS = "searchTerms.title"
TAGS_TERMS = "searchTerms.tags"
BODY_TERMS = "searchTerms.body"


def articles_compound(text: str, filt: SearchFilter, title_boost: float, tags_boost: float) -> Doc:
    """title ×t, tags ×g, body ×1 over the stored analysed fields; at least one must match.

    The query is analysed here by the analyzer that produced the stored fields, and joined by
    spaces for `lucene.whitespace` to split again: Atlas matches exactly the tokens
    `LocalSearch` matches (see `app/language/analyzer.py`)."""
    query = " ".join(query_terms(text))
    should: list[Doc] = [
        {"text": {"query": query, "path": TITLE_TERMS, "score": {"boost": {"value": title_boost}}}},
        {"text": {"query": query, "path": TAGS_TERMS, "score": {"boost": {"value": tags_boost}}}},
        {"text": {"query": query, "path": BODY_TERMS}},
    ]
    return {"should": should, "minimumShouldMatch": 1, "filter": search_filter_clauses(filt)}


def bm25_articles_pipeline(
    text: str,
    filt: SearchFilter,
    limit: int,
    *,
    title_boost: float,
    tags_boost: float,
    overfetch: int = TUNING.atlas_bm25_overfetch,
    highlight_passages: int = TUNING.atlas_highlight_passages,
) -> Pipeline:
    """Top articles by BM25 with body highlights and their admissible chunks attached.

    `overfetch` × limit articles go into the `$lookup`; those left with no admissible chunk
    (unpublished, another audience or locale since the index last caught up) drop out before
    the cut to `limit`, so a page is not short by the articles that had nothing to give."""
    chunk_match: Doc = {
        "$expr": {"$eq": ["$articleId", "$$aid"]},
        "audience": {"$in": list(filt.audiences)},
        "status": filt.status,
    }
    if filt.locale is not None:
        chunk_match["locale"] = filt.locale
    return [
        {
            "$search": {
                "index": ARTICLES_SEARCH_INDEX,
                "compound": articles_compound(text, filt, title_boost, tags_boost),
                "highlight": {"path": BODY_TERMS, "maxNumPassages": highlight_passages},
            }
        },
        {"$limit": limit * max(1, overfetch)},
        {
            "$project": {
                "_id": 1,
                "title": 1,
                "audience": 1,
                "locale": 1,
                "score": {"$meta": "searchScore"},
                "highlights": {"$meta": "searchHighlights"},
            }
        },
        {
            "$lookup": {
                "from": "kb_chunks",
                "let": {"aid": "$_id"},
                "pipeline": [
                    {"$match": chunk_match},
                    {"$sort": {"chunkIndex": 1}},
                    {
                        "$project": {
                            "_id": 1,
                            "chunkIndex": 1,
                            "text": 1,
                            "breadcrumb": 1,
                            "page": 1,
                            "title": 1,
                            "audience": 1,
                            "locale": 1,
                        }
                    },
                ],
                "as": "chunks",
            }
        },
        {"$match": {"chunks.0": {"$exists": True}}},
        {"$limit": limit},
    ]


# --- results -------------------------------------------------------------------------------


def _highlight_text(highlight: Mapping[str, Any]) -> str:
    return "".join(str(t.get("value", "")) for t in highlight.get("texts", []))


def pick_chunk(
    highlights: Sequence[Mapping[str, Any]], chunks: Sequence[Mapping[str, Any]], query: str
) -> Mapping[str, Any] | None:
    """The chunk that best represents an article hit (see the module docstring).

    Highlights come from the analysed body (`searchTerms.body`), so a passage is a line of
    tokens; chunks are analysed by the same analyzer before they are compared with it."""
    if not chunks:
        return None
    chunk_terms = [set(analyze(f"{c.get('breadcrumb', '')}\n{c.get('text', '')}")) for c in chunks]
    scores = [0.0] * len(chunks)
    for h in highlights:
        if h.get("path") not in (None, BODY_TERMS):
            continue
        passage = set(field_tokens(_highlight_text(h)))
        if not passage:
            continue
        weight = float(h.get("score", 1.0) or 1.0)
        for i, terms in enumerate(chunk_terms):
            scores[i] += weight * len(passage & terms) / len(passage)
    if max(scores) <= 0:
        wanted = set(query_terms(query))
        scores = [float(len(wanted & terms)) for terms in chunk_terms]
    best = max(range(len(chunks)), key=lambda i: (scores[i], -i))
    return chunks[best]


def _title_from(doc: Mapping[str, Any]) -> str:
    title = str(doc.get("title") or "")
    return title or str(doc.get("breadcrumb", "")).split(" › ", 1)[0]


def chunk_hit(doc: Mapping[str, Any]) -> Hit:
    return Hit(
        passage_id=str(doc["_id"]),
        kind="doc",
        doc_id=str(doc.get("articleId", str(doc["_id"]).split("#", 1)[0])),
        title=_title_from(doc),
        breadcrumb=str(doc.get("breadcrumb", "")),
        text=str(doc.get("text", "")),
        score=float(doc.get("score", 0.0)),
        audience=str(doc.get("audience", "all")),
        locale=str(doc.get("locale", "en")),
        page=_page(doc),
    )


def _page(chunk: Mapping[str, Any]) -> int | None:
    page = chunk.get("page")
    return page if isinstance(page, int) and not isinstance(page, bool) else None


def article_hit(doc: Mapping[str, Any], query: str) -> Hit | None:
    chunk = pick_chunk(doc.get("highlights") or [], doc.get("chunks") or [], query)
    if chunk is None:
        return None
    return Hit(
        passage_id=str(chunk["_id"]),
        kind="doc",
        doc_id=str(doc["_id"]),
        title=str(doc.get("title") or _title_from(chunk)),
        breadcrumb=str(chunk.get("breadcrumb", "")),
        text=str(chunk.get("text", "")),
        score=float(doc.get("score", 0.0)),
        audience=str(chunk.get("audience", doc.get("audience", "all"))),
        locale=str(chunk.get("locale", doc.get("locale", "en"))),
        page=_page(chunk),
    )


def ticket_hit(doc: Mapping[str, Any]) -> Hit:
    return Hit(
        passage_id=str(doc["_id"]),
        kind="ticket",
        doc_id=str(doc["_id"]),
        title=str(doc.get("subject", "")),
        breadcrumb=ticket_breadcrumb(str(doc.get("product", ""))),
        text=ticket_text(str(doc.get("symptom", "")), str(doc.get("resolution", ""))),
        score=float(doc.get("score", 0.0)),
        audience=str(doc.get("audience", "all")),
        locale=str(doc.get("locale", "en")),
        resolved_at=doc.get("resolvedAt"),
    )


class AtlasSearch:
    """Runs the pipelines above on a cluster with `mongot` (Atlas, or MongoDB 8.2+)."""

    name = "atlas"

    def __init__(self, db: Any, tuning: Tuning = TUNING) -> None:
        self._db = db
        self._tuning = tuning
        self._sizes: dict[str, tuple[float, int | None]] = {}  # collection -> (when, count)
        self._vocabulary: tuple[float, CorpusVocabulary] | None = None

    async def refresh(self) -> None:
        """After (re-)ingesting: recount, so exact vs ANN follows the corpus size, and re-read
        the corpus words."""
        self._sizes.clear()
        self._vocabulary = None

    async def vocabulary(self) -> CorpusVocabulary:
        """The words of the searchable corpus, read from the collections (one projected scan of
        each, reused for `VOCABULARY_TTL_S`). Atlas Search's `fuzzy` option would repair a typo
        for the lexical ranker alone; repairing the query before it is searched serves the dense
        rankers too, and the same way on both backends."""
        now = time.monotonic()
        if self._vocabulary is not None and now - self._vocabulary[0] < VOCABULARY_TTL_S:
            return self._vocabulary[1]
        rows: list[tuple[str, str, str]] = []
        try:
            articles = self._db["kb_articles"].find(
                {"status": PUBLISHED},
                {"title": 1, "tags": 1, "body": 1, "audience": 1, "locale": 1},
            )
            async for a in articles:
                text = article_words(a.get("title", ""), a.get("tags", []), a.get("body", ""))
                rows.append((a.get("audience", "all"), a.get("locale", "en"), text))
            tickets = self._db["tickets"].find(
                {"status": RESOLVED, "quality": {"$gte": self._tuning.ticket_min_quality}},
                {"subject": 1, "symptom": 1, "resolution": 1, "audience": 1, "locale": 1},
            )
            async for t in tickets:
                parts = (t.get(k, "") for k in ("subject", "symptom", "resolution"))
                rows.append((t.get("audience", "all"), t.get("locale", "en"), ticket_words(*parts)))
        except Exception as exc:  # no repair is better than no answer
            log.warning("cannot read the corpus words: %s", exc)
            return self._vocabulary[1] if self._vocabulary else CorpusVocabulary({})
        vocab = CorpusVocabulary.from_texts(rows)
        self._vocabulary = (now, vocab)
        return vocab

    async def _exact(self, collection: str) -> bool:
        """ENN while the collection is under `atlas_exact_below_docs` (count cached a while);
        an unknown size (the count failed) means ANN, which works at any size."""
        now = time.monotonic()
        cached = self._sizes.get(collection)
        if cached is None or now - cached[0] > SIZE_TTL_S:
            try:
                count: int | None = int(await self._db[collection].estimated_document_count())
            except Exception as exc:
                log.debug("cannot count %s: %s", collection, exc)
                count = None
            cached = self._sizes[collection] = (now, count)
        return cached[1] is not None and cached[1] < self._tuning.atlas_exact_below_docs

    async def _run(self, collection: str, pipeline: Pipeline) -> list[Doc]:
        try:
            cursor = await self._db[collection].aggregate(pipeline)
            return list(await cursor.to_list())
        except Exception as exc:
            raise SearchError(f"{collection} search failed: {exc}") from exc

    async def dense_chunks(
        self, vector: Sequence[float], filt: SearchFilter, limit: int, num_candidates: int
    ) -> list[Hit]:
        pipeline = dense_chunks_pipeline(
            vector,
            filt,
            limit,
            num_candidates,
            exact=await self._exact("kb_chunks"),
            per_limit=self._tuning.atlas_candidates_per_limit,
        )
        docs = await self._run("kb_chunks", pipeline)
        return [chunk_hit(d) for d in docs]

    async def bm25_articles(self, text: str, filt: SearchFilter, limit: int) -> list[Hit]:
        if not query_terms(text):
            return []
        pipeline = bm25_articles_pipeline(
            text,
            filt,
            limit,
            title_boost=self._tuning.bm25_title_boost,
            tags_boost=self._tuning.bm25_tags_boost,
            overfetch=self._tuning.atlas_bm25_overfetch,
            highlight_passages=self._tuning.atlas_highlight_passages,
        )
        hits = []
        for doc in await self._run("kb_articles", pipeline):
            hit = article_hit(doc, text)
            if hit is None:
                log.debug("article %s matched but has no admissible chunks", doc.get("_id"))
            else:
                hits.append(hit)
        return hits

    async def dense_tickets(
        self,
        vector: Sequence[float],
        filt: SearchFilter,
        limit: int,
        min_quality: float,
        num_candidates: int | None = None,
    ) -> list[Hit]:
        candidates = num_candidates or self._tuning.vector_num_candidates
        pipeline = dense_tickets_pipeline(
            vector,
            filt,
            limit,
            min_quality,
            candidates,
            exact=await self._exact("tickets"),
            per_limit=self._tuning.atlas_candidates_per_limit,
        )
        return [ticket_hit(d) for d in await self._run("tickets", pipeline)]
