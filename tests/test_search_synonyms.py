"""Synonym groups on the lexical side (app/language/synonyms.py): pure functions, table-tested."""

from __future__ import annotations

import dataclasses

import pytest

from app.language.analyzer import query_terms
from app.language.synonyms import EMPTY, SynonymTable, covered_terms, expand_query, member_problem
from app.language.text import content_terms
from app.providers.chat.offline import Reading, missing_names, synonym_terms
from app.providers.rerank.offline import lexical_features
from app.turn.confidence import Scored, answerability_features

TABLE = SynonymTable(
    (
        ("UK", "United Kingdom", "Great Britain"),
        ("2FA", "two-factor", "MFA"),
        ("SSO", "single sign-on"),
        ("Azure AD", "Entra ID"),
    )
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # a member as a whole word, any case: the other members are added, one per line
        ("How long does shipping to the UK take?", ["United Kingdom", "Great Britain"]),
        ("shipping to the uk", ["United Kingdom", "Great Britain"]),
        ("UK's delivery times", ["United Kingdom", "Great Britain"]),
        # a phrase, whatever separates its words; only the members the query lacks are added
        ("shipping to the united   kingdom", ["UK", "Great Britain"]),
        ("Two factor codes", ["2FA", "MFA"]),
        ("two-factor or 2fa?", ["MFA"]),
        ("Set up single-sign-on", ["SSO"]),
        # plurals match (the analyzer's light stemming), both groups of a query are expanded
        ("SSOs and MFA", ["2FA", "two-factor", "single sign-on"]),  # in the table's group order
        ("SSO with azure ad", ["single sign-on", "Entra ID"]),
        # not a whole word / not the whole phrase: nothing added
        ("Ukraine delivery", []),
        ("a duke of york", []),
        ("the kingdom of heaven", []),
        ("ssometimes", []),
        ("the Azure portal", []),
        ("", []),
    ],
)
def test_expansion_adds_the_other_members_of_matched_groups(
    query: str, expected: list[str]
) -> None:
    expanded = expand_query(query, TABLE)
    assert expanded == "\n".join([query, *expected])


def test_no_groups_no_expansion() -> None:
    assert expand_query("shipping to the UK", EMPTY) == "shipping to the UK"
    assert covered_terms("United Kingdom", EMPTY) == frozenset()


def test_expanded_terms_are_what_bm25_searches_and_additions_never_join_the_question() -> None:
    own = query_terms("error code 2fa")
    terms = query_terms(expand_query("error code 2fa", TABLE))
    assert terms[: len(own)] == own  # the customer's terms come first
    assert {"two-factor", "twofactor", "two", "factor", "mfa"} <= set(terms)
    # "code" + "2fa" on one line is a code written with a space (code2fa); an addition on its
    # own line never pairs with the question's last word
    assert "code2fa" in terms and "2famfa" not in terms and "codetwo" not in terms


@pytest.mark.parametrize(
    ("passage", "covers", "not_covers"),
    [
        ("| United Kingdom | DHL | 3–5 days |", {"uk", "kingdom", "great", "britain"}, {"mfa"}),
        ("Turn on two-factor authentication", {"2fa", "mfa"}, {"uk"}),
        ("In Microsoft Entra ID, map the identifier", set(content_terms("Azure AD")), {"sso"}),
        ("Kingdom hearts", set(), {"uk"}),
    ],
)
def test_a_passage_covers_the_terms_of_its_synonyms(
    passage: str, covers: set[str], not_covers: set[str]
) -> None:
    covered = covered_terms(passage, TABLE)
    assert covers <= covered
    assert not (not_covers & covered)


def test_the_reranker_counts_a_synonym_as_covering_the_question_term() -> None:
    terms = content_terms("How long does shipping to the UK take?")
    passage = "Shipping times\n| United Kingdom | DHL | 3–5 days |"
    without, *_ = lexical_features(terms, passage)
    with_groups, *_ = lexical_features(terms, passage, synonyms=TABLE)
    assert with_groups > without
    assert with_groups == pytest.approx(without + 1 / len(terms))  # exactly the term "uk"


def test_answerability_coverage_counts_synonyms() -> None:
    scored = Scored(
        rerank_scores=[0.8],
        best_text="Shipping times\n| United Kingdom | DHL | 3–5 days |",
        best_doc="d",
        dense_docs=["d"],
        bm25_docs=["d"],
    )
    question = "How long does shipping to the UK take?"
    plain = answerability_features(question, scored)
    grouped = answerability_features(question, dataclasses.replace(scored, synonyms=TABLE))
    assert grouped["coverage"] > plain["coverage"]


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        ("UK", None),
        ("single sign-on", None),
        ("", "is empty"),
        ("   ", "is empty"),
        ("the", "no searchable word"),
        ("--", "no searchable word"),
    ],
)
def test_member_problems(member: str, problem: str | None) -> None:
    found = member_problem(member)
    assert (found is None) if problem is None else (found is not None and problem in found)


@dataclasses.dataclass(frozen=True)
class _Passage:
    title: str
    text: str
    breadcrumb: str = ""
    kind: str = "doc"


def test_the_offline_answerer_reads_a_synonym_as_the_word_asked_about() -> None:
    question = "How long does delivery to the UK take?"
    passage = _Passage("Delivery times", "Delivery to the United Kingdom takes 2–4 business days.")
    # the reply no longer says the articles "don't mention UK" when they write United Kingdom
    assert missing_names(question, [passage]) == ["UK"]
    assert missing_names(question, [passage], TABLE) == []
    # a sentence's terms include its synonyms' (what the extractive answer scores against)
    grouped = Reading.of("en", None, TABLE)
    assert "uk" in synonym_terms(passage.text, grouped)
    assert synonym_terms(passage.text, Reading()) == set()
    assert synonym_terms("Delivery to Canada takes 4–7 days.", grouped) == set()
