"""LocalSearch: exact dense search and field-weighted BM25 with the filter applied before top-k."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from test_search_corpus import ARTICLES, NOT_FOR_FREE_EN, TICKETS, corpus_records, load_corpus

from app.providers.embeddings.fake import FakeEmbedder
from app.search.base import SearchError
from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from app.store import Store
from app.store.models import Article, Chunk
from tuning import TUNING

FREE = SearchFilter(audiences=("all",), locale="en")
PRO = SearchFilter(audiences=("all", "pro"), locale="en")
ENTERPRISE = SearchFilter(audiences=("all", "pro", "enterprise"), locale="en")


@pytest.fixture
async def search(store: Store) -> LocalSearch:
    await load_corpus(store)
    return await LocalSearch.build(store)


async def _vec(text: str) -> list[float]:
    return await FakeEmbedder().embed_query(text)


async def test_dense_chunks_are_ranked_scored_and_limited(search: LocalSearch) -> None:
    hits = await search.dense_chunks(await _vec("reset your password email link"), PRO, 3, 200)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].doc_id == "reset-password"
    assert hits[0].passage_id.startswith("reset-password#")
    assert hits[0].kind == "doc" and hits[0].title == "Resetting your password"
    assert " › " in hits[0].breadcrumb
    assert hits[0].vector is not None and len(hits[0].vector) == FakeEmbedder().dimensions


async def test_dense_chunks_only_return_admissible_chunks_even_when_limit_is_huge(
    search: LocalSearch,
) -> None:
    hits = await search.dense_chunks(
        await _vec("quokkaplan zephyrium croissantine"), FREE, 999, 999
    )
    assert hits, "free customers still get the admissible chunks"
    assert {h.doc_id for h in hits} <= {"reset-password", "card-reader-pads"}
    assert all(h.audience == "all" and h.locale == "en" for h in hits)


async def test_bm25_finds_exact_error_code_and_maps_to_the_chunk_that_has_it(
    search: LocalSearch,
) -> None:
    hits = await search.bm25_articles("Getting AUTH_302 when I sign in", PRO, 30)
    assert hits[0].doc_id == "saml-signature-auth-302"
    assert hits[0].passage_id == "saml-signature-auth-302#1"
    assert "AUTH_302" in hits[0].text
    assert "saml-clock-skew-auth-304" not in [h.doc_id for h in hits[:1]]


@pytest.mark.parametrize("query", ["auth 302", "AUTH-302", "auth302", "error auth_302"])
async def test_bm25_matches_code_variants(search: LocalSearch, query: str) -> None:
    hits = await search.bm25_articles(query, PRO, 30)
    assert hits and hits[0].doc_id == "saml-signature-auth-302"


async def test_bm25_finds_sku(search: LocalSearch) -> None:
    hits = await search.bm25_articles("where do I buy HL-RP10", FREE, 30)
    assert hits[0].doc_id == "card-reader-pads"
    assert hits[0].passage_id == "card-reader-pads#1"


async def test_bm25_title_outweighs_body(store: Store) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    titled = Article(_id="a", slug="a", title="Desk booking", body="Reserve ahead.", updated_at=now)
    bodied = Article(
        _id="b", slug="b", title="Floor plans", body="Desk booking is on the map.", updated_at=now
    )
    chunks = [
        Chunk(_id="a#0", article_id="a", chunk_index=0, text="Reserve ahead.", breadcrumb="A"),
        Chunk(_id="b#0", article_id="b", chunk_index=0, text=bodied.body, breadcrumb="B"),
    ]
    # the mechanism: a title boost above the body's weight puts the title match first
    boosted = replace(TUNING, bm25_title_boost=3.0)
    search = LocalSearch([titled, bodied], chunks, [], tuning=boosted)
    hits = await search.bm25_articles("desk booking", FREE, 30)
    assert [h.doc_id for h in hits] == ["a", "b"]
    # the boost is tuning's: with no title weight the body match ranks first
    plain = LocalSearch([titled, bodied], chunks, [], tuning=replace(TUNING, bm25_title_boost=0))
    hits = await plain.bm25_articles("desk booking", FREE, 30)
    assert [h.doc_id for h in hits] == ["b"]


async def test_bm25_tags_count(store: Store) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    tagged = Article(_id="a", slug="a", title="One", body="text", tags=["webauthn"], updated_at=now)
    plain = Article(_id="b", slug="b", title="Two", body="webauthn keys", updated_at=now)
    chunks = [
        Chunk(_id="a#0", article_id="a", chunk_index=0, text="text", breadcrumb="One"),
        Chunk(_id="b#0", article_id="b", chunk_index=0, text="webauthn keys", breadcrumb="Two"),
    ]
    boosted = replace(TUNING, bm25_tags_boost=2.0)
    search = LocalSearch([tagged, plain], chunks, [], tuning=boosted)
    hits = await search.bm25_articles("webauthn", FREE, 30)
    assert [h.doc_id for h in hits] == ["a", "b"]
    # a title/tag-only match is represented by the article's first chunk
    assert hits[0].passage_id == "a#0"


async def test_bm25_length_normalisation_is_tunings() -> None:
    """k1 and b come from tuning: with no length normalisation (b=0) the article saying the word
    twice in a long body ranks first; with full normalisation (b=1) the one-word body does."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    filler = " ".join(f"word{i}" for i in range(20))
    long_body = f"desk desk {filler}"
    articles = [
        Article(_id="long", slug="l", title="One", body=long_body, updated_at=now),
        Article(_id="short", slug="s", title="Two", body="desk", updated_at=now),
    ]
    chunks = [
        Chunk(_id="long#0", article_id="long", chunk_index=0, text=long_body, breadcrumb="One"),
        Chunk(_id="short#0", article_id="short", chunk_index=0, text="desk", breadcrumb="Two"),
    ]
    order = {}
    for b in (0.0, 1.0):
        search = LocalSearch(articles, chunks, [], tuning=replace(TUNING, bm25_b=b))
        order[b] = [h.doc_id for h in await search.bm25_articles("desk", FREE, 30)]
    assert order == {0.0: ["long", "short"], 1.0: ["short", "long"]}


@pytest.mark.parametrize(
    ("query", "hidden"),
    [
        ("quokkaplan", "audit-log-export"),  # enterprise-only word
        ("zephyrium", "billing-portal-draft"),  # draft-only word
        ("croissantine", "reinitialiser-mot-de-passe"),  # French-only word
    ],
)
async def test_zero_score_padding_never_leaks_the_only_lexical_match(
    search: LocalSearch, query: str, hidden: str
) -> None:
    assert await search.bm25_articles(query, FREE, 30) == []
    # the same document *is* found by a customer allowed to see it (when published)
    if hidden == "audit-log-export":
        hits = await search.bm25_articles(query, ENTERPRISE, 30)
        assert [h.doc_id for h in hits] == [hidden]
    if hidden == "reinitialiser-mot-de-passe":
        hits = await search.bm25_articles(query, SearchFilter(("all",), "fr"), 30)
        assert [h.doc_id for h in hits] == [hidden]


async def test_bm25_drops_articles_without_any_query_term(search: LocalSearch) -> None:
    hits = await search.bm25_articles("password", ENTERPRISE, 30)
    assert {h.doc_id for h in hits} == {"reset-password"}  # not the padding of zero scores
    assert all(h.score > 0 for h in hits)


async def test_bm25_of_only_stopwords_or_punctuation_is_empty(search: LocalSearch) -> None:
    assert await search.bm25_articles("the of and ???", ENTERPRISE, 30) == []
    assert await search.bm25_articles("", ENTERPRISE, 30) == []


async def test_drafts_never_surface(search: LocalSearch) -> None:
    everything = SearchFilter(audiences=("all", "pro", "enterprise"), locale=None)
    dense = await search.dense_chunks(await _vec("zephyrium billing portal"), everything, 99, 99)
    bm25 = await search.bm25_articles("zephyrium billing portal", everything, 99)
    assert "billing-portal-draft" not in {h.doc_id for h in dense + bm25}


async def test_tickets_filter_status_quality_audience_locale(search: LocalSearch) -> None:
    vec = await _vec("password reset email link broken")
    free = await search.dense_tickets(vec, FREE, 99, TUNING.ticket_min_quality)
    assert {h.doc_id for h in free} == {"T-100"}
    enterprise = await search.dense_tickets(vec, ENTERPRISE, 99, TUNING.ticket_min_quality)
    assert {h.doc_id for h in enterprise} == {"T-100", "T-101", "T-102"}
    low_bar = await search.dense_tickets(vec, FREE, 99, 0.0)
    assert {h.doc_id for h in low_bar} == {"T-100", "T-105"}
    hit = next(h for h in enterprise if h.doc_id == "T-100")
    assert hit.kind == "ticket" and hit.passage_id == "T-100"
    assert hit.title == TICKETS["T-100"][0]
    assert "Resolution:" in hit.text and hit.resolved_at is not None
    assert next(h for h in enterprise if h.doc_id == "T-102").resolved_at is None


async def test_ticket_quality_threshold_is_inclusive(store: Store) -> None:
    articles, chunks, tickets = await corpus_records()
    edge = tickets[0].model_copy(update={"id": "T-EDGE", "quality": 0.7})
    search = LocalSearch(articles, chunks, [edge])
    vec = await _vec("password reset")
    assert [h.doc_id for h in await search.dense_tickets(vec, FREE, 5, 0.7)] == ["T-EDGE"]


async def test_refresh_picks_up_new_content(store: Store) -> None:
    search = await LocalSearch.build(store)
    assert await search.bm25_articles("password", FREE, 30) == []
    await load_corpus(store)
    await search.refresh()
    assert (await search.bm25_articles("password", FREE, 30))[0].doc_id == "reset-password"


async def test_empty_index_returns_nothing(store: Store) -> None:
    search = await LocalSearch.build(store)
    vec = await _vec("anything")
    assert await search.dense_chunks(vec, ENTERPRISE, 10, 100) == []
    assert await search.bm25_articles("anything", ENTERPRISE, 10) == []
    assert await search.dense_tickets(vec, ENTERPRISE, 10, 0.0) == []


async def test_query_vector_of_the_wrong_width_is_an_error(search: LocalSearch) -> None:
    with pytest.raises(SearchError):
        await search.dense_chunks([1.0, 0.0, 0.0], FREE, 5, 50)
    with pytest.raises(SearchError):
        await search.dense_tickets([0.0] * 64, FREE, 5, 0.0)


async def test_chunks_without_vectors_are_skipped(store: Store) -> None:
    articles, chunks, tickets = await corpus_records()
    unembedded = [c.model_copy(update={"embedding": []}) for c in chunks]
    search = LocalSearch(articles, unembedded, tickets)
    assert await search.dense_chunks(await _vec("password"), FREE, 5, 50) == []
    # BM25 still works: it does not need vectors
    assert (await search.bm25_articles("password", FREE, 5))[0].doc_id == "reset-password"


async def test_article_whose_chunks_are_stale_is_not_represented(store: Store) -> None:
    """An article matched by BM25 speaks only through chunks the filter also admits."""
    articles, chunks, tickets = await corpus_records()
    stale = [
        c.model_copy(update={"audience": "enterprise"}) if c.article_id == "reset-password" else c
        for c in chunks
    ]
    search = LocalSearch(articles, stale, tickets)
    assert await search.bm25_articles("password", FREE, 30) == []


async def test_results_never_include_hidden_docs_for_free_english(search: LocalSearch) -> None:
    queries = ["password", "AUTH_302 okta", "quokkaplan audit", "croissantine", "HL-RP10"]
    for q in queries:
        vec = await _vec(q)
        hits = (
            await search.dense_chunks(vec, FREE, 99, 999)
            + await search.bm25_articles(q, FREE, 99)
            + await search.dense_tickets(vec, FREE, 99, TUNING.ticket_min_quality)
        )
        assert not ({h.doc_id for h in hits} & NOT_FOR_FREE_EN), q
    assert set(ARTICLES) - NOT_FOR_FREE_EN == {"reset-password", "card-reader-pads"}


async def test_alternating_filters_on_one_index_never_mix(search: LocalSearch) -> None:
    """Masks are cached per filter: a cached enterprise mask must never serve a free query."""
    vec = await _vec("quokkaplan audit log export password")
    results = []
    for filt in (FREE, ENTERPRISE, FREE, PRO, ENTERPRISE, FREE):
        hits = (
            await search.dense_chunks(vec, filt, 99, 999)
            + await search.bm25_articles("quokkaplan audit password", filt, 99)
            + await search.dense_tickets(vec, filt, 99, TUNING.ticket_min_quality)
        )
        results.append((filt, [h.passage_id for h in hits]))
    free_runs = [ids for filt, ids in results if filt == FREE]
    assert free_runs[0] == free_runs[1] == free_runs[2]
    assert not {pid.split("#")[0] for pid in free_runs[0]} & NOT_FOR_FREE_EN
    enterprise_runs = [ids for filt, ids in results if filt == ENTERPRISE]
    assert "audit-log-export#1" in enterprise_runs[0] and enterprise_runs[0] == enterprise_runs[1]
