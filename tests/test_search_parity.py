"""One retrieval contract, two backends: LocalSearch always, AtlasSearch when MONGODB_URI is set.

The cases assert what both must agree on (the right document on top, and exactly what the
filter hides), not identical scores: both rank the same tokens (the stored `searchTerms`, see
`test_search_analyzer.py`), but Lucene stores document lengths lossily and Atlas vector search
may be approximate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from test_search_corpus import NOT_FOR_FREE_EN, NOW, load_corpus

from app.language.synonyms import SynonymTable, expand_query
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.rerank import FakeReranker
from app.search.atlas import AtlasSearch
from app.search.base import SearchBackend
from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from app.settings import Settings
from app.store import Store, open_store
from app.turn.entitlement import filter_for_customer
from app.turn.retrieve import retrieve
from tuning import TUNING

FREE = SearchFilter(audiences=("all",), locale="en")
PRO = SearchFilter(audiences=("all", "pro"), locale="en")
ENTERPRISE = SearchFilter(audiences=("all", "pro", "enterprise"), locale="en")
EVERY_LOCALE = SearchFilter(audiences=("all", "pro", "enterprise"), locale=None)
FRENCH = SearchFilter(audiences=("all",), locale="fr")


# One backend per module run, not per test case. The Atlas variant reads the run's one shared
# set of search indexes (`atlas_search_store` in conftest: a Free-tier cluster allows three in
# total), on the session loop its client was opened on (the cases only read, so sharing is safe).
pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(
    scope="module",
    loop_scope="session",
    params=[
        pytest.param("local", id="local"),
        pytest.param("atlas", id="atlas", marks=pytest.mark.atlas),
    ],
)
async def backend(
    request: pytest.FixtureRequest, atlas_search_store: Store | None
) -> AsyncIterator[SearchBackend]:
    if request.param == "local":
        store = open_store(Settings(mongodb_uri=None, _env_file=None))  # type: ignore[call-arg]
        await load_corpus(store)
        yield await LocalSearch.build(store)
        await store.close()
        return
    assert atlas_search_store is not None
    yield AtlasSearch(atlas_search_store.db, TUNING)


@dataclass(frozen=True)
class LexicalCase:
    query: str
    filt: SearchFilter
    top_doc: str | None  # None: nothing may match
    top_passage: str | None = None


LEXICAL = [
    LexicalCase(
        "AUTH_302 when I sign in", PRO, "saml-signature-auth-302", "saml-signature-auth-302#1"
    ),
    LexicalCase(
        "clock skew AUTH_304", PRO, "saml-clock-skew-auth-304", "saml-clock-skew-auth-304#1"
    ),
    LexicalCase("AUTH_302", FREE, None),  # only pro articles carry the code
    LexicalCase("HL-RP10 pad kit", FREE, "card-reader-pads", "card-reader-pads#1"),
    LexicalCase("forgot password", FREE, "reset-password"),
    LexicalCase("quokkaplan", FREE, None),
    LexicalCase("quokkaplan", ENTERPRISE, "audit-log-export", "audit-log-export#1"),
    LexicalCase("zephyrium", EVERY_LOCALE, None),  # draft
    LexicalCase("croissantine", FREE, None),
    LexicalCase("croissantine", FRENCH, "reinitialiser-mot-de-passe"),
]


@pytest.mark.parametrize(
    "case", LEXICAL, ids=lambda c: f"{c.query}|{','.join(c.filt.audiences)}|{c.filt.locale}"
)
async def test_bm25_parity(backend: SearchBackend, case: LexicalCase) -> None:
    hits = await backend.bm25_articles(case.query, case.filt, TUNING.keyword_limit)
    if case.top_doc is None:
        assert hits == []
        return
    assert hits, "expected a match"
    assert hits[0].doc_id == case.top_doc
    if case.top_passage:
        assert hits[0].passage_id == case.top_passage
    assert all(h.score > 0 for h in hits)


@pytest.mark.parametrize(
    ("filt", "top_doc"), [(ENTERPRISE, "audit-log-export"), (FREE, None)], ids=["ent", "free"]
)
async def test_bm25_parity_with_synonyms(
    backend: SearchBackend, filt: SearchFilter, top_doc: str | None
) -> None:
    """The expansion is query text (app/language/synonyms.py), so both backends rank it alike and
    the entitlement filter applies to the added terms as to the customer's own."""
    assert await backend.bm25_articles("QKP", filt, TUNING.keyword_limit) == []
    expanded = expand_query("QKP", SynonymTable((("QKP", "quokkaplan"),)))
    hits = await backend.bm25_articles(expanded, filt, TUNING.keyword_limit)
    assert [h.doc_id for h in hits][:1] == ([top_doc] if top_doc else [])
    if top_doc:
        assert hits[0].passage_id == f"{top_doc}#1"


@pytest.mark.parametrize(
    ("query", "filt", "top_doc"),
    [
        ("Forgot password? reset it from the sign-in page", FREE, "reset-password"),
        ("Order the HL-RP10 pad kit and swap the pads", FREE, "card-reader-pads"),
        (
            "AUTH_302 means the SAML response signature did not verify",
            PRO,
            "saml-signature-auth-302",
        ),
        ("export audit logs to a SIEM", ENTERPRISE, "audit-log-export"),
    ],
)
async def test_dense_chunks_parity(
    backend: SearchBackend, query: str, filt: SearchFilter, top_doc: str
) -> None:
    vec = await FakeEmbedder().embed_query(query)
    hits = await backend.dense_chunks(vec, filt, TUNING.vector_limit, TUNING.vector_num_candidates)
    assert hits[0].doc_id == top_doc
    assert all(filt.allows_doc(h.audience, h.locale, "published") for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0.0 <= h.score <= 1.0 for h in hits)


@pytest.mark.parametrize(
    ("filt", "allowed"),
    [
        (FREE, {"T-100"}),
        (PRO, {"T-100", "T-101"}),
        (ENTERPRISE, {"T-100", "T-101", "T-102"}),
        (FRENCH, {"T-106"}),
    ],
)
async def test_dense_tickets_parity(
    backend: SearchBackend, filt: SearchFilter, allowed: set[str]
) -> None:
    vec = await FakeEmbedder().embed_query("password reset email link broken")
    hits = await backend.dense_tickets(vec, filt, 50, TUNING.ticket_min_quality)
    assert {h.doc_id for h in hits} == allowed
    assert all(h.kind == "ticket" for h in hits)


@pytest.mark.parametrize(
    ("query", "plan", "top_doc"),
    [
        ("AUTH_302 when signing in", "pro", "saml-signature-auth-302"),
        ("where do I buy HL-RP10 pads", "free", "card-reader-pads"),
        ("I forgot my password", None, "reset-password"),
    ],
)
async def test_full_pipeline_parity(
    backend: SearchBackend, query: str, plan: str | None, top_doc: str
) -> None:
    result = await retrieve(
        query,
        query,
        plan,
        "en",
        backend=backend,
        embedder=FakeEmbedder(),
        reranker=FakeReranker(),
        tuning=TUNING,
        now=NOW,
    )
    assert result.reason is None
    assert result.passages[0].hit.doc_id == top_doc
    if filter_for_customer(plan, "en", TUNING).audiences == ("all",):
        shown = {c.hit.doc_id for c in result.fused}
        assert not shown & NOT_FOR_FREE_EN
