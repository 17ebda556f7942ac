"""One tokenization for both lexical backends (issue 12).

The table asserts the tokens our analyzer gives codes, SKUs and stems, and the ranking LocalSearch
produces from them. Atlas cannot run here, so parity is shown by construction and by
recomputation: ingestion stores the analysed fields (`searchTerms`), Atlas indexes them with
`lucene.whitespace` (split on whitespace, nothing else: tested in `test_atlas_indexes.py`), the
`$search` query is the analysed query joined by spaces, and a Lucene-BM25 scorer written here
over exactly what a whitespace analyser would read from those stored fields ranks every case the
way LocalSearch does.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from datetime import UTC, datetime

import pytest

from app.ingest import ingest_articles
from app.language.analyzer import (
    ANALYZER_VERSION,
    analyze,
    analyzed_field,
    field_tokens,
    query_terms,
    search_term_fields,
)
from app.providers.embeddings.fake import FakeEmbedder
from app.search.atlas import bm25_articles_pipeline
from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from app.store import Store
from app.store.models import Article, Chunk
from tuning import TUNING

EVERYONE = SearchFilter(audiences=("all",), locale="en")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


# --- tokens --------------------------------------------------------------------------------

TOKENS = [
    # codes: every spelling of one code shares its joined form (and its parts)
    ("AUTH-302", ["auth-302", "auth302", "auth", "302"]),
    ("auth_302", ["auth-302", "auth302", "auth", "302"]),
    ("AUTH302", ["auth302", "auth", "302"]),
    ("auth 302", ["auth", "302", "auth302"]),
    # SKUs
    ("HL-RP10", ["hl-rp10", "hlrp10", "hl", "rp10"]),
    ("HL RP10", ["hl", "rp10", "hlrp10"]),
    ("hl_rp10", ["hl-rp10", "hlrp10", "hl", "rp10"]),
    # stems (the same light stemmer for documents and queries; digits never stemmed)
    ("refunds", ["refund"]),
    ("refunded", ["refund"]),
    ("refunding", ["refund"]),
    ("policies", ["policy"]),
    ("running", ["run"]),
    ("universe university", ["univers", "university"]),  # Porter would merge these
    ("items3s", ["items3s"]),
    ("ORD1042", ["ord1042", "ord", "1042"]),
    # a pair joins only when written as a code: same line, spaces only, not after a stop word
    ("auth, 302", ["auth", "302"]),
    ("auth\n302", ["auth", "302"]),
    ("in 2024", ["2024"]),
    ("error codes", ["error", "code"]),
    # stop words (Lucene's English set) dropped, case folded, NFKC
    ("The AUTH-302 error", ["auth-302", "auth302", "auth", "302", "error"]),
    ("ＡＵＴＨ３０２", ["auth302", "auth", "302"]),
    ("rp10 mp3 v2", ["rp10", "mp3", "v2"]),  # too short to be two parts
]


@pytest.mark.parametrize(("text", "tokens"), TOKENS, ids=[t for t, _ in TOKENS])
def test_tokens(text: str, tokens: list[str]) -> None:
    assert analyze(text) == tokens


def test_every_spelling_of_a_code_reaches_the_joined_form() -> None:
    spellings = ["AUTH-302", "auth_302", "AUTH302", "auth 302", "Auth-302"]
    assert all("auth302" in analyze(s) for s in spellings)
    assert all("hlrp10" in analyze(s) for s in ["HL-RP10", "HL RP10", "hl_rp10", "HLRP10"])


def test_the_stored_field_is_what_a_whitespace_analyzer_reads_back() -> None:
    text = "Fix AUTH-302 fast.\n\nThen re-run the HL RP10 check;\ndone"
    stored = analyzed_field(text)
    assert (
        stored
        == "fix auth-302 auth302 auth 302 fast\nre-run rerun re run hl rp10 hlrp10 check\ndone"
    )
    assert field_tokens(stored) == analyze(text)  # one line per line, nothing lost or added
    fields = search_term_fields("Title", ["SSO", "sso", "Sign-In"], text)
    assert fields["version"] == ANALYZER_VERSION
    assert fields["tags"] == "sso sign-in signin sign"  # a tag counts once; "in" is a stop word


def test_the_atlas_query_is_the_local_query() -> None:
    for text, _ in TOKENS:
        pipeline = bm25_articles_pipeline(text, EVERYONE, 10, title_boost=0.5, tags_boost=1.0)
        for clause in pipeline[0]["$search"]["compound"]["should"]:
            assert clause["text"]["query"].split() == query_terms(text), text


# --- ranking -------------------------------------------------------------------------------


def _article(aid: str, title: str, body: str, tags: tuple[str, ...] = ()) -> Article:
    return Article(id=aid, slug=aid, title=title, body=body, tags=list(tags), updated_at=NOW)


# Made-up help articles: one carries the code or SKU, the others share its parts.
CORPUS = [
    _article(
        "sign-in-errors",
        "Sign-in errors",
        "If sign-in stops with AUTH-302 the identity provider's signature did not verify. "
        "Upload the current certificate and try again.",
        ("sso",),
    ),
    _article(
        "auth-overview",
        "How auth works",
        "Auth uses tokens. Auth sessions last a day; auth settings live under Security.",
        ("security",),
    ),
    _article(
        "warehouse",
        "Warehouse returns",
        "Returns go to dock 302. Dock 302 is open on weekdays.",
        ("returns",),
    ),
    _article(
        "pad-rp10",
        "Replacement pads",
        "The HL-RP10 pad fits the desk unit. Swap it when the surface wears.",
        ("hardware",),
    ),
    _article(
        "pad-rp20",
        "Wall pads",
        "The HL-RP20 pad fits the wall unit. HL pads ship in pairs.",
        ("hardware",),
    ),
    _article(
        "refunds",
        "Refund policy",
        "Orders are refunded to the original card within five days.",
        ("billing",),
    ),
    _article(
        "running-reports",
        "Reports",
        "Running a report exports every order of the month.",
        ("reports",),
    ),
]

RANKING = [
    ("AUTH-302", "sign-in-errors"),
    ("auth 302", "sign-in-errors"),
    ("AUTH302", "sign-in-errors"),
    ("auth_302", "sign-in-errors"),
    ("why do I get auth 302", "sign-in-errors"),
    ("HL RP10", "pad-rp10"),
    ("HL-RP10", "pad-rp10"),
    ("hlrp10", "pad-rp10"),
    ("HL-RP20 pad", "pad-rp20"),
    ("refunding an order", "refunds"),
    ("refunds", "refunds"),
    ("run a report", "running-reports"),
]


def _chunks(articles: list[Article]) -> list[Chunk]:
    return [
        Chunk(id=f"{a.id}#0", article_id=a.id, chunk_index=0, text=a.body, breadcrumb=a.title)
        for a in articles
    ]


def _lucene_bm25(
    query: str, articles: list[Article], k1: float = 1.2, b: float = 0.75
) -> list[str]:
    """Lucene's BM25, summed over the compound's should clauses with their boosts, over the
    tokens `lucene.whitespace` reads from each stored field: what Atlas computes."""
    fields = [search_term_fields(a.title, a.tags, a.body) for a in articles]
    boosts = {"title": TUNING.bm25_title_boost, "tags": TUNING.bm25_tags_boost, "body": 1.0}
    terms = query_terms(query)
    scores = [0.0] * len(articles)
    for name, boost in boosts.items():
        docs = [Counter(field_tokens(str(f[name]))) for f in fields]  # type: ignore[literal-required]
        lengths = [sum(d.values()) for d in docs]
        avgdl = sum(lengths) / len(docs)
        for term in terms:
            df = sum(1 for d in docs if term in d)
            if not df:
                continue
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            for i, d in enumerate(docs):
                tf = d[term]
                if tf:
                    norm = k1 * (1 - b + b * lengths[i] / avgdl)
                    scores[i] += boost * idf * tf / (tf + norm)
    ranked = sorted(range(len(articles)), key=lambda i: -scores[i])
    return [articles[i].id for i in ranked if scores[i] > 0]


@pytest.mark.parametrize(("query", "top"), RANKING, ids=[q for q, _ in RANKING])
async def test_local_ranking(query: str, top: str) -> None:
    search = LocalSearch(CORPUS, _chunks(CORPUS))
    hits = await search.bm25_articles(query, EVERYONE, 10)
    assert hits and hits[0].doc_id == top, [h.doc_id for h in hits]
    # the same order Lucene's BM25 gives over what Atlas indexes (stored analysed fields)
    assert [h.doc_id for h in hits] == _lucene_bm25(query, CORPUS)


async def test_every_spelling_of_a_code_ranks_the_article_carrying_it_first() -> None:
    """Whatever spelling the article uses, every spelling of the query finds it first."""
    spellings = ["AUTH-302", "auth_302", "AUTH302", "auth 302"]
    for written in spellings:
        doc = _article("code", "Sign-in errors", f"Sign-in stops with {written} after the upload.")
        corpus = [doc, *CORPUS[1:3]]
        search = LocalSearch(corpus, _chunks(corpus))
        for typed in spellings:
            hits = await search.bm25_articles(typed, EVERYONE, 10)
            assert hits and hits[0].doc_id == "code", (written, typed, [h.doc_id for h in hits])


# --- written at ingest, read by both -------------------------------------------------------


async def test_ingestion_stores_the_analyzed_fields(store: Store) -> None:
    await ingest_articles(store, FakeEmbedder(), CORPUS[:1])
    doc = await store.db["kb_articles"].find_one({"_id": "sign-in-errors"})
    assert doc is not None
    assert doc["searchTerms"] == {
        "version": ANALYZER_VERSION,
        "title": "sign-in signin sign error",
        "tags": "sso",
        "body": analyzed_field(CORPUS[0].body),
    }
    assert "auth302" in doc["searchTerms"]["body"].split()


async def test_local_search_indexes_the_stored_field(store: Store) -> None:
    """LocalSearch reads what Atlas reads: the stored `searchTerms`, not its own re-analysis
    (recomputed only for a field of another analyzer version)."""
    await ingest_articles(store, FakeEmbedder(), CORPUS[:2])
    coll = store.db["kb_articles"]
    await coll.update_one({"_id": "auth-overview"}, {"$set": {"searchTerms.body": "zebra"}})
    search = await LocalSearch.build(store)
    assert [h.doc_id for h in await search.bm25_articles("zebra", EVERYONE, 5)] == ["auth-overview"]
    await coll.update_one({"_id": "auth-overview"}, {"$set": {"searchTerms.version": "old"}})
    await search.refresh()
    assert await search.bm25_articles("zebra", EVERYONE, 5) == []


async def test_reingestion_rewrites_fields_of_an_older_analyzer(store: Store) -> None:
    await ingest_articles(store, FakeEmbedder(), CORPUS[:2])
    await store.db["kb_articles"].update_one(
        {"_id": "auth-overview"}, {"$set": {"searchTerms": {"version": "0", "body": "stale"}}}
    )
    report = await ingest_articles(store, FakeEmbedder(), CORPUS[:2])
    assert report.unchanged == ["sign-in-errors"]
    assert report.ingested == ["auth-overview"]
    doc = await store.db["kb_articles"].find_one({"_id": "auth-overview"})
    assert doc is not None and doc["searchTerms"]["version"] == ANALYZER_VERSION


# --- the version stored with the fields ----------------------------------------------------

SAMPLE = (
    "The AUTH-302 error, auth_302 or AUTH302: refunds refunded running policies.\n"
    "Order ORD1042 ships HL RP10 pads (hl_rp10) in 2024; universe university ＡＵＴＨ３０２ v2\n"
    "Lost or forgot it? We paid."
)
FINGERPRINT = "ccdc42b65d418041"  # of analyze(SAMPLE) under ANALYZER_VERSION "2"


def test_changing_the_analyzer_means_bumping_its_version() -> None:
    """Stored `searchTerms` are rewritten only when the version differs: an analyzer that
    changed under the same version would leave Atlas searching old tokens and LocalSearch
    new ones. Change the analyzer → bump ANALYZER_VERSION and update this fingerprint."""
    digest = hashlib.sha256(" ".join(analyze(SAMPLE)).encode()).hexdigest()[:16]
    assert (ANALYZER_VERSION, digest) == ("2", FINGERPRINT)
