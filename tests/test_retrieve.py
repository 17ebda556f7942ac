"""retrieve(): stages, timings, the query forms, and bad input that must never raise."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

import pytest
from test_search_corpus import NOW, load_corpus

from app.language.spelling import Speller
from app.language.synonyms import EMPTY, SynonymTable
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.errors import ProviderError
from app.providers.rerank import FakeReranker
from app.search.base import Hit, SearchError
from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from app.search.vocabulary import CorpusVocabulary
from app.store import Store
from app.turn.retrieve import (
    LATENCY_STAGES,
    RANKED_STAGES,
    clean_query,
    compared_statements,
    repair_spelling,
    retrieve,
    with_repairs,
)
from tuning import TUNING, ConfidenceBands

TUNED = dataclasses.replace(
    TUNING, confidence={**TUNING.confidence, "fake": ConfidenceBands(strong=0.6, weak=0.45)}
)


class RecordingBackend:
    """Wraps a backend and records what each ranker was asked; can make rankers fail."""

    name = "recording"

    def __init__(self, inner: LocalSearch, fail: Sequence[str] = ()) -> None:
        self.inner = inner
        self.fail = set(fail)
        self.texts: list[str] = []
        self.filters: list[SearchFilter] = []

    async def dense_chunks(
        self, vector: Sequence[float], filt: SearchFilter, limit: int, num_candidates: int
    ) -> list[Hit]:
        self.filters.append(filt)
        if "dense_chunks" in self.fail:
            raise SearchError("vector index offline")
        return await self.inner.dense_chunks(vector, filt, limit, num_candidates)

    async def bm25_articles(self, text: str, filt: SearchFilter, limit: int) -> list[Hit]:
        self.texts.append(text)
        if "bm25_articles" in self.fail:
            raise SearchError("search index offline")
        return await self.inner.bm25_articles(text, filt, limit)

    async def dense_tickets(
        self,
        vector: Sequence[float],
        filt: SearchFilter,
        limit: int,
        min_quality: float,
        num_candidates: int | None = None,
    ) -> list[Hit]:
        if "dense_tickets" in self.fail:
            raise SearchError("tickets index offline")
        return await self.inner.dense_tickets(vector, filt, limit, min_quality, num_candidates)

    async def vocabulary(self) -> CorpusVocabulary:
        if "vocabulary" in self.fail:
            raise SearchError("cannot read the corpus")
        return await self.inner.vocabulary()


@pytest.fixture
async def local(store: Store) -> LocalSearch:
    await load_corpus(store)
    return await LocalSearch.build(store)


async def run(
    backend: object,
    original: str,
    condensed: str | None = None,
    *,
    plan: str | None = "pro",
    embedder: FakeEmbedder | None = None,
    reranker: FakeReranker | None = None,
    tuning: object = TUNED,
) -> object:
    return await retrieve(
        original,
        original if condensed is None else condensed,
        plan,
        "en",
        backend=backend,  # type: ignore[arg-type]
        embedder=embedder or FakeEmbedder(),
        reranker=reranker or FakeReranker(),
        tuning=tuning,  # type: ignore[arg-type]
        now=NOW,
    )


async def test_happy_path_exposes_every_stage(local: LocalSearch) -> None:
    reranker = FakeReranker({"AUTH_302 means": 0.92}, default=0.2)
    r = await retrieve(
        "AUTH_302 when I sign in with Okta",
        "AUTH_302 when I sign in with Okta",
        "pro",
        "en",
        backend=local,
        embedder=FakeEmbedder(),
        reranker=reranker,
        tuning=TUNED,
        now=NOW,
    )
    assert r.reason is None and r.errors == ()
    assert r.dense_chunks and r.bm25_articles and r.dense_tickets and r.fused
    assert r.bm25_articles[0].doc_id == "saml-signature-auth-302"
    assert len(r.reranked) <= TUNED.rerank_shortlist
    assert 0 < len(r.passages) <= TUNED.top_passages
    assert r.passages[0].hit.passage_id == "saml-signature-auth-302#1"
    assert r.top_rerank_score == pytest.approx(0.92)
    assert r.confidence == "strong"
    # the shortlist's 0.2-scored passages are below the weak threshold (0.45): not cited
    assert any((p.rerank_score or 0.0) < 0.45 for p in r.reranked)
    assert all((p.rerank_score or 0.0) >= 0.45 for p in r.passages)
    assert r.reranker == "fake"
    assert set(r.latency_ms) == set(LATENCY_STAGES)
    assert all(v >= 0 for v in r.latency_ms.values())
    assert r.latency_ms["total"] >= r.latency_ms["embed"]
    for stage in RANKED_STAGES:
        assert r.ranked_doc_ids(stage), stage
    assert r.ranked_doc_ids("fused_rerank")[0] == "saml-signature-auth-302"
    fused_ids = [c.hit.passage_id for c in r.fused]
    assert sorted(h.passage_id for h in r.ranked_hits("fused_rerank")) == sorted(fused_ids)
    with pytest.raises(ValueError):
        r.ranked_hits("nope")


async def test_fused_candidate_adds_up_article_and_dense_hit(local: LocalSearch) -> None:
    r = await run(local, "AUTH_302 means the SAML response signature did not verify")
    top = next(c for c in r.fused if c.passage_id == "saml-signature-auth-302#1")  # type: ignore[attr-defined]
    assert {"dense_chunks", "bm25_articles"} <= set(top.ranks)


async def test_search_uses_condensed_and_rerank_uses_original(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    embedder = FakeEmbedder()
    reranker = FakeReranker()
    only_original = dataclasses.replace(TUNED, rerank_with_condensed=False)
    r = await run(
        backend,
        "and it still fails?",
        "Does SSO sign-in fail with AUTH_302?",
        embedder=embedder,
        reranker=reranker,
        tuning=only_original,
    )
    assert backend.texts == ["Does SSO sign-in fail with AUTH_302?"]
    assert embedder.calls[0] == ["Does SSO sign-in fail with AUTH_302?"]
    # after the query, only the top passages' sentences (the answerability check) are embedded
    passages = " ".join(p.hit.text for p in r.reranked[:3])  # type: ignore[attr-defined]
    assert embedder.calls[1:] and all(
        " ".join(s.split()) in " ".join(passages.split()) for c in embedder.calls[1:] for s in c
    )
    assert reranker.calls[0][0] == "and it still fails?"
    assert (r.query, r.rerank_query) == (  # type: ignore[attr-defined]
        "Does SSO sign-in fail with AUTH_302?",
        "and it still fails?",
    )


async def test_rerank_reads_the_message_with_its_condensed_question(local: LocalSearch) -> None:
    reranker = FakeReranker()
    r = await run(
        local, "and it still fails?", "Does SSO sign-in fail with AUTH_302?", reranker=reranker
    )
    # the customer's own words first, then what they refer to (tuning.rerank_with_condensed)
    assert reranker.calls[0][0] == "and it still fails?\nDoes SSO sign-in fail with AUTH_302?"
    assert r.rerank_query == reranker.calls[0][0]  # type: ignore[attr-defined]
    same = FakeReranker()
    await run(local, "reset my password", "reset my password", reranker=same)
    assert same.calls[0][0] == "reset my password"  # said once when nothing was condensed


async def test_blank_original_reranks_against_condensed(local: LocalSearch) -> None:
    reranker = FakeReranker()
    await run(local, "  \n ", "reset my password", reranker=reranker)
    assert reranker.calls[0][0] == "reset my password"


async def test_blank_condensed_searches_with_original(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    await run(backend, "reset my password", "")
    assert backend.texts == ["reset my password"]


async def test_anonymous_visitor_gets_free_rung_english(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    await run(backend, "password", plan=None)
    assert backend.filters == [SearchFilter(audiences=("all",), locale="en")]


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t\r", "\x00\x01\x1b[0m", "\u200b\u202e"])
async def test_empty_or_invisible_query(
    local: LocalSearch, query: str, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = FakeEmbedder()
    with caplog.at_level(logging.INFO, logger="app.turn.retrieve"):
        r = await run(local, query, query, embedder=embedder)
    assert r.reason == "empty query"  # type: ignore[attr-defined]
    assert r.confidence == "none" and r.passages == () and r.fused == ()  # type: ignore[attr-defined]
    assert embedder.calls == []
    assert "empty query" in caplog.text


async def test_control_characters_are_stripped_before_search(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    reranker = FakeReranker()
    r = await run(backend, "reset\x00 my\x1b password\u200b\x07", reranker=reranker)
    assert backend.texts == ["reset my password"]
    assert reranker.calls[0][0] == "reset my password"
    assert r.passages  # type: ignore[attr-defined]


async def test_very_long_query_is_truncated_for_embedding_and_search(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    embedder = FakeEmbedder()
    reranker = FakeReranker()
    long = ("password reset " * 700)[:10_000]
    r = await run(backend, long, embedder=embedder, reranker=reranker)
    assert r.truncated  # type: ignore[attr-defined]
    assert len(embedder.calls[0][0]) <= TUNED.max_message_chars
    assert len(backend.texts[0]) <= TUNED.max_message_chars
    assert len(reranker.calls[0][0]) <= TUNED.max_message_chars
    assert r.passages and r.reason is None  # type: ignore[attr-defined]


async def test_query_matching_nothing(store: Store) -> None:
    empty = await LocalSearch.build(store)
    r = await run(empty, "anything at all")
    assert r.reason == "no matches" and r.confidence == "none"  # type: ignore[attr-defined]
    assert r.top_rerank_score is None  # type: ignore[attr-defined]


async def test_embedder_raising(local: LocalSearch, caplog: pytest.LogCaptureFixture) -> None:
    embedder = FakeEmbedder()
    embedder.fail_with = ProviderError("embedding endpoint timed out")
    with caplog.at_level(logging.INFO, logger="app.turn.retrieve"):
        r = await run(local, "reset my password", embedder=embedder)
    # no query vector: the lexical ranker alone still finds and reranks passages
    assert r.reason is None and r.passages  # type: ignore[attr-defined]
    assert r.dense_chunks == () and r.dense_tickets == () and r.bm25_articles  # type: ignore[attr-defined]
    assert r.errors == ("embed: ProviderError: embedding endpoint timed out",)  # type: ignore[attr-defined]
    assert "embedding failed" in caplog.text
    assert "reset my password" not in caplog.text  # the customer's words are not logged


async def test_embedder_returning_garbage(local: LocalSearch) -> None:
    class Broken(FakeEmbedder):
        async def embed_query(self, text: str) -> list[float]:
            return [float("nan")] * self.dimensions

    r = await run(local, "reset my password", embedder=Broken())
    assert r.errors == ("embed: empty or non-finite vector",)  # type: ignore[attr-defined]
    assert r.dense_chunks == () and r.bm25_articles  # type: ignore[attr-defined]


async def test_one_ranker_down_keeps_the_others(local: LocalSearch) -> None:
    backend = RecordingBackend(local, fail=["dense_chunks"])
    r = await run(backend, "AUTH_302 okta")
    assert r.reason is None and r.passages  # type: ignore[attr-defined]
    assert r.dense_chunks == ()  # type: ignore[attr-defined]
    assert len(r.errors) == 1 and "vector index offline" in r.errors[0]  # type: ignore[attr-defined]


async def test_all_rankers_down(local: LocalSearch) -> None:
    backend = RecordingBackend(local, fail=["dense_chunks", "bm25_articles", "dense_tickets"])
    r = await run(backend, "AUTH_302 okta")
    assert r.reason is not None and r.reason.startswith("search failed")  # type: ignore[attr-defined]
    assert r.confidence == "none"  # type: ignore[attr-defined]


async def test_reranker_failure_keeps_fused_order_with_no_confidence(local: LocalSearch) -> None:
    reranker = FakeReranker()
    reranker.fail_with = ProviderError("rerank quota exceeded")
    r = await run(local, "reset my password", reranker=reranker)
    assert r.passages and all(p.rerank_score is None for p in r.passages)  # type: ignore[attr-defined]
    assert (
        [p.hit.passage_id for p in r.passages]
        == [  # type: ignore[attr-defined]
            c.hit.passage_id
            for c in r.fused[: TUNED.top_passages]  # type: ignore[attr-defined]
        ]
    )
    assert r.confidence == "none" and r.top_rerank_score is None  # type: ignore[attr-defined]
    assert any("rerank quota exceeded" in e for e in r.errors)  # type: ignore[attr-defined]


async def test_unexpected_backend_bug_is_contained(local: LocalSearch) -> None:
    class Buggy(RecordingBackend):
        async def bm25_articles(self, text: str, filt: SearchFilter, limit: int) -> list[Hit]:
            return [object()]  # type: ignore[list-item]

    r = await run(Buggy(local), "password")
    assert r.reason == "internal error: AttributeError"  # type: ignore[attr-defined]
    assert r.confidence == "none"  # type: ignore[attr-defined]
    assert set(r.latency_ms) == set(LATENCY_STAGES)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("score", "band"), [(0.9, "strong"), (0.5, "weak"), (0.2, "none")])
async def test_band_follows_top_rerank_score(local: LocalSearch, score: float, band: str) -> None:
    r = await run(local, "reset my password", reranker=FakeReranker({"": score}))
    assert r.confidence == band and r.top_rerank_score == pytest.approx(score)  # type: ignore[attr-defined]


async def test_top_passages_and_shortlist_come_from_tuning(local: LocalSearch) -> None:
    tuning = dataclasses.replace(
        TUNED, rerank_shortlist=3, top_passages=2, rerank_reserved_per_ranker=0
    )
    reranker = FakeReranker()
    r = await run(local, "password reset link", reranker=reranker, tuning=tuning)
    assert len(reranker.calls[0][1]) == 3
    assert len(r.reranked) == 3 and len(r.passages) == 2  # type: ignore[attr-defined]


# --- clean_query -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  reset   my\tpassword \n", "reset my password"),
        ("AUTH_302\x00\x1b[31mred\x1b[0m", "AUTH_302 red"),
        ("reset\x00my\x7fpassword", "reset my password"),
        ("zero\u200bwidth", "zerowidth"),
        ("naïve café", "naïve café"),
        (None, ""),
    ],
)
def test_clean_query(raw: str | None, expected: str) -> None:
    assert clean_query(raw, 100) == (expected, False)


def test_clean_query_truncates_on_a_word_boundary() -> None:
    text, cut = clean_query("word " * 50, 42)
    assert cut and len(text) <= 42 and text.endswith("word")
    solid, cut = clean_query("x" * 50, 10)
    assert cut and solid == "x" * 10


SYNONYMS = SynonymTable((("QKP", "quokkaplan"),))


async def test_synonyms_expand_the_lexical_query_only(local: LocalSearch) -> None:
    for table, expect_top in ((SYNONYMS, "audit-log-export"), (EMPTY, None)):
        backend = RecordingBackend(local)
        embedder = FakeEmbedder()
        r = await retrieve(
            "QKP",
            "QKP",
            "enterprise",
            "en",
            backend=backend,  # type: ignore[arg-type]
            embedder=embedder,
            reranker=FakeReranker(),
            tuning=TUNED,
            now=NOW,
            synonyms=table,
        )
        assert backend.texts == [r.lexical_query]
        assert embedder.calls[0] == ["QKP"]  # the dense query stays the customer's words
        assert r.rerank_query == "QKP"
        if expect_top:
            assert r.lexical_query == "QKP\nquokkaplan"
            assert r.synonyms_added == ("quokkaplan",)
            assert r.bm25_articles[0].doc_id == expect_top
        else:
            assert r.lexical_query == "QKP" and r.bm25_articles == ()


async def test_a_misspelt_word_is_searched_as_the_corpus_word(local: LocalSearch) -> None:
    backend = RecordingBackend(local)
    r = await run(backend, "how do I reset my pasword", "how do I reset my pasword?")
    assert r.repairs == {"pasword": "password"}  # type: ignore[attr-defined]
    assert r.query == "how do I reset my password?"  # type: ignore[attr-defined]
    assert "password" in backend.texts[0] and "pasword" not in backend.texts[0]
    assert "pasword" not in r.rerank_query  # type: ignore[attr-defined]
    assert r.passages[0].hit.doc_id == "reset-password"  # type: ignore[attr-defined]


async def test_repair_never_lands_on_a_word_above_the_customers_rung(local: LocalSearch) -> None:
    # "quokkaplan" is written only in an Enterprise article
    pro = await run(local, "what is the quokkaplen tier", plan="pro")
    enterprise = await run(local, "what is the quokkaplen tier", plan="enterprise")
    assert pro.repairs == {}  # type: ignore[attr-defined]
    assert "quokkaplen" in pro.query  # type: ignore[attr-defined]
    assert enterprise.repairs == {"quokkaplen": "quokkaplan"}  # type: ignore[attr-defined]


async def test_no_repair_when_switched_off_or_the_corpus_words_cannot_be_read(
    local: LocalSearch,
) -> None:
    off = await run(
        local, "reset my pasword", tuning=dataclasses.replace(TUNED, repair_query_spelling=False)
    )
    assert off.repairs == {} and off.query == "reset my pasword"  # type: ignore[attr-defined]
    failing = await run(RecordingBackend(local, fail=["vocabulary"]), "reset my pasword")
    assert failing.repairs == {} and failing.reason is None  # type: ignore[attr-defined]
    assert failing.passages  # type: ignore[attr-defined]


async def test_a_message_in_another_language_than_the_corpus_is_not_repaired(
    local: LocalSearch,
) -> None:
    german = await run(local, "Wie setze ich mein pasword zurück, wenn ich es vergessen habe?")
    english = await run(local, "How do I reset my pasword if I have forgotten it?")
    assert german.repairs == {} and english.repairs == {"pasword": "password"}  # type: ignore[attr-defined]


def test_repair_spelling_and_with_repairs() -> None:
    speller = Speller.from_counts({"password": 3, "okta": 1}, {"the", "my", "in"})
    original, condensed, repairs = repair_spelling("my pasword", "my pasword in Okat", speller)
    assert (original, condensed, repairs) == (
        "my password",
        "my password in Okat",
        {"pasword": "password"},
    )
    assert with_repairs("Is my pasword (pasword) ok?", repairs) == "Is my password (password) ok?"
    assert with_repairs("paswords stay", repairs) == "paswords stay"  # whole words only


async def test_a_follow_up_left_as_written_is_searched_after_the_previous_message(
    local: LocalSearch,
) -> None:
    """The rankers read a follow-up the condenser did not rewrite after the customer's previous
    message; the answer and its band still read the question alone. A rewritten follow-up, a
    first message, or the setting switched off search the standalone question."""
    previous = "How do I export the audit log?"

    async def ask(original: str, condensed: str, prior: str, tuning: object = TUNED) -> object:
        backend = RecordingBackend(local)
        r = await retrieve(
            original,
            condensed,
            "pro",
            "en",
            backend=backend,  # type: ignore[arg-type]
            embedder=FakeEmbedder(),
            reranker=FakeReranker(),
            tuning=tuning,  # type: ignore[arg-type]
            now=NOW,
            previous_message=prior,
        )
        return r, backend.texts[-1]

    r, lexical = await ask("and as a CSV?", "and as a CSV?", previous)
    assert r.query == "and as a CSV?"  # type: ignore[attr-defined]
    assert r.searched == f"{previous} and as a CSV?"  # type: ignore[attr-defined]
    assert lexical.startswith(previous)
    assert r.rerank_query == f"and as a CSV?\n{previous} and as a CSV?"  # type: ignore[attr-defined]
    rewritten, _ = await ask("and as a CSV?", "Can I export the audit log as a CSV?", previous)
    assert rewritten.searched == "Can I export the audit log as a CSV?"  # type: ignore[attr-defined]
    first, _ = await ask("and as a CSV?", "and as a CSV?", "")
    assert first.searched == "and as a CSV?"  # type: ignore[attr-defined]
    off = dataclasses.replace(TUNED, search_context_words=0)
    alone, lexical = await ask("and as a CSV?", "and as a CSV?", previous, off)
    assert alone.searched == "and as a CSV?" and lexical == "and as a CSV?"  # type: ignore[attr-defined]


ROLE_ITEMS = [
    "Each person you invite has one role:",
    "1. **Owner** manages the vault and its members.",
    "2. **Writer** can add and edit notes.",
    "3. **Reader** can only open shared notes.",
]


def test_a_comparison_reads_one_statement_on_each_thing_it_names() -> None:
    assert compared_statements("How is a Writer different from a Reader?", ROLE_ITEMS) == [
        ROLE_ITEMS[2],
        ROLE_ITEMS[3],
    ]
    # the order of the question does not reorder the passage
    got = compared_statements("Can a Reader edit notes like a Writer?", ROLE_ITEMS)
    assert got == [ROLE_ITEMS[2], ROLE_ITEMS[3]]


@pytest.mark.parametrize(
    "question",
    [
        "What can a Writer do?",  # one name: its own statement is the evidence
        "How is a Writer different from a Guest?",  # a name the passage never says
        "how is a writer different from a reader?",  # nothing capitalised: no names to join
    ],
)
def test_no_joined_statement_without_two_names_each_said(question: str) -> None:
    assert compared_statements(question, ROLE_ITEMS) == []


def test_no_joined_statement_when_one_statement_names_both() -> None:
    both = [*ROLE_ITEMS, "A Writer can do everything a Reader can."]
    assert compared_statements("How is a Writer different from a Reader?", both) == []
