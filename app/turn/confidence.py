"""Answerability: is the answer in these passages, or are they only about the same topic?
(DESIGN 5.5). Pure.

A rerank score says how alike a question and a passage are; a same-topic passage that does not
hold the answer can score as high as the one that does. So the band comes from a small logistic
model over features of the whole retrieval, fitted on labelled answerable/unanswerable cases
(`scripts/evaluation/fit_confidence.py`; coefficients, version and thresholds in tuning.py):

    top        the best passage's rerank score
    margin     best minus second-best rerank score (one clear answer vs many look-alikes)
    coverage   share of the standalone question's content terms the best passage contains
               (identifier-like terms count double)
    entities   share of the question's names, numbers and identifiers the best passage contains
               (1 when it has none): a passage about another product or year is not the answer.
               At 0 (it names none of them) the band is at most `weak`, whatever the model says:
               measured on the MT-RAG tune part, no case with such a passage reached the strong
               region anyway, and a confident answer about something never named is a guess.
    agreement  share of the first-stage rankers that index the best passage's corpus that put
               its document in their own top 5: dense and BM25 for an article, the tickets
               ranker for a ticket (no article ranker can ever find a ticket; counting them
               capped every ticket answer below `strong`, imported or resolution-born)
    type_match the question asks for a price, a duration, a quantity, a date or a procedure and
               the best passage contains one (1), does not (0); 0.5 when the question asks for
               none of these
    sentence   the best single sentence of the top passages: max over sentences s of
               cos(E(question), E(s)) + w·(share of the question's content terms in s or its
               passage's heading). A passage about the right topic scores high on `top`; only
               one that holds the answer has a *sentence* that says what the question asks
               (MT-RAG, rank AUC answerable vs not: 0.85 against 0.80 for `top`, and it holds
               in each domain; see tuning.py). 0 when no sentence could be embedded.

    answerability = sigmoid(intercept + Σ wᵢ·featureᵢ)

Bands (`tuning.confidence[reranker]`): `strong` when answerability ≥ strong *and* the best
passage's own rerank score is at least `passage_floor`; `weak` when answerability ≥ weak; else
`none`. The model is fitted on one reranker's scores; a reranker without thresholds of its own is
scored by the calibrated fallback (see `retrieve`) and the band's reason says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from app.language.detect import detect_language
from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import is_code, term_set
from app.language.words import fold_terms
from app.search.answer_types import (
    TYPES,
    asked_types,
    asks_an_amount,
    missing_names,
    named_terms,
    shows_type,
    subject_terms,
    unstated_versions,
)
from tuning import AnswerabilityModel, ConfidenceBands, Tuning

Band = Literal["strong", "weak", "none"]

FEATURES: tuple[str, ...] = (
    "top",
    "margin",
    "coverage",
    "entities",
    "agreement",
    "type_match",
    "sentence",
)


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a top passage, with its embedding and its passage's heading line."""

    text: str
    heading: str
    vector: Sequence[float]


def _plain(text: str) -> str:
    return " ".join(text.split()).lower().strip(" ?.!")


def left_as_written(question: str, message: str) -> bool:
    """Whether the condenser's standalone question is the customer's message itself (case,
    spacing and end punctuation aside): a follow-up it did not rewrite."""
    return _plain(question) == _plain(message)


def context_query(question: str, message: str, previous_message: str, max_words: int) -> str | None:
    """The standalone question read after the customer's previous message (its last
    `max_words` words), for the `sentence` feature's second cosine — only when the condenser
    left the message as written (`question` is `message`): a rewrite that resolved the
    follow-up already carries what it needed from before, and the previous message would only
    add its topic words ("the refund policy" lifting a shipping sentence). None otherwise, and
    when there is no previous message."""
    words = previous_message.split()[-max_words:] if max_words > 0 else []
    prior = " ".join(words)
    if not prior or not _plain(question) or not left_as_written(question, message):
        return None
    return f"{prior} {question.strip()}"


def _cosines(m: np.ndarray, vector: Sequence[float]) -> np.ndarray:
    q = np.asarray(vector, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    return np.where(norms > 0, (m @ q) / np.where(norms > 0, norms, 1.0), 0.0)


def sentence_match(
    question: str,
    question_vector: Sequence[float],
    candidates: Sequence[Sentence],
    coverage_weight: float,
    *,
    synonyms: SynonymTable = EMPTY,
    language: str = "en",
) -> float:
    """The `sentence` feature: max over candidates of cosine + weight × term coverage. In a
    German or French corpus (`language`) terms are compared after that language's light
    stemming as well ("Rechnung" covers "Rechnungen", "finde" covers "finden"): the English
    suffix rules left them apart, so a German question the German article answers word for word
    covered half its terms. English is read as before (the model was fitted on English)."""
    if not candidates or not question_vector:
        return 0.0
    m = np.asarray([c.vector for c in candidates], dtype=np.float64)
    cosines = _cosines(m, question_vector)
    terms, stem = fold_terms(subject_terms(question), language)
    best = -1.0
    for c, cosine in zip(candidates, cosines, strict=True):
        covered = term_set(c.text) | term_set(c.heading)
        if synonyms:
            covered |= covered_terms(c.text, synonyms) | covered_terms(c.heading, synonyms)
        if stem is not None:
            covered = {stem(t) for t in covered}
        share = sum(1 for t in terms if t in covered) / len(terms) if terms else 0.0
        best = max(best, float(cosine) + coverage_weight * share)
    return best


@dataclass(frozen=True, slots=True)
class Scored:
    """What the answerability features read from a retrieval: no I/O, no provider types."""

    rerank_scores: Sequence[float]  # the reranked shortlist's scores, best first
    best_text: str  # the best passage's heading line + body
    best_doc: str
    dense_docs: Sequence[str]  # first-stage doc ids, rank order
    bm25_docs: Sequence[str]
    best_kind: str = "doc"  # "doc" | "ticket"
    ticket_docs: Sequence[str] = ()  # the tickets ranker's ids, rank order
    sentence: float = 0.0  # `sentence_match` over the top passages (0: not computed)
    # the tenant's synonym groups: the best passage covers a term it writes another way
    synonyms: SynonymTable = EMPTY
    texts: Sequence[str] = ()  # every passage the answer may quote (heading line + body)


@dataclass(frozen=True, slots=True)
class Confidence:
    band: Band
    answerability: float | None
    reason: str
    features: Mapping[str, float]


def answerability_features(question: str, scored: Scored) -> dict[str, float]:
    scores = list(scored.rerank_scores)
    top = scores[0] if scores else 0.0
    margin = top - scores[1] if len(scores) > 1 else top
    terms = subject_terms(question)
    present = term_set(scored.best_text) | covered_terms(scored.best_text, scored.synonyms)
    if terms:
        weight = {t: 2.0 if is_code(t) else 1.0 for t in terms}
        coverage = sum(weight[t] for t in terms if t in present) / sum(weight.values())
    else:
        coverage = 0.0
    entities = named_terms(question)
    entity_cov = sum(1 for t in entities if t in present) / len(entities) if entities else 1.0
    rankers = (
        (scored.ticket_docs,)
        if scored.best_kind == "ticket"
        else (scored.dense_docs, scored.bm25_docs)
    )
    agreement = sum(1 for docs in rankers if scored.best_doc in docs[:5]) / len(rankers)
    asked = asked_types(question)
    type_match = (
        sum(1.0 for k in asked if shows_type(k, scored.best_text)) / len(asked) if asked else 0.5
    )
    return {
        "top": top,
        "margin": margin,
        "coverage": coverage,
        "entities": entity_cov,
        "agreement": agreement,
        "type_match": type_match,
        "sentence": scored.sentence,
    }


# a price, duration or count (`TYPES`' first three) the best passage does not state rules a strong
# answer out (a date is any "when", a procedure any imperative verb: too loose to rule out)
_VALUE_TYPES: tuple[str, ...] = TYPES[:3]


def lacks_asked_value(question: str, best_text: str) -> str | None:
    """The kind of value (`_VALUE_TYPES`) the question asks for and the best passage does not
    state, or None. "Combien coûte le panneau ?" answered by the pairing page is a confident
    answer without the price; measured on the MT-RAG tune part, no strong case lost its band
    (the one strong case whose passage missed its asked type asked for a procedure). A price
    counts only when an amount is asked for (`asks_an_amount`: "how much", "what does it
    cost"), not when pricing is the topic ("can I change from metered pricing?": on the report
    part that reading cost one answerable case its strong band)."""
    asked = [k for k in asked_types(question) if k != "price" or asks_an_amount(question)]
    return next((k for k in _VALUE_TYPES if k in asked and not shows_type(k, best_text)), None)


def unmentioned(question: str, scored: Scored) -> list[str]:
    """The names the question asks about that no passage the answer could quote mentions
    (`answer_types.missing_names`): a device, product or feature the docs never name. A bare
    number is the customer's situation ("meeting room 4"), not what is asked, and a question
    whose identifiers ("AUTH_302") are all there is answered by them whatever else it names
    ("… when I sign in with Okta")."""
    texts = scored.texts or [scored.best_text]
    absent = missing_names(
        question, texts, scored.synonyms, language=detect_language(question) or "en"
    )
    absent = [w for w in absent if not w.isdigit()]
    codes = [t for t in named_terms(question) if is_code(t)]
    if absent and codes and not any(is_code(t) for w in absent for t in term_set(w)):
        return []
    return absent


def _doubt(question: str, scored: Scored, features: Mapping[str, float]) -> str | None:
    """Why an answer the model finds strong is not one, or None."""
    if features["entities"] == 0.0:
        return "the best passage names none of the question's names"
    if missing := lacks_asked_value(question, scored.best_text):
        return f"the best passage states no {missing} and one is asked"
    if versions := unstated_versions(question, [scored.best_text]):
        return f"the best passage does not state {', '.join(versions)}"  # about another release
    return None


def answerability(features: Mapping[str, float], model: AnswerabilityModel) -> float:
    z = model.intercept + sum(w * features.get(name, 0.0) for name, w in model.weights.items())
    z = max(-60.0, min(60.0, z))
    return 1.0 / (1.0 + math.exp(-z))


def top_score_band(top: float, bands: ConfidenceBands) -> Band:
    if top >= bands.strong:
        return "strong"
    return "weak" if top >= bands.weak else "none"


def decide(
    question: str,
    scored: Scored | None,
    calibration: str | None,
    tuning: Tuning,
    *,
    scored_by: str | None = None,
) -> Confidence:
    """The band for a retrieval whose passages `scored` holds, read against the thresholds of
    `calibration` (the reranker that produced the scores). `scored_by` names the active reranker
    when it was not calibrated and the scores come from the calibrated fallback instead.

    - No scored passage, or no thresholds for `calibration`: `none` (an uncalibrated score
      must not let the bot answer with confidence).
    - Thresholds with an answerability model: the model's probability against them, and the best
      passage's own score against `passage_floor` for `strong`.
    - Thresholds without a model: the top rerank score against them (the reason says so).
    """
    scores = list(scored.rerank_scores) if scored is not None else []
    if scored is None or not scores or scores[0] != scores[0]:
        return Confidence("none", None, "no scored passage", {})
    bands = tuning.confidence.get(calibration) if calibration else None
    if bands is None:
        return Confidence("none", None, f"reranker {calibration!r} is not calibrated", {})
    note = (
        f"; reranker {scored_by!r} is not calibrated, scored by {calibration!r}"
        if scored_by
        else ""
    )
    features = answerability_features(question, scored)
    top = features["top"]
    absent = unmentioned(question, scored)
    if absent:  # what the question is about is nowhere in what the answer could quote
        why = f"no passage mentions {', '.join(absent)}"
        return Confidence("none", None, why + note, features)
    if bands.model is None:
        band = top_score_band(top, bands)
        why = f"top rerank score {top:.2f} (no answerability model for {calibration!r})"
        return Confidence(band, None, why + note, features)
    p = answerability(features, bands.model)
    floor = bands.passage_floor
    doubt = _doubt(question, scored, features) if p >= bands.strong and top >= floor else None
    if doubt:
        return Confidence("weak", p, f"answerability {p:.2f}, but {doubt}{note}", features)
    if p >= bands.strong and top >= floor:
        return Confidence("strong", p, f"answerability {p:.2f} >= {bands.strong}{note}", features)
    if p >= bands.weak:
        why = (
            f"answerability {p:.2f} but the best passage scores {top:.2f} < floor {floor}"
            if p >= bands.strong
            else f"answerability {p:.2f} in [{bands.weak}, {bands.strong})"
        )
        return Confidence("weak", p, why + note, features)
    return Confidence("none", p, f"answerability {p:.2f} < {bands.weak}{note}", features)


def citation_floor(bands: ConfidenceBands) -> float:
    """The lowest rerank score a passage of a strong answer may have (DESIGN 5.5: a strong answer
    never cites a passage scored below the weak threshold). With a model, `weak` is a
    probability, so the floor is `passage_floor` (a rerank score, set above any weak passage);
    without one, `weak` is itself a rerank score and the floor is at least that."""
    if bands.model is not None:
        return bands.passage_floor
    return max(bands.passage_floor, bands.weak)
