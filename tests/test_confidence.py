"""Answerability features and bands (app/turn/confidence.py): pure, tables of cases."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from types import MappingProxyType

import pytest

from app.language.text import sentences
from app.search.answer_types import named_terms, subject_terms
from app.turn.confidence import (
    Scored,
    Sentence,
    answerability_features,
    asked_types,
    citation_floor,
    context_query,
    decide,
    sentence_match,
    unmentioned,
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
        # German and French prices, durations and quantities
        ("Wie lange dauert eine Erstattung?", ["duration"]),
        ("Was kostet die Lampe?", ["price"]),
        ("Combien coûte la lampe ?", ["price"]),
        ("Combien de temps dure la livraison ?", ["duration"]),
        ("Wie viele Geräte kann ich koppeln?", ["quantity"]),
        # how soon something happens asks for a time
        ("How soon does the courier collect a return?", ["duration"]),
        ("Dans quel délai le remboursement arrive-t-il ?", ["duration"]),
        ("Wie bald kommt die Erstattung?", ["duration"]),
    ],
)
def test_asked_types(question: str, types: list[str]) -> None:
    assert asked_types(question) == types


def test_a_contraction_or_between_is_no_subject_term() -> None:
    """ "doesn't" left a "doesn" term and "between" a term no answer says: a statement covering
    everything the question is about covered only part of it."""
    assert subject_terms("What does the Pro plan have that Basic doesn't?") == [
        "pro",
        "plan",
        "basic",
    ]
    assert subject_terms("Is there a gap between the two exports?") == ["gap", "two", "export"]


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
    assert out.band == "none" and "no passage mentions Zorblax" in out.reason
    # another passage names it: the best one still does not, so the band is at most weak
    other = replace(
        scored("Premium tier\nThe premium tier costs $12 per user per month."),
        texts=["Premium tier\nThe premium tier costs $12 per user per month.", "Zorblax plans"],
    )
    out = decide(question, other, "offline", TUNED)
    assert out.band == "weak" and "names none" in out.reason


def test_a_question_about_something_no_passage_mentions_is_not_answered() -> None:
    """What the question names (a device, a product) that none of the passages mentions makes
    the band none, however well the passages match the rest of it; a synonym counts."""
    text = "Reading on e-readers\nYou can send books to an e-reader by email."
    out = decide("Can I send my books to a Kindle?", scored(text), "offline", TUNED)
    assert out.band == "none" and "Kindle" in out.reason
    covered = replace(scored(text), texts=[text, "Supported devices\nKindle, Kobo and others."])
    assert decide("Can I send my books to a Kindle?", covered, "offline", TUNED).band != "none"


@pytest.mark.parametrize(
    ("question", "text", "band"),
    [
        # a price asked, and the best passage states none: no confident answer
        ("How much does the premium tier cost?", "Premium tier\nThe premium tier has SSO.", "weak"),
        ("How much does the premium tier cost?", "Premium tier\nIt costs $12 per user.", "strong"),
        # pricing as the topic, no amount asked: nothing to gate
        ("Can I switch to metered pricing?", "Pricing\nSwitch from Billing any time.", "strong"),
        ("Combien coûte le panneau ?", "Panneau\nLe panneau clignote en bleu.", "weak"),
        ("Wie lange dauert die Kopplung?", "Kopplung\nDie Kopplung zeigt einen Code.", "weak"),
        ("Wie lange dauert die Kopplung?", "Kopplung\nDie Kopplung dauert 2 Minuten.", "strong"),
        # a count asked: a passage with no number, in digits or words, does not state it
        ("How many tablets can share one licence?", "Licence\nIt is easy to use.", "weak"),
        ("How many tablets can share one licence?", "Licence\nUp to four tablets.", "strong"),
        ("How many tablets can share one licence?", "Licence\nUp to 4 tablets.", "strong"),
        ("Combien de tablettes par licence ?", "Licence\nElle est simple.", "weak"),
    ],
)
def test_a_price_duration_or_count_asked_and_not_stated_is_never_strong(
    question: str, text: str, band: str
) -> None:
    model = AnswerabilityModel(version="t", intercept=5.0, weights=MappingProxyType({}))
    tuned = dataclasses.replace(
        TUNING,
        confidence={"offline": dataclasses.replace(BANDS, model=model)},
        confidence_fallback="offline",
    )
    out = decide(question, scored(text), "offline", tuned)
    assert out.band == band, out.reason
    if band == "weak":
        assert "states no" in out.reason


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


@pytest.mark.parametrize(
    ("question", "message", "previous", "max_words", "expected"),
    [
        # a follow-up the condenser left as written is read after the message it follows
        (
            "When did it end?",
            "When did it end?",
            "Tell me about the Hundred Years' War",
            40,
            "Tell me about the Hundred Years' War When did it end?",
        ),
        # case, spacing and closing punctuation do not make a rewrite
        ("when did it end", " When did  it end? ", "The war", 40, "The war when did it end"),
        # only the previous message's last words, whitespace collapsed
        (
            "When did it end?",
            "When did it end?",
            "first  second\nthird",
            2,
            "second third When did it end?",
        ),
        # a rewrite that resolved the follow-up already carries the context
        (
            "Is the refund policy's shipping refunded?",
            "does that include shipping?",
            "What's your refund policy?",
            40,
            None,
        ),
        # a first turn, a blank previous message, no words allowed, no question: nothing
        ("How much is it?", "How much is it?", "", 40, None),
        ("How much is it?", "How much is it?", "   ", 40, None),
        ("How much is it?", "How much is it?", "Tell me about plans", 0, None),
        ("   ", "   ", "Tell me about plans", 40, None),
    ],
)
def test_context_query(
    question: str, message: str, previous: str, max_words: int, expected: str | None
) -> None:
    assert context_query(question, message, previous, max_words) == expected


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


def test_a_number_or_a_found_identifier_does_not_gate_the_band() -> None:
    """A bare number is the customer's situation ("meeting room 4"), and a question whose
    identifiers the passages hold is answered by them whatever else it names."""
    text = "AUTH_302\nAUTH_302 means the SAML response signature did not verify."
    assert unmentioned("AUTH_302 when I sign in with Okta", scored(text)) == []
    assert unmentioned("How do I book meeting room 4?", scored("Booking\nOpen Book.")) == []
    assert unmentioned("Does AUTH_999 happen with Okta?", scored(text)) == ["AUTH_999", "Okta"]


def test_a_version_the_passages_never_state_is_unmentioned_though_its_digits_appear() -> None:
    """A version or a figure is named whole: "release 7.1" is not mentioned by a passage that
    holds a 7 and a 1 in other places ("7 days", "step 1"), nor by "17.1"; "7.1.2" mentions it."""
    text = "Updates\nUpdates install within 7 days. Step 1: open Devices. Release 17.1 adds maps."
    assert unmentioned("What changed in release 7.1?", scored(text)) == ["7.1"]
    assert unmentioned("What changed in release 7.1?", scored(text + " Release 7.1.2 too.")) == []
    assert unmentioned("How do I book meeting room 4?", scored(text)) == []


def test_a_version_the_best_passage_does_not_state_is_never_strong() -> None:
    """Another passage may hold the number in another sense ("Bluetooth 7.1"); the answer is
    the best passage, and a passage about the product but not about the release asked is
    no confident answer about that release."""
    model = AnswerabilityModel(version="t", intercept=5.0, weights=MappingProxyType({}))
    tuned = dataclasses.replace(
        TUNING,
        confidence={"offline": dataclasses.replace(BANDS, model=model)},
        confidence_fallback="offline",
    )
    general = "Updates\nThe tracker installs each release overnight, within 7 days of it."
    question = "What changed in tracker release 7.1?"
    out = decide(
        question,
        dataclasses.replace(scored(general), texts=[general, "Radio: 7.1"]),
        "offline",
        tuned,
    )
    assert out.band == "weak" and "7.1" in out.reason, out.reason
    notes = "Release notes\nRelease 7.1 adds offline maps."
    assert decide(question, scored(notes), "offline", tuned).band == "strong"
