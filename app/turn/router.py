"""The intent classifier: intent, sentiment and tool routing for one message, without an LLM
(rules that are the specification, then models over the embeddings: docs/language.md)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from app.language.detect import detect_language
from app.language.identifiers import Identifiers
from app.language.lexicon import alternation, matcher, word_set
from app.language.normalize import normalize
from app.language.shapes import REQUEST, ShapeRow, features, shape_rows, skeleton
from app.language.spelling import Speller
from app.language.utterance import asks_for_information, first_person
from app.providers.embeddings.base import Embedder
from app.providers.embeddings.local_minilm import dictionary_words
from app.providers.errors import ProviderError
from app.safety.screen import AI_ADDRESSED, instruction_reasons
from app.search.answer_types import asked_types, asks_an_amount
from app.tenant import POLICY_INTENTS, SENTIMENTS, Tenant, generic_tenant
from tuning import TUNING

Matrix = npt.NDArray[np.float64]
log = logging.getLogger(__name__)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _handoff(name: str) -> str:
    return alternation(f"handoff.{name}")


# English names the person after the verb ("talk to an agent", "transfer me to someone"); the
# German and French lists (`speak_any`, `person_any`) are read anywhere in the message ("mit
# einem Mitarbeiter sprechen")
_PEOPLE = rf"(?:(?:{_handoff('person_lead')})\s+)*(?:{_handoff('person')})s?"
_HUMAN_REQUEST = _rx(
    rf"\b(?:{_handoff('speak')})\s+(?:with|to)\s+{_PEOPLE}\b"
    rf"|\b(?:{_handoff('connect')})\s+(?:me|this|it)\b.{{0,20}}?\b{_PEOPLE}\b"
    rf"|\b(?:{_handoff('reach')})\s+(?:(?:me|us)\s+)?{_PEOPLE}\b"
    rf"|^\s*(?:{_handoff('alone')})[\s!.?]*$"
)
_OUTRIGHT = matcher("handoff.outright")
_SPEAK_DE_FR = matcher("handoff.speak_any")
_PERSON_DE_FR = matcher("handoff.person_any")


def explicit_human_request(text: str) -> bool:
    """The customer asks, in so many words, for a person (DESIGN 6.1 signal 2)."""
    text = text.replace("’", "'")
    if _HUMAN_REQUEST.search(text) or _OUTRIGHT.search(text):
        return True
    return bool(_SPEAK_DE_FR.search(text) and _PERSON_DE_FR.search(text))


def not_a_request(text: str, shape: str | None = None) -> str | None:
    """Why the message cannot be a request only a person may grant (its shape, or an instruction
    to the assistant, which no exemplar is), or None; see docs/language.md, "Shapes"."""
    if shape is not None and shape != REQUEST:
        return shape
    asked = asked_types(text)  # how soon, how many, what it costs: a value the docs state
    if {"duration", "quantity"} & set(asked) or ("price" in asked and asks_an_amount(text)):
        return "asks_a_value"
    if AI_ADDRESSED in instruction_reasons(text):
        return "instructs_the_assistant"
    return None


_PROFANITY = matcher("sentiment.profanity")
_ANGRY = matcher("sentiment.angry")
_FRUSTRATED = matcher("sentiment.frustrated")
_POSITIVE = matcher("sentiment.positive")
_NEGATIVE_CONTEXT = matcher("sentiment.negative_context")
# a token with a digit or an all-capital run (an error code, a command) names something to look
# up: never a bare acknowledgment, whatever the nearest exemplar says
_IDENTIFIER_LIKE = re.compile(r"\b(?=\w*\d)\w{2,}\b|\b[A-Z]{3,}\b")


_ACRONYMS = word_set("en", "acronyms")


def shouting(text: str) -> bool:
    """Most of the words in capitals (an acronym is no shouting)."""
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 3:
        return False
    upper = [w for w in words if w.isupper() and w not in _ACRONYMS]
    return len(upper) / len(words) >= 0.6


def lexicon_sentiment(text: str) -> tuple[str, str] | None:
    """(sentiment, rule) when a lexicon rule decides the sentiment, else None."""
    if _PROFANITY.search(text):
        return "angry", "profanity"
    if _ANGRY.search(text):
        return "angry", "angry_words"
    if shouting(text):
        return "angry", "all_caps"
    if _FRUSTRATED.search(text):
        return "frustrated", "frustrated_words"
    if _POSITIVE.search(text) and not _NEGATIVE_CONTEXT.search(text):
        return "positive", "positive_words"
    return None


# --- the classifier ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SoftmaxModel:
    """Multinomial logistic regression (L2), fitted by full-batch gradient descent. Pure numpy."""

    labels: tuple[str, ...]
    weights: Matrix  # (dims + 1, labels): the last row is the bias

    @classmethod
    def fit(
        cls,
        vectors: Matrix,
        labels: Sequence[str],
        *,
        groups: Sequence[str] | None = None,
        l2: float = 1e-3,
        steps: int = 400,
        rate: float = 2.0,
        scale: float = 8.0,
    ) -> SoftmaxModel:
        """`groups` (e.g. each exemplar's language) are reweighted to the same mix in every
        class, so that the group alone says nothing about the label."""
        classes = tuple(sorted(set(labels)))
        index = {c: i for i, c in enumerate(classes)}
        x = np.hstack([vectors * scale, np.ones((len(vectors), 1))])
        y = np.zeros((len(labels), len(classes)))
        y[np.arange(len(labels)), [index[lab] for lab in labels]] = 1.0
        # classes with few exemplars weigh as much as crowded ones
        counts = y.sum(axis=0)
        sample_weight = (y / counts).sum(axis=1) * len(labels) / len(classes)
        if groups is not None:
            sample_weight = sample_weight * _group_balance(labels, groups)
        w = np.zeros((x.shape[1], len(classes)))
        velocity = np.zeros_like(w)
        for _ in range(steps):
            p = _softmax(x @ w)
            grad = x.T @ ((p - y) * sample_weight[:, None]) / len(labels) + l2 * w
            velocity = 0.9 * velocity - rate * grad
            w = w + velocity
        return cls(classes, w)

    def probabilities(self, vector: Matrix, scale: float = 8.0) -> dict[str, float]:
        x = np.append(vector * scale, 1.0)
        p = _softmax((x @ self.weights)[None, :])[0]
        return {label: float(p[i]) for i, label in enumerate(self.labels)}


def _group_balance(labels: Sequence[str], groups: Sequence[str]) -> Matrix:
    """Per-sample factors giving every label the overall mix of groups (its total unchanged)."""
    # an English embedder puts German exemplars together whatever they ask: without this, the
    # intent holding most of them would pull every German message
    n = len(labels)
    overall = Counter(groups)
    per_label = Counter(labels)
    cell = Counter(zip(labels, groups, strict=True))
    factors = [
        (overall[g] / n) / (cell[(lab, g)] / per_label[lab])
        for lab, g in zip(labels, groups, strict=True)
    ]
    out = np.asarray(factors, float)
    # a label's own total weight stays what it was
    for lab in per_label:
        mask = np.asarray([x == lab for x in labels])
        out[mask] *= mask.sum() / out[mask].sum()
    return out


def _softmax(z: Matrix) -> Matrix:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: Matrix = e / e.sum(axis=1, keepdims=True)
    return out


def policy_phrase_intent(text: str, phrases: Mapping[str, Sequence[str]]) -> str | None:
    """The intent whose policy phrase the text contains (whole words), else None."""
    low = text.casefold()
    for intent, words in phrases.items():
        for phrase in words:
            if re.search(rf"(?<!\w){re.escape(phrase.casefold())}(?!\w)", low):
                return intent
    return None


@dataclass(frozen=True, slots=True)
class RouteDetail:
    """A route plus why: the rule that fired, or the classifier's top probabilities."""

    intent: str
    intent_score: float
    sentiment: str
    intent_rule: str | None
    sentiment_rule: str | None
    top: tuple[tuple[str, float], ...]  # (intent, probability), best first
    own_subscription: bool = False  # asks about their own plan, seats or renewal


@dataclass(frozen=True, slots=True)
class _Models:
    intent: SoftmaxModel
    subscription: SoftmaxModel | None
    moods: tuple[tuple[str, ...], Matrix]
    shapes: SoftmaxModel | None = None


class Router:
    """Intent, sentiment and tool routing from the tenant's exemplars over an `Embedder`."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        tenant: Tenant | None = None,
        intent_exemplars: Mapping[str, Sequence[str]] | None = None,
        sentiment_exemplars: Mapping[str, Sequence[str]] | None = None,
        escalation_min_probability: float | None = None,
        sentiment_min_similarity: float = 0.55,
        sentiment_margin: float = 0.05,
        tool_exemplars: Mapping[str, Sequence[str]] | None = None,
        dictionary: Collection[str] | None = None,
        shapes: Sequence[ShapeRow] | None = None,
    ) -> None:
        self.tenant = tenant or generic_tenant()
        self.ids = Identifiers(self.tenant)
        if intent_exemplars is None:
            intent_exemplars = self.tenant.training_exemplars()
        if sentiment_exemplars is None:
            sentiment_exemplars = self.tenant.sentiment_exemplars
        unknown = (set(intent_exemplars) - set(self.tenant.intents)) | (
            set(sentiment_exemplars) - set(SENTIMENTS)
        )
        if unknown:
            raise ValueError(f"exemplars for unknown labels: {sorted(unknown)}")
        self.embedder = embedder
        self.escalation_min_probability = (
            TUNING.escalation_min_probability
            if escalation_min_probability is None
            else escalation_min_probability
        )
        self.escalating = frozenset(self.tenant.escalate_intents) & POLICY_INTENTS
        self.sentiment_min_similarity = sentiment_min_similarity
        self.sentiment_margin = sentiment_margin  # how far a mood must beat `neutral` to count
        self._intents = {k: tuple(v) for k, v in intent_exemplars.items() if v}
        self._moods = {k: tuple(v) for k, v in sentiment_exemplars.items() if v}
        if tool_exemplars is None:
            tool_exemplars = self.tenant.tool_exemplars
        self._subscription = tuple(tool_exemplars.get("lookupSubscription", ()))
        exemplar_texts = [t for ts in (*self._intents.values(), self._subscription) for t in ts]
        self.speller = Speller(
            exemplar_texts, dictionary_words() if dictionary is None else dictionary
        )
        self._shape_rows = shape_rows() if shapes is None else tuple(shapes)
        self._models: _Models | None = None
        self._lock = asyncio.Lock()

    async def warm(self) -> None:
        """Embed the exemplars and fit the models now (the first `route` would otherwise)."""
        await self._load()

    async def _load(self) -> _Models:
        if self._models is not None:
            return self._models
        async with self._lock:
            if self._models is None:
                texts = [t for ts in self._intents.values() for t in ts]
                labels = [lab for lab, ts in self._intents.items() for _ in ts]
                mood_texts = [t for ts in self._moods.values() for t in ts]
                mood_labels = tuple(lab for lab, ts in self._moods.items() for _ in ts)
                sub = [t for t in self._subscription if t not in texts]
                # the exemplars pass through the same amount-stripping as the messages
                stored = [strip_amounts(t) for t in texts + sub]
                vectors = _normalise(np.asarray(await self.embedder.embed_documents(stored), float))
                moods = _normalise(
                    np.asarray(await self.embedder.embed_documents(mood_texts), float)
                )
                languages = [self._language(t) for t in texts]
                intent = await asyncio.to_thread(
                    partial(SoftmaxModel.fit, groups=languages), vectors[: len(texts)], labels
                )
                subscription = None
                if self._subscription:
                    positive = set(self._subscription)
                    sub_labels = ["yes" if t in positive else "no" for t in texts] + ["yes"] * len(
                        sub
                    )
                    subscription = await asyncio.to_thread(SoftmaxModel.fit, vectors, sub_labels)
                shapes = await self._fit_shapes()
                self._models = _Models(intent, subscription, (mood_labels, moods), shapes)
            return self._models

    async def _fit_shapes(self) -> SoftmaxModel | None:
        """The shape model: the rows of `shapes.yaml`, each embedded with its skeleton."""
        rows = self._shape_rows
        if not rows:
            return None
        texts = [strip_amounts(r.message) for r in rows]
        both = await self.embedder.embed_documents(texts + [skeleton(t) for t in texts])
        vectors = _normalise(np.asarray(both, float))
        x = features(vectors[: len(rows)], vectors[len(rows) :])
        return await asyncio.to_thread(SoftmaxModel.fit, x, [r.shape for r in rows])

    async def shape(self, text: str) -> str | None:
        """The shape the model reads in one message (`app/language/shapes.yaml`)."""
        text = strip_amounts(normalize(text).strip())
        models = await self._load()
        query = _normalise(np.asarray(await self.embedder.embed_query(text), float))[0]
        return await self._shape(text, query, models)

    async def _shape(self, text: str, query: Matrix, models: _Models) -> str | None:
        """The message's shape (`app/language/shapes.yaml`), or None without a shape model."""
        if models.shapes is None:
            return None
        bare = await self.embedder.embed_query(skeleton(strip_amounts(text)))
        probs = models.shapes.probabilities(features(query, _normalise(np.asarray(bare, float))[0]))
        return max(probs, key=lambda s: probs[s])

    def _not_a_name(self, words: str) -> bool:
        """Capitalised words that are the tenant's product or plan, not a person's name."""
        plans = {p.casefold() for p in self.tenant.plans}
        return bool(self.ids.products(words)) or any(w.casefold() in plans for w in words.split())

    def _language(self, text: str) -> str:
        """An exemplar's language for balancing the fit (the default when too short to tell)."""
        return detect_language(text, self.tenant.locales) or self.tenant.default_locale

    async def route(self, text: str) -> RouteDetail:
        # typos repaired for routing only (the caller keeps the customer's words); the dictionary
        # is English, so a message that reads as another language is left as typed
        text = without_personal_details(normalize(text).strip(), self._not_a_name)
        # a policy phrase as written is never "repaired" away ("anwalt" is not a typo of "want")
        phrase = policy_phrase_intent(text, self.tenant.policy_phrases)
        if phrase is None and detect_language(text, self.tenant.locales) in (None, "en"):
            text = self.speller.repair(text)
        if not re.search(r"\w", text):
            return RouteDetail("other", 0.0, "neutral", "empty", None, ())
        text = self.ids.with_product_names(text)
        models = await self._load()
        try:
            vector = await self.embedder.embed_query(strip_amounts(text))
        except (ProviderError, TimeoutError) as exc:
            # the embedding provider is down or out of time: the rules still route
            log.warning("router embedding failed, routing by rules only: %r", exc)
            return self._rules_only(text)
        query = _normalise(np.asarray([vector], float))[0]

        probs = models.intent.probabilities(query)
        top = tuple(sorted(probs.items(), key=lambda kv: -kv[1])[:3])
        own_subscription = (
            models.subscription is not None
            and self.tenant.capabilities.subscriptions
            # their OWN plan: "what is the maximum current of X" is near no subscription
            # exemplar's topic, yet an unfamiliar message can land anywhere on a two-way model
            and models.subscription.probabilities(query)["yes"] >= 0.7
            and first_person(text)
        )
        # the shape is read only when it can change the route (one more embedding)
        least = self.escalation_min_probability
        may_escalate = any(probs.get(i, 0.0) >= least for i in self.escalating)
        shape = await self._shape(text, query, models) if may_escalate or own_subscription else None
        # a where-to-find question ("où est ma facture ?") asks where the product shows
        # something: the help centre says where; the plan record holds no invoice or page
        own_subscription = own_subscription and shape != "question_where_to_find"

        intent, score, rule = self._apply_rules(text, self._decide(probs, text, shape))
        mood = lexicon_sentiment(text)  # the model's reading only when no lexicon rule decides
        sentiment, sentiment_rule = mood or (self._mood(models.moods, query), None)
        return RouteDetail(intent, score, sentiment, rule, sentiment_rule, top, own_subscription)

    def _rules_only(self, text: str) -> RouteDetail:
        """A route without an embedding: the rules' intent and mood, else `other` and neutral
        (score 0, so nothing downstream mistakes it for a confident classification)."""
        intent, score, rule = self._apply_rules(text, None)
        sentiment, sentiment_rule = lexicon_sentiment(text) or ("neutral", None)
        return RouteDetail(intent, score, sentiment, rule, sentiment_rule, ())

    def _apply_rules(
        self, text: str, classified: tuple[str, float, str | None] | None
    ) -> tuple[str, float, str | None]:
        """(intent, score, rule): a policy phrase, an acknowledgment or a greeting, else the
        classifier's choice (None: not embedded); an explicit ask for a person then wins over
        anything but a policy intent (DESIGN 6.1 checks policy first)."""
        rule: str | None = None
        phrase = policy_phrase_intent(text, self.tenant.policy_phrases)
        if phrase is not None:
            intent, score, rule = phrase, 1.0, "policy_phrase"
        elif looks_like_acknowledgment(text):
            intent, score, rule = "acknowledgment", 1.0, "acknowledgment"
        elif is_greeting(text):
            intent, score, rule = "other", 1.0, "greeting"
        elif classified is not None:
            intent, score, rule = classified
        else:
            intent, score, rule = "other", 0.0, "no-embedding"
        if explicit_human_request(text) and intent not in self.escalating:
            intent, score, rule = "human_handoff", 1.0, "human_request"
        return intent, score, rule

    def _decide(
        self, probs: Mapping[str, float], text: str, shape: str | None = None
    ) -> tuple[str, float, str | None]:
        """The most probable intent; an escalating one only above its minimum probability, and
        only for a message that can be a request (see `not_a_request`). The rule is the reason
        an escalating intent ranked above the one returned was passed over, else None."""
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        passed_over: str | None = None
        not_request = not_a_request(text, shape)
        # a question, a long message or a complaint is never a bare acknowledgment
        no_ack = (
            "?" in text
            or len(text.split()) > 8
            or bool(_NEGATIVE_CONTEXT.search(text))
            or asks_for_information(text)
            or bool(_IDENTIFIER_LIKE.search(text))
        )
        for label, p in ranked:
            if label == "acknowledgment" and no_ack:
                continue
            if label in self.escalating:
                if p < self.escalation_min_probability:
                    continue
                if not_request is not None:
                    passed_over = passed_over or not_request
                    continue
            return label, p, passed_over
        return "other", 0.0, passed_over

    def _mood(self, bank: tuple[tuple[str, ...], Matrix], query: Matrix) -> str:
        labels, vectors = bank
        if not labels:
            return "neutral"
        sims = vectors @ query
        per_label: dict[str, float] = {}
        for label, sim in zip(labels, sims, strict=True):
            per_label[label] = max(per_label.get(label, -1.0), float(sim))
        best = max(per_label, key=lambda lab: per_label[lab])
        if best == "neutral" or per_label[best] < self.sentiment_min_similarity:
            return "neutral"
        if per_label[best] - per_label.get("neutral", -1.0) < self.sentiment_margin:
            return "neutral"
        return best


_ACK = _rx(rf"^\s*(?:(?:{alternation('social.acknowledgment')})[\s,.!:)]*)+$")
_CLOSING_THANKS = _rx(rf"\b(?:{alternation('social.closing_thanks')})[\s,.!:)]*$")
# a question about the assistant itself ("who are you?", "wer bist du?", "qui êtes-vous ?") is
# answered like a greeting: with what it can help with
_GREETING = _rx(
    rf"^\s*(?:{alternation('social.greeting')})(?:\s+(?:{alternation('social.greeting_to')}))?"
    rf"[\s,.!]*$|^\W*(?:{alternation('social.about_assistant')})\W*$"
)


def looks_like_acknowledgment(text: str) -> bool:
    """Thanks, okay, 'that fixed it' and nothing more, or a longer message closing with thanks
    that asks nothing and reports nothing still wrong."""
    if _ACK.match(text):
        return True
    return bool(
        _CLOSING_THANKS.search(text)
        and "?" not in text
        and not _NEGATIVE_CONTEXT.search(text)
        and len(text) <= 200
    )


def is_greeting(text: str) -> bool:
    """A greeting, or a question about the assistant itself."""
    return bool(_GREETING.match(text))


# A name as people write their own: one to three capitalised words (never a code or a number).
_NAME = r"[A-ZÄÖÜÉÈ][a-zäöüßéèêëàâçîïôûù'-]+(?:[ \t]+[A-ZÄÖÜÉÈ][a-zäöüßéèêëàâçîïôûù'-]+){0,2}"
_SELF_INTRODUCTION = re.compile(
    r"(?<!\w)(?i:my name is|my name's|i am|i'm|ich bin|ich heiße|mein name ist|"
    r"hier spricht|je m'appelle|je suis|moi c'est)\s+(" + _NAME + r")"
)
_SIGN_OFF = re.compile(
    rf"(?:(?<!\w)(?i:{alternation('social.sign_off')})[,!.]?|[-–—])\s+({_NAME})\s*[.!]?\s*$"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w-])")


def without_personal_details(text: str, keep: Callable[[str], bool] = lambda _: False) -> str:
    """The message without an email address or the customer's own name (after "I'm", "ich bin"…,
    or in a sign-off), so "I'm Bill Chase" does not lean to billing; `keep` spares non-names."""
    text = _EMAIL.sub(" ", text.replace("’", "'"))

    def drop(m: re.Match[str]) -> str:
        name = m.group(1)
        return m.group(0) if keep(name) else m.group(0)[: m.start(1) - m.start(0)].rstrip()

    text = _SIGN_OFF.sub(drop, _SELF_INTRODUCTION.sub(drop, text))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


_MONEY = _rx(rf"(?<![\w-])(?:[$€£¥]\s?\d[\d,.]*|\d[\d,.]*\s?(?:{alternation('units.currency')})\b)")


def strip_amounts(text: str) -> str:
    """Each money amount as "an amount": a large figure pulls an embedding towards billing."""
    return _MONEY.sub("an amount", text)


def _normalise(matrix: Matrix) -> Matrix:
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = matrix / norms
    return result
