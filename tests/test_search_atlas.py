"""AtlasSearch pipeline builders, stage by stage, and result mapping against a recording db."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.search.atlas import (
    ARTICLES_SEARCH_INDEX,
    CHUNKS_VECTOR_INDEX,
    TICKETS_VECTOR_INDEX,
    AtlasSearch,
    article_hit,
    bm25_articles_pipeline,
    chunk_hit,
    dense_chunks_pipeline,
    dense_tickets_pipeline,
    pick_chunk,
    ticket_hit,
    vector_breadth,
)
from app.search.base import SearchError
from app.search.filters import SearchFilter
from tuning import TUNING

PRO = SearchFilter(audiences=("all", "pro"), locale="en")


def _stages(pipeline: list[dict[str, Any]]) -> list[str]:
    return [next(iter(stage)) for stage in pipeline]


def test_dense_chunks_pipeline_filters_inside_vector_search() -> None:
    p = dense_chunks_pipeline([0.1, 0.2], PRO, 40, 200)
    assert _stages(p) == ["$vectorSearch", "$match", "$project"]
    vs = p[0]["$vectorSearch"]
    assert vs["index"] == CHUNKS_VECTOR_INDEX
    assert vs["path"] == "embedding"
    assert vs["queryVector"] == [0.1, 0.2]
    assert (vs["limit"], vs["numCandidates"]) == (40, 800)  # 20x limit beats the 200 asked for
    assert "exact" not in vs
    assert vs["filter"] == {
        "$and": [
            {"audience": {"$in": ["all", "pro"]}},
            {"status": {"$eq": "published"}},
            {"locale": {"$eq": "en"}},
        ]
    }
    project = p[2]["$project"]
    assert project["score"] == {"$meta": "vectorSearchScore"}
    assert "embedding" not in project  # inclusion projection: vectors never leave the cluster


@pytest.mark.parametrize(
    ("limit", "asked", "per_limit", "exact", "expected"),
    [
        (40, 200, 20, False, {"numCandidates": 800}),  # >= 20x limit (Atlas's advice)
        (40, 2000, 20, False, {"numCandidates": 2000}),  # asking for more is honoured
        (50, 10, 1, False, {"numCandidates": 50}),  # never below limit
        (40, 50_000, 20, False, {"numCandidates": 10_000}),  # Atlas's ceiling
        (600, 200, 20, False, {"numCandidates": 10_000}),
        (40, 200, 20, True, {"exact": True}),  # ENN: numCandidates must be absent
    ],
)
def test_vector_breadth_table(
    limit: int, asked: int, per_limit: int, exact: bool, expected: dict[str, Any]
) -> None:
    assert vector_breadth(limit, asked, exact=exact, per_limit=per_limit) == expected
    vs = dense_chunks_pipeline([1.0], PRO, limit, asked, exact=exact, per_limit=per_limit)[0]
    assert {k: v for k, v in vs["$vectorSearch"].items() if k in ("exact", "numCandidates")} == (
        expected
    )


def test_locale_none_omits_the_locale_condition() -> None:
    filt = SearchFilter(audiences=("all",), locale=None)
    clauses = dense_chunks_pipeline([1.0], filt, 5, 50)[0]["$vectorSearch"]["filter"]["$and"]
    assert not any("locale" in c for c in clauses)
    compound = bm25_articles_pipeline("x", filt, 5, title_boost=3, tags_boost=2)[0]["$search"]
    assert not any(
        c.get("equals", {}).get("path") == "locale" for c in compound["compound"]["filter"]
    )


def test_dense_tickets_pipeline_filters_status_quality_audience_locale() -> None:
    p = dense_tickets_pipeline([0.5], PRO, 20, 0.7, 200)
    assert _stages(p) == ["$vectorSearch", "$match", "$project"]
    vs = p[0]["$vectorSearch"]
    assert vs["index"] == TICKETS_VECTOR_INDEX
    assert vs["limit"] == 20
    assert vs["filter"] == {
        "$and": [
            {"audience": {"$in": ["all", "pro"]}},
            {"status": {"$eq": "resolved"}},
            {"quality": {"$gte": 0.7}},
            {"locale": {"$eq": "en"}},
        ]
    }
    assert p[1]["$match"] == {  # live state, after the (eventually consistent) index
        "audience": {"$in": ["all", "pro"]},
        "status": "resolved",
        "quality": {"$gte": 0.7},
        "locale": "en",
    }
    assert p[2]["$project"]["resolvedAt"] == 1
    assert "embedding" not in p[2]["$project"]


def test_bm25_pipeline_compound_with_boosts_and_filter_clause() -> None:
    p = bm25_articles_pipeline("AUTH_302 on sign in", PRO, 30, title_boost=3.0, tags_boost=2.0)
    assert _stages(p) == ["$search", "$limit", "$project", "$lookup", "$match", "$limit"]
    search = p[0]["$search"]
    assert search["index"] == ARTICLES_SEARCH_INDEX
    compound = search["compound"]
    should = {c["text"]["path"]: c["text"] for c in compound["should"]}
    # the stored analysed fields, queried with the query analysed by the same analyzer
    assert list(should) == ["searchTerms.title", "searchTerms.tags", "searchTerms.body"]
    assert should["searchTerms.title"]["score"] == {"boost": {"value": 3.0}}
    assert should["searchTerms.tags"]["score"] == {"boost": {"value": 2.0}}
    assert "score" not in should["searchTerms.body"]
    expected = "auth-302 auth302 auth 302 sign"
    assert {c["query"] for c in should.values()} == {expected}
    assert compound["minimumShouldMatch"] == 1  # the filter alone must not match everything
    assert compound["filter"] == [
        {"in": {"path": "audience", "value": ["all", "pro"]}},
        {"equals": {"path": "status", "value": "published"}},
        {"equals": {"path": "locale", "value": "en"}},
    ]
    assert search["highlight"]["path"] == "searchTerms.body"
    assert search["highlight"]["maxNumPassages"] == TUNING.atlas_highlight_passages
    assert p[1] == {"$limit": 30 * TUNING.atlas_bm25_overfetch}  # over-fetch before $lookup
    assert p[4] == {"$match": {"chunks.0": {"$exists": True}}}  # articles with nothing to give
    assert p[5] == {"$limit": 30}
    assert p[2]["$project"]["score"] == {"$meta": "searchScore"}
    assert p[2]["$project"]["highlights"] == {"$meta": "searchHighlights"}


def test_entitlement_filters_stay_inside_the_search_stage_and_live_match_repeats_them() -> None:
    """The `$match` after `$vectorSearch` is defence in depth (the index lags the collection);
    the filter inside the stage is what shapes the page, so it must still be there."""
    dense = dense_chunks_pipeline([1.0], PRO, 5, 50)
    assert dense[0]["$vectorSearch"]["filter"]["$and"][0] == {"audience": {"$in": ["all", "pro"]}}
    assert dense[1]["$match"] == {
        "audience": {"$in": ["all", "pro"]},
        "status": "published",
        "locale": "en",
    }
    no_locale = dense_chunks_pipeline([1.0], SearchFilter(audiences=("all",), locale=None), 5, 50)
    assert "locale" not in no_locale[1]["$match"]
    bm25 = bm25_articles_pipeline("password", PRO, 30, title_boost=3.0, tags_boost=2.0)
    assert bm25[0]["$search"]["compound"]["filter"]
    assert _stages(bm25).index("$match") > _stages(bm25).index("$lookup")


def test_bm25_lookup_brings_only_admissible_chunks_without_vectors() -> None:
    lookup = bm25_articles_pipeline("password", PRO, 30, title_boost=3, tags_boost=2)[3]["$lookup"]
    assert lookup["from"] == "kb_chunks"
    match = lookup["pipeline"][0]["$match"]
    assert match["$expr"] == {"$eq": ["$articleId", "$$aid"]}
    assert match["audience"] == {"$in": ["all", "pro"]}
    assert (match["status"], match["locale"]) == ("published", "en")
    assert lookup["pipeline"][1] == {"$sort": {"chunkIndex": 1}}
    assert "embedding" not in lookup["pipeline"][2]["$project"]


def test_bm25_query_is_the_analyzed_query_joined_by_spaces() -> None:
    p = bm25_articles_pipeline("Refunds for HL RP10?", PRO, 30, title_boost=3, tags_boost=2)
    queries = {c["text"]["query"] for c in p[0]["$search"]["compound"]["should"]}
    assert queries == {"refund hl rp10 hlrp10"}


CHUNKS = [
    {"_id": "sso#0", "chunkIndex": 0, "text": "Single sign-on overview.", "breadcrumb": "SSO"},
    {
        "_id": "sso#1",
        "chunkIndex": 1,
        "text": "AUTH_302 means the signature did not verify. Upload the new certificate.",
        "breadcrumb": "SSO › AUTH_302",
    },
    {"_id": "sso#2", "chunkIndex": 2, "text": "Clock skew causes AUTH_304.", "breadcrumb": "SSO"},
]


def test_pick_chunk_follows_the_best_highlight() -> None:
    highlights = [
        {
            "path": "searchTerms.body",
            "score": 1.4,
            "texts": [
                {"value": "auth-302 auth302 auth 302", "type": "hit"},
                {"value": " mean signature did verify", "type": "text"},
            ],
        },
        {
            "path": "searchTerms.body",
            "score": 0.2,
            "texts": [{"value": "clock skew", "type": "text"}],
        },
    ]
    assert pick_chunk(highlights, CHUNKS, "AUTH_302")["_id"] == "sso#1"  # type: ignore[index]


def test_pick_chunk_without_body_highlights_uses_query_terms_then_first_chunk() -> None:
    assert pick_chunk([], CHUNKS, "clock skew")["_id"] == "sso#2"  # type: ignore[index]
    assert pick_chunk([], CHUNKS, "invoices")["_id"] == "sso#0"  # type: ignore[index]
    assert pick_chunk([], [], "anything") is None


def test_hit_mapping() -> None:
    chunk = chunk_hit(
        {
            "_id": "sso#1",
            "articleId": "sso",
            "text": "t",
            "breadcrumb": "SAML › Errors",
            "title": "",
            "audience": "pro",
            "locale": "en",
            "score": 0.91,
        }
    )
    assert (chunk.passage_id, chunk.doc_id, chunk.kind, chunk.title) == (
        "sso#1",
        "sso",
        "doc",
        "SAML",
    )
    assert chunk.score == pytest.approx(0.91)
    when = datetime(2026, 5, 1, tzinfo=UTC)
    ticket = ticket_hit(
        {
            "_id": "T-1",
            "subject": "S",
            "symptom": "broken",
            "resolution": "fixed",
            "product": "Doors",
            "resolvedAt": when,
            "score": 0.8,
        }
    )
    assert (ticket.kind, ticket.passage_id, ticket.doc_id, ticket.resolved_at) == (
        "ticket",
        "T-1",
        "T-1",
        when,
    )
    assert ticket.text == "broken\n\nResolution: fixed"
    article = article_hit({"_id": "sso", "title": "SSO", "score": 7.5, "chunks": CHUNKS}, "skew")
    assert article is not None
    assert (article.passage_id, article.doc_id, article.score) == ("sso#2", "sso", 7.5)
    assert article_hit({"_id": "x", "title": "X", "score": 1.0, "chunks": []}, "q") is None


class _Cursor:
    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self._docs = docs

    async def to_list(self) -> list[dict[str, Any]]:
        return self._docs


class _Collection:
    def __init__(self, db: _RecordingDb, name: str) -> None:
        self._db, self._name = db, name

    async def aggregate(self, pipeline: list[dict[str, Any]]) -> _Cursor:
        self._db.calls.append((self._name, pipeline))
        if self._db.fail:
            raise RuntimeError("PlanExecutor error: index not found")
        return _Cursor(self._db.docs.get(self._name, []))

    def find(self, query: dict[str, Any], projection: dict[str, Any]) -> _Found:
        self._db.finds.append((self._name, query))
        if self._db.fail:
            raise RuntimeError("connection refused")
        return _Found(self._db.docs.get(self._name, []))


class _Found:
    """An async cursor over documents (the shape `find` returns)."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self._docs = iter(docs)

    def __aiter__(self) -> _Found:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return next(self._docs)
        except StopIteration:
            raise StopAsyncIteration from None


class _RecordingDb:
    def __init__(self, docs: dict[str, list[dict[str, Any]]], fail: bool = False) -> None:
        self.docs = docs
        self.fail = fail
        self.calls: list[tuple[str, list[dict[str, Any]]]] = []
        self.finds: list[tuple[str, dict[str, Any]]] = []

    def __getitem__(self, name: str) -> _Collection:
        return _Collection(self, name)


async def test_atlas_search_runs_each_pipeline_on_its_collection() -> None:
    db = _RecordingDb(
        {
            "kb_chunks": [{"_id": "sso#1", "articleId": "sso", "text": "t", "score": 0.9}],
            "kb_articles": [
                {"_id": "sso", "title": "SSO", "score": 3.0, "highlights": [], "chunks": CHUNKS},
                {"_id": "orphan", "title": "O", "score": 2.0, "highlights": [], "chunks": []},
            ],
            "tickets": [{"_id": "T-1", "subject": "S", "symptom": "a", "resolution": "b"}],
        }
    )
    search = AtlasSearch(db, TUNING)
    dense = await search.dense_chunks([1.0, 0.0], PRO, 40, 200)
    bm25 = await search.bm25_articles("AUTH_304 clock", PRO, 30)
    tickets = await search.dense_tickets([1.0, 0.0], PRO, 20, 0.7)
    assert [h.passage_id for h in dense] == ["sso#1"]
    assert [h.passage_id for h in bm25] == ["sso#2"]  # the orphan article is skipped
    assert [h.passage_id for h in tickets] == ["T-1"]
    assert [name for name, _ in db.calls] == ["kb_chunks", "kb_articles", "tickets"]
    ticket_stage = db.calls[2][1][0]["$vectorSearch"]
    assert ticket_stage["numCandidates"] == max(
        TUNING.vector_num_candidates, 20 * TUNING.atlas_candidates_per_limit
    )  # the recording db cannot count documents: size unknown, so ANN


async def test_atlas_search_skips_queries_without_terms_and_wraps_errors() -> None:
    db = _RecordingDb({}, fail=True)
    search = AtlasSearch(db, TUNING)
    assert await search.bm25_articles("   ?? ", PRO, 30) == []
    assert db.calls == []
    with pytest.raises(SearchError, match="index not found"):
        await search.dense_chunks([1.0], PRO, 5, 50)


class _CountingCollection(_Collection):
    async def estimated_document_count(self) -> int:
        db = self._db
        assert isinstance(db, _CountingDb)
        db.counts_asked += 1
        return db.sizes[self._name]


class _CountingDb(_RecordingDb):
    def __init__(self, sizes: dict[str, int]) -> None:
        super().__init__({})
        self.sizes = sizes
        self.counts_asked = 0

    def __getitem__(self, name: str) -> _Collection:
        return _CountingCollection(self, name)


async def test_exact_below_the_configured_size_ann_above_and_recount_on_refresh() -> None:
    below = TUNING.atlas_exact_below_docs - 1
    db = _CountingDb({"kb_chunks": below, "tickets": TUNING.atlas_exact_below_docs})
    search = AtlasSearch(db, TUNING)
    await search.dense_chunks([1.0], PRO, 40, 200)
    await search.dense_tickets([1.0], PRO, 20, 0.7)
    chunks_stage = db.calls[0][1][0]["$vectorSearch"]
    tickets_stage = db.calls[1][1][0]["$vectorSearch"]
    assert chunks_stage["exact"] is True and "numCandidates" not in chunks_stage
    assert "exact" not in tickets_stage and tickets_stage["numCandidates"] == 400
    await search.dense_chunks([1.0], PRO, 40, 200)
    assert db.counts_asked == 2  # cached: one count per collection
    db.sizes["kb_chunks"] = TUNING.atlas_exact_below_docs * 3  # the corpus grew (re-ingest)
    await search.refresh()
    await search.dense_chunks([1.0], PRO, 40, 200)
    assert db.calls[-1][1][0]["$vectorSearch"]["numCandidates"] == 800


async def test_vocabulary_reads_searchable_records_once_until_refresh() -> None:
    db = _RecordingDb(
        {
            "kb_articles": [
                {"title": "SSO", "tags": ["okta"], "body": "Set up SAML", "audience": "all"},
                {"title": "SCIM", "body": "Provisioning", "audience": "enterprise", "locale": "en"},
            ],
            "tickets": [{"subject": "Badge", "symptom": "fails", "resolution": "Rebooted"}],
        }
    )
    search = AtlasSearch(db, TUNING)
    vocab = await search.vocabulary()
    assert await search.vocabulary() is vocab  # cached: one scan of each collection
    assert db.finds == [
        ("kb_articles", {"status": "published"}),
        ("tickets", {"status": "resolved", "quality": {"$gte": TUNING.ticket_min_quality}}),
    ]
    words = vocab.words(PRO)
    assert {"okta", "saml", "rebooted"} <= set(words) and "provisioning" not in words
    await search.refresh()
    assert await search.vocabulary() is not vocab and len(db.finds) == 4
    failing = AtlasSearch(_RecordingDb({}, fail=True), TUNING)
    assert len(await failing.vocabulary()) == 0  # no words, no repair: never an error
