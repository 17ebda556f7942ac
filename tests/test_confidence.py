"""Answerability features and bands (app/turn/confidence.py): pure, tables of cases."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from app.search.answer_types import named_terms
from app.search.text import sentences
from app.turn.confidence import (
    Scored,
    Sentence,
    answerability_features,
    asked_types,
    citation_floor,
    decide,
    sentence_match,
)
from tuning import TUNING, AnswerabilityModel, ConfidenceBands

MODEL = AnswerabilityModel(
    version="test-1",
    intercept=-4.0,
    weights=MappingProxyType({"top": 2.0, "coverage": 3.0, "type_match": 2.0}),
)
BANDS = ConfidenceBands(strong=0.6, weak=0.3, passage_floor=0.5, model=MODEL)
TUNED = dataclasses.replace(TUNING, confidence={"offline": BANDS}, confidence_fallback="offline")


def scored(text: str, scores: tuple[float, ...] = (0.8, 0.4)) -> Scored:
    return Scored(
        rerank_scores=scores,
        best_text=text,
        best_doc="doc-a",
        dense_docs=["doc-a", "doc-b"],
        bm25_docs=["doc-c", "doc-a"],
    )


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("How much does the premium tier cost per user?", ["price"]),
        ("How long does a refund take?", ["duration"]),
        ("How many days is the trial?", ["duration"]),
        ("How many devices can I pair?", ["quantity"]),
        ("When does the office open?", ["date"]),
        ("How do I reset my password?", ["procedure"]),
        ("Is the lamp waterproof?", []),
    ],
)
def test_asked_types(question: str, types: list[str]) -> None:
    assert asked_types(question) == types


def test_entities_skip_the_sentence_opening_word() -> None:
    assert named_terms("Does Zorblax support SAML in 2024?") == ["zorblax", "saml", "2024"]
    assert named_terms("does it work?") == []


def test_features_read_coverage_margin_agreement_and_type() -> None:
    f = answerability_features(
        "How much does the Zorblax premium tier cost?",
        scored("Zorblax premium tier\nThe premium tier costs $12 per user per month."),
    )
    assert f["top"] == 0.8 and f["margin"] == pytest.approx(0.4)
    assert f["coverage"] == 1.0 and f["entities"] == 1.0
    assert f["agreement"] == 1.0  # doc-a is in both first-stage top 5s
    assert f["type_match"] == 1.0
    same_topic = answerability_features(
        "How much does the Zorblax premium tier cost?",
        scored("Zorblax premium tier\nThe premium tier adds single sign-on and audit logs."),
    )
    assert same_topic["type_match"] == 0.0  # about the tier, but no price in it


def test_bands_from_the_model_and_the_passage_floor() -> None:
    question = "How much does the premium tier cost?"
    answer = "Premium tier\nThe premium tier costs $12 per user per month."
    strong = decide(question, scored(answer), "offline", TUNED)
    assert strong.band == "strong" and strong.answerability is not None
    assert "answerability" in strong.reason
    # same probability inputs, but the best passage's own score is under the floor: not strong
    floor = decide(question, scored(answer, (0.45, 0.1)), "offline", TUNED)
    assert floor.band != "strong"
    # a same-topic passage without the answer type
    topical = decide(question, scored("Premium tier\nIt adds audit logs."), "offline", TUNED)
    assert topical.band == "weak"  # -4 + 2·0.8 + 3·(2/3) + 0 → p 0.40: hedged, not strong
    assert decide(question, scored("Opening hours\nWe open at nine."), "offline", TUNED).band == (
        "none"
    )
    assert decide(question, None, "offline", TUNED).band == "none"


def test_uncalibrated_reranker_says_so() -> None:
    out = decide("anything?", scored("anything"), "mystery", TUNED)
    assert out.band == "none" and "not calibrated" in out.reason
    fallback = decide(
        "How much does the premium tier cost?",
        scored("Premium tier\nThe premium tier costs $12 per user per month."),
        "offline",
        TUNED,
        scored_by="voyage",
    )
    assert fallback.band == "strong" and "'voyage' is not calibrated" in fallback.reason


def test_a_passage_naming_none_of_the_questions_names_is_never_strong() -> None:
    question = "How much does the Zorblax premium tier cost?"
    out = decide(
        question,
        scored("Premium tier\nThe premium tier costs $12 per user per month."),
        "offline",
        TUNED,
    )
    assert out.features["entities"] == 0.0
    assert out.band == "weak" and "names none" in out.reason


def test_sentences_split_at_ends_and_lines_and_drop_fragments() -> None:
    text = "# Billing\n\nPlans renew monthly. The premium tier costs $12 per user.\n- pick a plan"
    assert sentences(text) == [
        "Plans renew monthly.",
        "The premium tier costs $12 per user.",
        "- pick a plan",
    ]  # "# Billing" (2 words) is not a sentence


def test_sentence_match_is_the_best_sentence_cosine_plus_weighted_coverage() -> None:
    question = "How much does the premium tier cost?"  # content terms: premium, tier, cost
    near = Sentence("The premium tier costs $12.", "Billing", (1.0, 0.0))
    far = Sentence("Audit logs are kept for a year.", "Premium tier", (0.0, 1.0))
    # near: cosine 1 + 0.5·(3/3); far: cosine 0 + 0.5·(2/3) (its heading names premium, tier)
    assert sentence_match(question, (1.0, 0.0), [near, far], 0.5) == pytest.approx(1.5)
    assert sentence_match(question, (0.0, 1.0), [near, far], 0.5) == pytest.approx(
        max(0.5, 1 + 0.5 * 2 / 3)
    )
    assert sentence_match(question, (1.0, 0.0), [], 0.5) == 0.0
    zero = Sentence("The premium tier costs $12.", "", (0.0, 0.0))  # a broken vector: cosine 0
    assert sentence_match(question, (1.0, 0.0), [zero], 0.0) == 0.0


def test_the_sentence_feature_moves_the_band() -> None:
    model = AnswerabilityModel(
        version="test-s", intercept=-3.0, weights=MappingProxyType({"sentence": 4.0})
    )
    tuned = dataclasses.replace(
        TUNING, confidence={"offline": ConfidenceBands(strong=0.6, weak=0.3, model=model)}
    )
    question = "How much does the premium tier cost?"
    text = "Premium tier\nThe premium tier costs $12 per user per month."
    with_answer = dataclasses.replace(scored(text), sentence=1.2)  # p = sigmoid(1.8) ≈ 0.86
    topical = dataclasses.replace(scored(text), sentence=0.5)  # p = sigmoid(-1) ≈ 0.27
    assert decide(question, with_answer, "offline", tuned).band == "strong"
    assert decide(question, topical, "offline", tuned).band == "none"
    assert answerability_features(question, with_answer)["sentence"] == 1.2


def test_a_strong_answer_cites_nothing_below_the_weak_threshold() -> None:
    # with a model, weak is a probability: the floor is the passage floor (a rerank score)
    assert citation_floor(BANDS) == 0.5
    # without one, weak is a rerank score, so it is the floor even when passage_floor is lower
    assert citation_floor(ConfidenceBands(strong=0.6, weak=0.45)) == 0.45
    assert citation_floor(ConfidenceBands(strong=0.6, weak=0.45, passage_floor=0.5)) == 0.5
