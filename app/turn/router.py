"""The semantic router: intent and sentiment for one message, without a language model.

Two layers, checked in this order:

1. **Lexicon rules** (pure functions below) for what exemplars cannot be trusted with: words
   that carry an authority boundary ("chargeback", "subpoena", "GDPR", "talk to a human"), the
   line between *asking about* a policy and *asking for* the action, and the typographic signs
   of anger (profanity, ALL CAPS, "!!!").
2. **Nearest exemplars**: the message is embedded and compared with the example utterances of
   `app.turn.exemplars`; the k nearest vote, weighted by cosine similarity. Below a minimum
   similarity the intent is `other` and the sentiment `neutral`. An escalating intent (or an
   acknowledgment) may only win the vote when the message also contains one of its trigger
   words, so a neighbour in embedding space alone never hands a conversation to a person.

Exemplar vectors are computed once, lazily, through the `Embedder` protocol, and cached on the
router. Exemplars are the stored side (`embed_documents`); a customer message is embedded with
`embed_query`, like a search query: that keeps the document cache (which persists the corpus) free
of customer messages, and lets the turn reuse the vector when retrieval embeds the same text.
For MiniLM both calls give the same vector.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from app.providers.embeddings.base import Embedder
from app.providers.errors import ProviderError
from app.turn.clamp import INTENTS, SENTIMENTS
from app.turn.exemplars import INTENT_EXEMPLARS, SENTIMENT_EXEMPLARS

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float64]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# --- lexicon -----------------------------------------------------------------------------------

_PEOPLE = (
    r"(?:a |an |the |some |your |real |actual |live )*(?:human|person|people|agent|"
    r"representative|rep|operator|someone|somebody|staff|manager|supervisor|advisor|adviser|"
    r"customer (?:service|support|care)(?: team| rep| agent)?|support (?:team|staff|person)|"
    r"employee|member of (?:your )?staff)s?"
)
_HUMAN_REQUEST = [
    _rx(
        r"\b(?:talk|speak|chat|converse|communicate|get in touch)\w*\s+(?:with|to)\s+"
        + _PEOPLE
        + r"\b"
    ),
    _rx(
        r"\b(?:connect|transfer|put|pass|forward|escalate|hand)\w*\s+(?:me|this|it)\b.{0,20}?\b"
        + _PEOPLE
        + r"\b"
    ),
    _rx(r"\b(?:contact|reach|call|get|need|want)\w*\s+(?:me\s+|us\s+)?" + _PEOPLE + r"\b"),
    _rx(r"\b(?:real|actual|live)\s+(?:human|person|agent|people)\b"),
    _rx(r"\bhuman (?:please|pls|now)\b|^\s*(?:human|agent|operator|representative)[\s!.?]*$"),
    _rx(r"\b(?:call|ring|phone) me\b|\bcall me back\b|\bgive me a call\b"),
    _rx(r"\bescalate (?:this|it|my (?:case|issue|ticket))\b"),
    _rx(r"\bnot (?:a |another |talk(?:ing)? to a )?(?:bot|robot|machine)\b"),
]
_HUMAN_NOT_REQUEST = _rx(
    # talking *about* people in the product: seats, guests, visitors, team members
    r"\b(?:add|invite|remove|assign|book for|seats? for|visitor|guest|host)\w*\s+(?:a |an |the )?"
    r"(?:person|people|someone|somebody|user)\b"
)


def explicit_human_request(text: str) -> bool:
    """The customer asks, in so many words, for a person (DESIGN 6.1 signal 2)."""
    if _HUMAN_NOT_REQUEST.search(text) and not _rx(r"\b(?:human|agent|representative)\b").search(
        text
    ):
        return False
    return any(p.search(text) for p in _HUMAN_REQUEST)


_LEGAL = _rx(
    r"\b(?:lawyers?|attorneys?|solicitors?|subpoena\w*|lawsuits?|sue|suing|sued|litigation|"
    r"legal (?:action|department|team|notice|counsel|proceedings?)|court order|"
    r"breach of contract|cease and desist|law enforcement|data protection (?:authority|"
    r"regulator|officer)|small claims|take (?:you|this) to court)\b"
)
_DISPUTE = _rx(
    r"\b(?:charge ?backs?|disput\w*|charged (?:me )?(?:twice|two times|double)|double[- ]?charg\w*|"
    r"unauthori[sz]ed (?:charge|payment|transaction|debit)s?|(?:did ?n[o']?t|never) authori[sz]e|"
    r"fraudulent (?:charge|payment|transaction)s?|overcharg\w*|charged (?:me )?(?:again )?after "
    r"(?:i |we )?cancel\w*|billed (?:me |us )?after (?:i |we )?cancel\w*)"
)
_GDPR = _rx(r"\b(?:gdpr|ccpa|right to (?:be forgotten|erasure)|data erasure|erasure request)\b")
_DELETE_VERB = (
    r"(?:delet\w*|eras\w*|remov\w*|wip\w*|purg\w*|clos\w*|deactivat\w*|get rid of|destroy\w*|"
    r"terminat\w*)"
)
_DELETE_OBJECT = (
    r"(?:(?:my|our|mine|the|this|that|a|an|his|her|their|all)\s+(?:\w+\s+){0,2})?"
    r"(?:account|profile|personal (?:data|info\w*|details)|data|information|workspace|"
    r"user (?:account|profile|data)|records?|login)s?"
)
_DELETION = _rx(rf"\b{_DELETE_VERB}\s+(?:of\s+)?{_DELETE_OBJECT}\b")
_DELETION_NOT = _rx(
    r"\b(?:booking|reservation|meeting|room|desk|floor|visitor|guest|user from|users from|"
    r"member from|seat|calendar|report|photo|file|attachment|event|recurring)s?\b"
)
_ASK_ABOUT = _rx(
    r"\b(?:polic(?:y|ies)|(?:in|under) (?:which|what) (?:cases?|situations?|circumstances?)|"
    r"(?:what|which) happens|eligib\w*|guarantee|terms|conditions|"
    r"(?:do|does|will) (?:you|harborline|they) (?:offer|give|provide|allow|do|have|accept)|"
    r"are (?:refunds|cancellations) (?:possible|allowed|available)|how long do you (?:keep|retain)|"
    r"retention|am i (?:able|allowed|entitled)|can i (?:get|ask for|request) a refund if|"
    r"is it possible to (?:get|ask for|request) (?:a )?refund)"
)
_FEE = _rx(r"\b(?:fees?|charges?|penalt\w*|cost\w*|price\w*|how much)\b")
_REFUND_WORD = _rx(
    r"\b(?:refund\w*|money back|reimburs\w*|restitution\w*|rebate\w*|compensat\w*|"
    r"credit (?:my|our|the) (?:account|card)|cash back)\b"
)
_REFUND_STATUS = _rx(
    r"\b(?:status|processed|track\w*|still waiting|waiting (?:for|on)|been (?:issued|sent|paid)|"
    r"where(?:'s| is)|when will (?:i|we) (?:get|receive|see)|how long|expect\w*|"
    r"updates? (?:on|about)|arriv\w*|show up|come through|pending|approved|promised)\b"
)
_CANCEL_WORD = _rx(
    r"\b(?:cancel\w*|terminat\w*|(?:do ?n[o']?t|not|stop(?: the)?) (?:auto[- ]?)?renew\w*|"
    r"end (?:my|our|the) (?:subscription|plan|contract)|stop (?:my|our|the) "
    r"(?:subscription|plan|billing))\b"
)
_CANCEL_ORDER = _rx(
    r"\b(?:orders?|purchases?|shipments?|deliver\w*|ORD-\d+|items? i (?:bought|ordered))\b"
)
_EXIT_FEE = _rx(
    r"\b(?:early (?:exit|termination|cancell?ation|withdrawal)|withdrawal|exit|termination|"
    r"cancell?ation)\s+(?:fees?|charges?|penalt\w*|costs?)\b"
)
_ACCOUNT_OBJECT = _rx(r"\b(?:my|our|the|this|that|a|an)\s+(?:\w+\s+)?(?:account|profile|login)\b")
_CANCEL_OWN = _rx(
    r"\b(?:my|our|the|this|that)\s+(?:\w+\s+){0,2}(?:subscription|plan|contract|membership|"
    r"account|licen[cs]es?|seats?|renewal)\b"
)
_CANCEL_NOT = _rx(
    r"\b(?:booking|reservation|meeting|event|invite|invitation|visit|check[- ]?in|desk|room|"
    r"recurring|series|newsletter|emails?|notifications?)s?\b"
)
_HOW_TO_CANCEL = _rx(
    r"^\W*(?:and |so |but )?(?:how (?:do|can|would|could|does) (?:i|we|you|one|a customer)|"
    r"how to|what(?:'s| is) the (?:process|procedure) to) cancel(?:l?ing)?"
    r"(?: anything| in general)?\W*$|\bhow does (?:cancell?ing|cancell?ation) work\b"
)
_UNSUBSCRIBE = _rx(
    r"\b(?:unsubscrib\w*|newsletters?|marketing (?:e-?mails?|messages)|mailing list|"
    r"promotional (?:e-?mails?|messages))\b"
)

_PROFANITY = _rx(
    r"\b(?:f+u+c+k+\w*|sh[i1]t+\w*|bullsh\w*|damn\w*|goddam\w*|crap\w*|bloody|bastard\w*|"
    r"asshole\w*|wtf|ffs|piss\w*|hell)\b"
)
_ANGRY = _rx(
    r"\b(?:unacceptable|outrageous|ridiculous|furious|livid|disgust\w*|pathetic|useless|"
    r"worst|scam\w*|rip[- ]?off|thie(?:f|ves)|stole|garbage|rubbish|incompetent|joke of a|"
    r"sick (?:and tired )?of|how dare)\b"
)
_FRUSTRATED = _rx(
    r"\b(?:still (?:not|doesn'?t|does not|isn'?t|won'?t|can'?t|broken|waiting|no|fail\w*|"
    r"crash\w*|offline|down|happening)|again\?|(?:second|third|"
    r"fourth|fifth|\d+(?:st|nd|rd|th)) time|tried everything|keeps? (?:happening|failing|"
    r"crashing)|frustrat\w*|annoy\w*|fed up|tired of|for (?:days|weeks|hours)|waste of time|"
    r"didn'?t help|not helpful|already (?:told|tried|did)|nobody|no one (?:has )?(?:replied|"
    r"answered|helped)|why (?:is|does) (?:this|it) (?:so|always))\b"
)
_POSITIVE = _rx(
    r"\b(?:thanks?|thank you|thx|ty|cheers|appreciated?|great|awesome|perfect|excellent|"
    r"brilliant|fantastic|wonderful|amazing|love|lovely|helpful|nice one)\b"
)
_NEGATIVE_CONTEXT = _rx(
    r"\b(?:not|no|n't|never|still|but|doesn'?t|didn'?t|won'?t|can'?t|broken|error|fail\w*)\b"
)


# German and French: the seed serves de/fr customers, and the MiniLM exemplars are English, so a
# German "ich möchte kündigen" would otherwise slip past the escalation policy as `other`.
_FOREIGN_QUESTION = _rx(
    r"\b(?:wie|was|welche\w*|wann|gibt es|kann man|frist\w*|richtlinie\w*|bedingung\w*|"
    r"comment|quel(?:le)?s?|quand|est-ce qu|politique|conditions?|délai)\b"
)
_FOREIGN_POLICY: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "legal",
        _rx(
            r"\b(?:rechtsanwalt\w*|anwalt\w*|klage\w*|verklag\w*|gericht\w*|avocats?|"
            r"poursuites?|tribunal)\b"
        ),
    ),
    (
        "billing_dispute",
        _rx(
            r"\b(?:doppelt (?:abgebucht|belastet|berechnet)|rückbuchung\w*|"
            r"facturée? deux fois|prélevée? deux fois|contestation)\b"
        ),
    ),
    (
        "data_deletion",
        _rx(
            r"\b(?:(?:konto|daten|account)\w* (?:\w+ )?lösch\w*|lösch\w* (?:\w+ ){0,2}"
            r"(?:konto|daten)|dsgvo|supprim\w* (?:mon|notre|mes|nos) (?:compte|"
            r"données)|rgpd)\b"
        ),
    ),
    ("refund_request", _rx(r"\b(?:rückerstattung\w*|erstatt\w*|geld zurück|rembours\w*)\b")),
    (
        "cancellation",
        _rx(
            r"\b(?:kündig\w*|künd\w*|résili\w*|annuler (?:mon|notre) "
            r"abonnement)\b"
        ),
    ),
    (
        "human_handoff",
        _rx(
            r"\b(?:mit (?:einem|einer) (?:menschen|mitarbeiter\w*|person)|"
            r"echten? menschen|mitarbeiter\w* sprechen|parler (?:à|a) (?:un|une) "
            r"(?:humain|conseill\w*|personne|agent))\b"
        ),
    ),
)


def _foreign_intent(text: str) -> tuple[str, str] | None:
    for intent, pattern in _FOREIGN_POLICY:
        if pattern.search(text):
            if intent in ("refund_request", "cancellation") and _FOREIGN_QUESTION.search(text):
                return "billing_question", f"{intent}_question_de_fr"
            return intent, f"{intent}_de_fr"
    return None


def lexicon_intent(text: str) -> tuple[str, str] | None:
    """(intent, rule) when a lexicon rule decides the intent, else None."""
    foreign = _foreign_intent(text)
    if foreign is not None:
        return foreign
    if _LEGAL.search(text):
        return "legal", "legal"
    if _DISPUTE.search(text) and not _ASK_ABOUT.search(text):
        return "billing_dispute", "dispute"
    if _GDPR.search(text):
        return "data_deletion", "gdpr"
    if _DELETION.search(text) and not _DELETION_NOT.search(text):
        if _ASK_ABOUT.search(text):
            return "how_to", "deletion_question"
        return "data_deletion", "delete_account"
    if _EXIT_FEE.search(text):
        return "billing_question", "exit_fee"
    if _REFUND_WORD.search(text):
        if _REFUND_STATUS.search(text):
            return "billing_question", "refund_status"
        if _ASK_ABOUT.search(text):
            return "billing_question", "refund_policy"
        return "refund_request", "refund"
    if _UNSUBSCRIBE.search(text):
        return "account", "unsubscribe"
    if _CANCEL_WORD.search(text):
        if _FEE.search(text) or _ASK_ABOUT.search(text):
            return "billing_question", "cancellation_terms"
        if _HOW_TO_CANCEL.search(text):
            return "how_to", "how_to_cancel"  # asking how it works, no object: not a request yet
        if _CANCEL_NOT.search(text) and not _CANCEL_ORDER.search(text):
            return "how_to", "cancel_booking"  # a room booking or a meeting, not a contract
        if _CANCEL_ORDER.search(text):
            return "cancellation", "cancel_order"
        if _ACCOUNT_OBJECT.search(text) and not _CANCEL_NOT.search(text):
            return "data_deletion", "cancel_account"  # closing the account itself, not a plan
        if _CANCEL_OWN.search(text) and not _CANCEL_NOT.search(text):
            return "cancellation", "cancel_subscription"
    if explicit_human_request(text):
        return "human_handoff", "human_request"
    return None


# An escalating intent from nearest exemplars alone must also show one of its trigger words: an
# embedding neighbour of "get rid of my account" must not escalate "switch to the pro account".
_TRIGGERS: dict[str, re.Pattern[str]] = {
    "cancellation": _rx(
        r"\b(?:cancel\w*|terminat\w*|stop\w*|end(?:ing)?|discontinu\w*|quit\w*|renew\w*|"
        r"no longer|do ?n[o']?t (?:want|need)|afford|call off|back out)\b"
    ),
    "refund_request": _rx(
        r"\b(?:refund\w*|money|reimburs\w*|restitution\w*|rebate\w*|compensat\w*|credit\w*|"
        r"return\w*|cash)\b"
    ),
    # a dispute claims something is wrong with a charge; a billing noun alone is a question
    "billing_dispute": _rx(
        r"\b(?:twice|double\w*|wrong\w*|incorrect\w*|mistake\w*|error\w*|never|did ?n[o']?t|"
        r"do ?n[o']?t (?:recogni[sz]e|agree)|unauthori[sz]ed|disput\w*|fraud\w*|overcharg\w*|"
        r"more than|extra|again|after (?:i|we) cancel\w*|not (?:mine|ours)|without (?:my|our))\b"
    ),
    "data_deletion": _rx(rf"\b{_DELETE_VERB}|\b(?:gdpr|forgotten|erasure)\b"),
    "legal": _rx(
        r"\b(?:legal\w*|law\w*|court|sue|suing|contract|regulat\w*|authorit\w*|complian\w*|"
        r"police|subpoena\w*|attorney|damages|breach)\b"
    ),
    "acknowledgment": _rx(
        r"\b(?:thanks?|thx|ty|cheers|ok(?:ay)?|got it|great|perfect|awesome|cool|works?|worked|"
        r"fixed|sorted|appreciat\w*|good|fine|nice|brilliant|understood|excellent|yes|yep)\b"
    ),
    "human_handoff": _rx(
        r"\b(?:human|person|people|agent|representative|rep|operator|someone|somebody|staff|"
        r"manager|supervisor|call|phone|bot|robot|real|live|talk|speak|escalat\w*)\b"
    ),
}


_PROCEDURE_QUESTION = _rx(
    r"^\W*(?:and |so |but )?(?:how (?:do|can|would|could|should) (?:i|we|you|one)|how to|"
    r"what(?:'s| is) the (?:process|procedure|way) (?:to|for))\b"
)
_VOTE_ONLY_ESCALATING = frozenset({"refund_request", "cancellation", "human_handoff"})
# asking for a contact channel or how SLA credits work is a question about the process
_CONTACT_OR_CREDITS = _rx(
    r"\b(?:(?:service|sla|uptime) credits?|phone (?:line|number)|hotline|support hours|"
    r"opening hours|email address)\b"
)


def allowed_by_triggers(intent: str, text: str) -> bool:
    """Whether an exemplar-voted intent may stand (escalating ones need a trigger word).

    A "how do we ..." question about a contact channel or SLA credits asks how something works;
    a nearest-exemplar vote alone may not turn it into a request ("How do we claim service
    credits?" is not a refund request, "How do I reach the phone line?" is not a handoff).
    """
    if (
        intent in _VOTE_ONLY_ESCALATING
        and _PROCEDURE_QUESTION.search(text)
        and _CONTACT_OR_CREDITS.search(text)
    ):
        return False
    trigger = _TRIGGERS.get(intent)
    return trigger is None or bool(trigger.search(text))


def _shouting(text: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 3:
        return False
    upper = [w for w in words if w.isupper() and w not in {"ORD", "CASE", "SSO", "API", "SKU"}]
    return len(upper) / len(words) >= 0.6


def lexicon_sentiment(text: str) -> tuple[str, str] | None:
    """(sentiment, rule) when a lexicon rule decides the sentiment, else None."""
    if _PROFANITY.search(text):
        return "angry", "profanity"
    if _ANGRY.search(text):
        return "angry", "angry_words"
    if _shouting(text):
        return "angry", "all_caps"
    if re.search(r"[!?]*![!?]*![!?]*!", text) or re.search(r"\?{3,}", text):
        return "frustrated", "exclamations"
    if _FRUSTRATED.search(text):
        return "frustrated", "frustrated_words"
    if _POSITIVE.search(text) and not _NEGATIVE_CONTEXT.search(text):
        return "positive", "positive_words"
    return None


# --- the router ----------------------------------------------------------------------------------


class Route(NamedTuple):
    intent: str
    intent_score: float  # 1.0 for a lexicon rule; the best exemplar cosine otherwise
    sentiment: str


@dataclass(frozen=True, slots=True)
class RouteDetail:
    """A route plus why: the rule that fired, or the nearest exemplars."""

    intent: str
    intent_score: float
    sentiment: str
    intent_rule: str | None
    sentiment_rule: str | None
    neighbours: tuple[tuple[str, float, str], ...]  # (intent, cosine, exemplar)

    @property
    def route(self) -> Route:
        return Route(self.intent, self.intent_score, self.sentiment)


@dataclass(frozen=True, slots=True)
class _Bank:
    labels: tuple[str, ...]
    texts: tuple[str, ...]
    vectors: Matrix


class Router:
    """Nearest-exemplar intent and sentiment classifier over an `Embedder`."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        intent_exemplars: Mapping[str, tuple[str, ...]] = INTENT_EXEMPLARS,
        sentiment_exemplars: Mapping[str, tuple[str, ...]] = SENTIMENT_EXEMPLARS,
        k: int = 5,
        min_similarity: float = 0.3,
        sentiment_min_similarity: float = 0.55,
        sentiment_margin: float = 0.05,
    ) -> None:
        unknown = (set(intent_exemplars) - set(INTENTS)) | (
            set(sentiment_exemplars) - set(SENTIMENTS)
        )
        if unknown:
            raise ValueError(f"exemplars for unknown labels: {sorted(unknown)}")
        self.embedder = embedder
        self.k = k
        self.min_similarity = min_similarity  # below this nothing is near: intent `other`
        self.sentiment_min_similarity = sentiment_min_similarity
        self.sentiment_margin = sentiment_margin  # how far a mood must beat `neutral` to count
        self._sources = (intent_exemplars, sentiment_exemplars)
        self._banks: tuple[_Bank, _Bank] | None = None
        self._lock = asyncio.Lock()

    async def warm(self) -> None:
        """Embed the exemplars now (the first `classify` would otherwise do it)."""
        await self._load()

    async def _load(self) -> tuple[_Bank, _Bank]:
        if self._banks is not None:
            return self._banks
        async with self._lock:
            if self._banks is None:
                banks = []
                for source in self._sources:
                    labels = tuple(lab for lab, texts in source.items() for _ in texts)
                    texts = tuple(t for ts in source.values() for t in ts)
                    vectors = await self.embedder.embed_documents(list(texts))
                    banks.append(_Bank(labels, texts, _normalise(np.asarray(vectors, float))))
                self._banks = (banks[0], banks[1])
            return self._banks

    async def classify(self, text: str) -> Route:
        """(intent, intent_score, sentiment) for one message."""
        return (await self.route(text)).route

    async def route(self, text: str) -> RouteDetail:
        text = text.strip()
        if not re.search(r"\w", text):
            return RouteDetail("other", 0.0, "neutral", "empty", None, ())
        intent_bank, sentiment_bank = await self._load()
        try:
            vector = await self.embedder.embed_query(text)
        except (ProviderError, TimeoutError) as exc:
            # the embedding provider is down or out of time: the rules still route
            log.warning("router embedding failed, routing by rules only: %r", exc)
            return _rules_only(text)
        query = _normalise(np.asarray([vector], float))[0]

        sims = intent_bank.vectors @ query
        order = np.argsort(-sims)
        ranked = [(intent_bank.labels[i], float(sims[i]), intent_bank.texts[i]) for i in order]
        neighbours = tuple(ranked[: self.k])
        lexical = lexicon_intent(text)
        if lexical is not None:
            intent, score, rule = lexical[0], 1.0, lexical[1]
        else:
            intent, score = self._vote(ranked, text)
            rule = None
            if looks_like_acknowledgment(text):
                intent, score, rule = "acknowledgment", max(score, 0.9), "acknowledgment"
            elif is_greeting(text):
                intent, score, rule = "other", max(score, 0.9), "greeting"

        mood = lexicon_sentiment(text)
        if mood is not None:
            sentiment, sentiment_rule = mood
        else:
            sentiment, sentiment_rule = self._mood(sentiment_bank, query), None
        return RouteDetail(intent, score, sentiment, rule, sentiment_rule, neighbours)

    def _vote(self, ranked: list[tuple[str, float, str]], text: str) -> tuple[str, float]:
        """Similarity-weighted vote of the k nearest exemplars whose intent may stand here."""
        # a question, a long message or a complaint is never a bare acknowledgment
        no_ack = "?" in text or len(text.split()) > 8 or bool(_NEGATIVE_CONTEXT.search(text))
        eligible = [
            n
            for n in ranked
            if not (no_ack and n[0] == "acknowledgment") and allowed_by_triggers(n[0], text)
        ][: self.k]
        votes: dict[str, float] = {}
        best: dict[str, float] = {}
        for label, sim, _ in eligible:
            if sim < self.min_similarity:
                continue
            votes[label] = votes.get(label, 0.0) + sim
            best[label] = max(best.get(label, 0.0), sim)
        if not votes:
            return "other", max(0.0, ranked[0][1]) if ranked else 0.0
        intent = max(votes, key=lambda lab: (votes[lab], best[lab]))
        return intent, min(1.0, best[intent])

    def _mood(self, bank: _Bank, query: Matrix) -> str:
        sims = bank.vectors @ query
        per_label: dict[str, float] = {}
        for label, sim in zip(bank.labels, sims, strict=True):
            per_label[label] = max(per_label.get(label, -1.0), float(sim))
        top = max(per_label, key=lambda lab: per_label[lab])
        if top == "neutral" or per_label[top] < self.sentiment_min_similarity:
            return "neutral"
        if per_label[top] - per_label.get("neutral", -1.0) < self.sentiment_margin:
            return "neutral"
        return top


_ACK = _rx(
    r"^\s*(?:(?:ok(?:ay)?|k|cool|great|perfect|awesome|thanks?|thank you(?: (?:so|very) much)?|"
    r"thx|ty|cheers|got it|understood|sounds good|nice(?: one)?|brilliant|excellent|all good|"
    r"that (?:worked|works|fixed it|did it|helped)|it works(?: now)?|all sorted|"
    r"(?:much|really) appreciated|no(?:pe)?,? (?:that'?s|thats) (?:all|it)|yes|yep|yeah|"
    r"fine|good|done|solved|lovely|will do|danke(?: schön| sehr)?|vielen dank|super|prima|"
    r"hat (?:funktioniert|geklappt)|merci(?: beaucoup)?|parfait|ça marche|c'est bon)[\s,.!:)]*)+$"
)
_CLOSING_THANKS = _rx(
    r"(?:thanks?|thank you|thx|cheers|danke|merci)(?: (?:a lot|so much|again|beaucoup|schön))?"
    r"[\s,.!:)]*$"
)
_GREETING = _rx(
    r"^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|greetings|yo)(?: there| team)?"
    r"[\s,.!]*$"
)


def looks_like_acknowledgment(text: str) -> bool:
    """Thanks, okay, 'that fixed it' and nothing more: no question, no new problem.

    A longer message that closes with thanks counts too ("uploaded the cert, we're back in.
    Cheers!"), unless it asks something or reports something still wrong.
    """
    if _ACK.match(text):
        return True
    return bool(
        _CLOSING_THANKS.search(text)
        and "?" not in text
        and not _NEGATIVE_CONTEXT.search(text)
        and len(text) <= 200
    )


def is_greeting(text: str) -> bool:
    return bool(_GREETING.match(text))


def _normalise(matrix: Matrix) -> Matrix:
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = matrix / norms
    return result


def _rules_only(text: str) -> RouteDetail:
    """A route without an embedding: the lexicon's intent and mood, else `other` and neutral
    (score 0, so nothing downstream mistakes it for a confident classification)."""
    lexical = lexicon_intent(text)
    if lexical is not None:
        intent, score, rule = lexical[0], 1.0, lexical[1]
    elif looks_like_acknowledgment(text):
        intent, score, rule = "acknowledgment", 0.9, "acknowledgment"
    elif is_greeting(text):
        intent, score, rule = "other", 0.9, "greeting"
    else:
        intent, score, rule = "other", 0.0, "no-embedding"
    mood = lexicon_sentiment(text)
    sentiment, sentiment_rule = mood if mood is not None else ("neutral", None)
    return RouteDetail(intent, score, sentiment, rule, sentiment_rule, ())
