"""The offline provider: deterministic, extractive, no model weights, no network.

`generate` answers from the request's structured ingredients rather than its rendered prompt:

- tool results become short factual sentences (order status, carrier, tracking, items; plan,
  status, seats, renewal; case status), and "not found" is said as the tool phrased it;
- passages give the best block(s) of the best section for the question
  (`app.providers.chat.select`): a procedure's list whole, the table rows asked about with their
  column names, the sentence holding an asked value, a paragraph; each under its section's
  heading path and cited `[n]` with the number of the passage it came from;
- acknowledgments get a short reply using the customer's first name when known.

It never writes a sentence that is not in a passage or a tool result, so it cannot invent an
order detail. `complete_json` is not offered: condensation has its own rules path offline (an
offline "JSON mode" would only pretend), so it raises `ProviderError` and callers fall back.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.language.lexicon import word_set
from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import is_code, stem, term_set
from app.language.utterance import awaits_delivery
from app.language.words import STEMMERS, STOPWORDS
from app.providers.chat.base import (
    ChatMessage,
    GenerationReply,
    GenerationRequest,
    JsonReply,
    PassageLike,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolOutcome,
    Usage,
)
from app.providers.errors import ProviderError
from app.search.answer_types import asks_for_steps, named_terms
from app.search.answer_types import missing_names as names_missing_from
from app.text import WEAK_HEDGE, Phrases, acknowledgment_reply, no_answer_reply, phrase

_STOP = word_set("en", "answer_stopwords")  # what the answerer never matches a question on
_STOPS = {lang: _STOP | STOPWORDS[lang] | word_set(lang, "answer_stopwords") for lang in STOPWORDS}


_DERIVED = tuple(word_set("en", "derived_endings"))


def _stem(word: str) -> str:
    """The search's stemmer (`app.language.text.stem`: "signatures"/"signature", "signing"/
    "sign"), then a derived ending ("difference"/"differ") and a doubled final l ("cancelled"/
    "canceled"); identifiers are compared as written."""
    w = word.lower()
    if "_" in w or any(c.isdigit() for c in w):
        return w
    w = stem(w)
    if w.endswith(_DERIVED) and len(w) >= 7:
        w = w[:-3]
    return w[:-1] if w.endswith("ll") and len(w) > 4 else w


@dataclass(frozen=True, slots=True)
class Reading:
    """How the answerer reads words: the question's language (its stop words and stemmer; the
    reply locale, which is the language the customer wrote in) and the tenant's product aliases
    as (alias, product name) pairs, so "Raumpanel" in a question meets "Room Panel" or "Panel"
    in a passage; and the tenant's synonym groups, so a passage's "United Kingdom" answers a
    question's "UK" (`synonym_terms`). Hashable: passages' sentences are memoised per reading."""

    language: str = "en"
    aliases: tuple[tuple[str, str], ...] = ()
    synonyms: SynonymTable = EMPTY

    @classmethod
    def of(
        cls,
        language: str,
        product_names: Mapping[str, str] | None,
        synonyms: SynonymTable = EMPTY,
    ) -> Reading:
        pairs = tuple(sorted((product_names or {}).items()))
        return cls(language if language in STOPWORDS else "en", pairs, synonyms)


ENGLISH = Reading()
_UNICODE_WORD = re.compile(r"[^\W_][\w]*")


@lru_cache(maxsize=32)
def _alias_pattern(aliases: tuple[tuple[str, str], ...]) -> re.Pattern[str] | None:
    if not aliases:
        return None
    names = sorted((a for a, _ in aliases), key=len, reverse=True)
    return re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(a) for a in names) + r")s?(?![\w-])", re.IGNORECASE
    )


def with_product_names(text: str, reading: Reading) -> str:
    """`text` with each product alias written as the product's name."""
    pattern = _alias_pattern(reading.aliases)
    if pattern is None:
        return text
    names = {a.casefold(): n for a, n in reading.aliases}
    return pattern.sub(lambda m: names.get(m.group(1).casefold(), m.group(0)), text)


def product_terms(text: str, reading: Reading) -> set[str]:
    """The content words of the product names `text` mentions (by name or alias)."""
    pattern = _alias_pattern(reading.aliases)
    if pattern is None:
        return set()
    names = {a.casefold(): n for a, n in reading.aliases}
    found = {names.get(m.group(1).casefold(), "") for m in pattern.finditer(text)}
    return terms(" ".join(found), reading)


def terms(text: str, reading: Reading = ENGLISH) -> set[str]:
    """Content words of `text`, lower-cased and lightly stemmed, in the reading's language."""
    text = with_product_names(text, reading)
    english = reading.language == "en"
    stop = _STOP if english else _STOPS[reading.language]
    stemmer = _stem if english else STEMMERS[reading.language]
    return {stemmer(w) for w in _UNICODE_WORD.findall(text) if w.casefold() not in stop}


def synonym_terms(text: str, reading: Reading) -> set[str]:
    """The terms `text` covers through the tenant's synonyms: those of every member of each
    group it mentions, read as `terms` reads them. Only passages' sentences get them (the
    question keeps its own words, so a synonym counts once, as the word it stands for)."""
    table = reading.synonyms
    if not table:
        return set()
    groups = dict.fromkeys(g for g, _ in table.matches(text))
    return {t for g in groups for member in table.groups[g] for t in terms(member, reading)}


# --------------------------------------------------------------------------- tool sentences


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _status(value: Any, p: Phrases | None = None) -> str:
    text = _text(value)
    if text is None:
        return phrase(p, "status_unknown", "in an unknown state")
    return phrase(p, f"status_{text}", text.replace("_", " "))


def _items(items: Any, p: Phrases | None = None) -> str | None:
    if not isinstance(items, list):
        return None
    parts: list[str] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        name, sku, qty = _text(item.get("name")), _text(item.get("sku")), item.get("qty")
        if not name and not sku:
            continue
        label = f"{name} ({sku})" if name and sku else (name or sku or "")
        parts.append(f"{qty} × {label}" if isinstance(qty, int) else label)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return phrase(p, "list_and", "{first} and {last}", first=", ".join(parts[:-1]), last=parts[-1])


def _order_sentences(order: Mapping[str, Any], p: Phrases | None = None) -> list[str]:
    ref = _text(order.get("orderRef")) or phrase(p, "your_order", "Your order")
    placed = _text(order.get("placedAt"))
    when = phrase(p, "order_placed", " (placed {date})", date=placed) if placed else ""
    status = _status(order.get("status"), p)
    out = [phrase(p, "order_status", "Order {ref} is {status}{placed}.", ref=ref, status=status,
                  placed=when)]  # fmt: skip
    shipped, carrier, tracking = (
        _text(order.get("shippedAt")),
        _text(order.get("carrier")),
        _text(order.get("tracking")),
    )
    if shipped or carrier or tracking:
        s = (
            phrase(p, "order_shipped", "It shipped on {date}", date=shipped)
            if shipped
            else phrase(p, "order_with_carrier", "It is with the carrier")
        )
        if carrier:
            s += phrase(p, "order_carrier", " with {carrier}", carrier=carrier)
        if tracking:
            s += phrase(p, "order_tracking", ", tracking number {tracking}", tracking=tracking)
        out.append(s + ".")
    items = _items(order.get("items"), p)
    if items:
        out.append(phrase(p, "order_items", "It contains {items}.", items=items))
    return out


def _orders_sentence(orders: Sequence[Any], p: Phrases | None = None) -> str:
    parts: list[str] = []
    for order in orders:
        if not isinstance(order, Mapping):
            continue
        ref = _text(order.get("orderRef")) or phrase(p, "an_order", "an order")
        placed = _text(order.get("placedAt"))
        when = phrase(p, "orders_item_placed", ", placed {date}", date=placed) if placed else ""
        status = _status(order.get("status"), p)
        parts.append(phrase(p, "orders_item", "{ref}: {status}{placed}", ref=ref, status=status,
                            placed=when))  # fmt: skip
    if not parts:
        return phrase(p, "orders_unreadable", "I couldn't read your orders just now.")
    return phrase(
        p, "orders_intro", "Your most recent orders are {orders}.", orders="; ".join(parts)
    )


def _subscription_sentence(sub: Mapping[str, Any], p: Phrases | None = None) -> str:
    plan = (_text(sub.get("plan")) or phrase(p, "unknown", "unknown")).title()
    status = _status(sub.get("status"), p)
    seats = sub.get("seats")
    s = phrase(p, "subscription", "You're on the {plan} plan ({status})", plan=plan, status=status)
    if isinstance(seats, int):
        if seats == 1:
            s += phrase(p, "subscription_seat", " with 1 seat")
        else:
            s += phrase(p, "subscription_seats", " with {seats} seats", seats=seats)
    renews, price = _text(sub.get("renewsAt")), _text(sub.get("price"))
    if renews:
        s += phrase(p, "subscription_renews", "; it renews on {date}", date=renews)
        if price:
            s += phrase(p, "subscription_price", " at {price}", price=price)
    elif price:
        s += phrase(p, "subscription_priced", ", priced at {price}", price=price)
    return s + "."


def _case_sentence(case: Mapping[str, Any], p: Phrases | None = None) -> str:
    ref = _text(case.get("caseRef")) or phrase(p, "your_case", "Your case")
    s = phrase(
        p, "case_status", "Case {ref} is {status}", ref=ref, status=_status(case.get("status"), p)
    )
    opened, due = _text(case.get("openedAt")), _text(case.get("slaDueAt"))
    _at = phrase(p, "time_separator", " at ")
    if opened:
        s += phrase(p, "case_opened", "; it was opened {date}", date=opened.replace("T", _at))
    if due and case.get("status") != "resolved":
        s += phrase(p, "case_due", " and a first response is due by {date}",
                    date=due.replace("T", _at))  # fmt: skip
    return s + "."


def tool_sentences(result: ToolOutcome, phrases: Phrases | None = None) -> list[str]:
    """What a tool result says, as short factual sentences (nothing added, nothing guessed)."""
    if not result.ok or not result.found:
        return [result.message.strip() or phrase(phrases, "lookup_failed",
                                                 "I couldn't look that up just now.")]  # fmt: skip
    data = result.data
    if result.tool == "lookupOrder" and isinstance(data, Mapping):
        return _order_sentences(data, phrases)
    if result.tool == "listRecentOrders" and isinstance(data, list):
        return [_orders_sentence(data, phrases)]
    if result.tool == "lookupSubscription" and isinstance(data, Mapping):
        return [_subscription_sentence(data, phrases)]
    if result.tool == "lookupCase" and isinstance(data, Mapping):
        return [_case_sentence(data, phrases)]
    return [phrase(phrases, "lookup_unreadable", "I looked that up but couldn't read the result.")]


# --------------------------------------------------------------------------- passages


def _with_citation(text: str, n: int) -> str:
    text = text.rstrip()
    if text and text[-1] in ".!?:;":
        end = "." if text[-1] in ":;" else text[-1]
        return f"{text[:-1]} [{n}]{end}"
    return f"{text} [{n}]."


def extract_answer(
    question: str,
    passages: Sequence[PassageLike],
    reading: Reading = ENGLISH,
    ph: Phrases | None = None,
) -> str:
    """The best block(s) of the best section, cited (`select`; "" when no block shares a term)."""
    from app.providers.chat.select import select_answer  # it reads words as this module does

    return select_answer(question, passages, reading, ph)


# --------------------------------------------------------------------------- the provider


_ORDER_TOOLS = frozenset({"lookupOrder", "listRecentOrders"})


def _squeezed(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def _names_an_order(message: str, results: Sequence[ToolOutcome]) -> bool:
    """The customer's message carries the reference of an order a lookup found ("ORD 1042")."""
    said = _squeezed(message)
    for r in results:
        if r.tool == "lookupOrder" and r.found and isinstance(r.data, Mapping):
            ref = _squeezed(str(r.data.get("orderRef") or ""))
            if ref and ref in said:
                return True
    return False


_PICK_WORDS = frozenset(["one", "ones", "order", "orders", "please", "thanks"])


def _only_a_pick(request: GenerationRequest, reading: Reading) -> bool:
    """The message names nothing but products ("the desk tags one"): a choice from the order
    list, not a question about how a product behaves."""
    said = terms(request.original or request.question, reading)
    return bool(said) and said <= product_terms(request.original, reading) | _PICK_WORDS


_LIST_START = re.compile(r"(?:[-*•]|\d{1,2}[.)])\s")  # an answer that opens with a list line
_NUMBERED_START = re.compile(r"^1[.)]\s", re.MULTILINE)  # an answer with a numbered procedure


def _overview_of(passages: Sequence[PassageLike]) -> bool:
    """Whether a passage carries an article's sections in brief (not a procedure's steps)."""
    return any(getattr(getattr(p, "outline", None), "kind", "") == "overview" for p in passages)


def offline_answer(request: GenerationRequest) -> str:
    """The whole offline answer for a request (pure)."""
    ph = request.phrases
    if request.intent == "acknowledgment":
        return acknowledgment_reply(request.original or request.question, request.customer_name, ph)
    # an order picked from the list (by the product the customer named, or a "the kiosks one")
    # speaks for itself: the list it came from is not repeated
    picked = any(
        r.tool == "lookupOrder" and r.ok and r.found for r in request.tool_results
    ) and any(r.tool == "listRecentOrders" for r in request.tool_results)
    facts = [
        s
        for r in request.tool_results
        if not (picked and r.tool == "listRecentOrders")
        for s in tool_sentences(r, ph)
    ]
    found = any(r.ok and r.found for r in request.tool_results)
    question = f"{request.original} {request.question}".strip()
    reading = Reading.of(request.locale, request.product_names, request.synonyms)
    if found and _beside_the_point(request, facts, question, reading):
        facts, found = [], False  # the passages answer; the account's facts do not
    extract = ""
    # A lookup that found something is the answer. After an order's facts (status, carrier,
    # items) a strong passage is added too, unless the customer named the order: the facts never
    # explain how a product behaves, and an order lookup nobody asked for by its reference may
    # be the router's guess from a product name ("my desk tags show yesterday's bookings" lists
    # orders; the article on the symptom still answers). A subscription or case lookup answers
    # about the account itself and stands alone.
    orders_only = found and all(
        r.tool in _ORDER_TOOLS for r in request.tool_results if r.ok and r.found
    )
    if request.passages and (
        (request.confidence != "none" and not found)
        or (
            # "Is SCIM available on my plan?": the plan is looked up, and what the question
            # names beyond it (SCIM) is what a passage says about it
            request.confidence != "none" and not orders_only and _names_beyond_facts(request, facts)
        )
        or (
            request.confidence == "strong"
            and orders_only
            and not awaits_delivery(request.original)  # "where is my kiosk?": the order is it
            and not _names_an_order(request.original, request.tool_results)
            and not (picked and _only_a_pick(request, reading))  # "the desk tags one"
        )
    ):
        extract = outline_answer(request.passages, ph, request.confidence) if not found else ""
        if extract and _overview_of(request.passages) and asks_for_steps(question):
            # a how-to whose article has no numbered steps gets the sections in brief, unless
            # one section holds the procedure itself ("Pairing a tag" in "Pairing Desk Tags")
            steps = extract_answer(question, request.passages, reading, ph)
            extract = steps if _NUMBERED_START.search(steps) else extract
        extract = extract or extract_answer(question, request.passages, reading, ph)
    if not found and not extract:
        return no_answer_reply(request.tool_results, ph)  # what the lookups said, and a person
    body = _framed(extract, request) if extract else ""
    # a list starts on its own line, also after the lookups' sentences
    joiner = "\n" if facts and _LIST_START.match(body) else " "
    return joiner.join(p for p in (" ".join(facts), body) if p)


def _framed(extract: str, request: GenerationRequest) -> str:
    """The passages' answer as the customer reads it: what it does not cover said, and a weak
    one introduced as the documents' and hedged."""
    ph, body = request.phrases, extract
    missing = missing_names(
        request.question or request.original,
        request.passages,
        request.synonyms,
        language=request.locale,
    )
    if missing:  # say what is not covered rather than let the extract pass for an answer
        body += " " + phrase(
            ph, "missing_names", "The articles I found don't mention {names}.",
            names=_join(missing, phrase(ph, "or", " or ")),
        )  # fmt: skip
    if request.confidence == "weak":
        body = _introduced(body, request, ph) + " " + phrase(ph, "weak_hedge", WEAK_HEDGE)
    return body


_LEAD = re.compile(r"(.+) (\[\d+\]):\n")  # a selected answer's first line: its heading path, cited


def _introduced(body: str, request: GenerationRequest, ph: Phrases | None) -> str:
    """A weak answer, introduced as what the documents say: the section it quotes, named in
    the opening ("This is what I found in “Cancelling › After you cancel” [1]:"), or the
    articles an outline cites."""
    lead = _LEAD.match(body)
    if lead:
        titles, text = f"“{lead[1]}” {lead[2]}", "\n" + body[lead.end() :]
    else:
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", body)]
        cited = list(
            dict.fromkeys(
                request.passages[n - 1].title
                for n in numbers
                if 0 < n <= len(request.passages) and request.passages[n - 1].title
            )
        )
        if not cited:
            return body
        titles = _join([f"“{t}”" for t in cited], phrase(ph, "or", " or "))
        text = "\n" + body if "\n" in body else body
    return phrase(
        ph, "found_in", "This is what I found in {titles}: {text}", titles=titles, text=text
    ).replace(" \n", "\n")


def outline_answer(
    passages: Sequence[PassageLike], ph: Phrases | None = None, confidence: str = "strong"
) -> str:
    """A procedure's steps in the article's order, then its notes on what the question names,
    cited to the passage that carries the outline ("" when none does). A weak answer names the
    article in its own opening, so the steps then follow without an introduction."""
    for n, p in enumerate(passages, 1):
        outline = getattr(p, "outline", None)
        if outline is None or not outline.steps:
            continue
        overview = getattr(outline, "kind", "steps") == "overview"
        if overview:  # each section's heading and first sentence: no order to number
            lines = [f"- {line}" for line in outline.steps]
        else:
            lines = [f"{i}. {step}" for i, step in enumerate(outline.steps, 1)]
        lines[-1] = _with_citation(lines[-1], n)
        text = "\n".join(lines)
        if overview:
            if confidence == "strong":
                intro = phrase(ph, "overview_intro", "“{title}” in brief:", title=outline.title)
                text = intro + "\n" + text
        elif confidence == "strong":
            intro = phrase(
                ph, "outline_intro", "“{title}” takes {count} steps:",
                title=outline.title, count=len(outline.steps),
            )  # fmt: skip
            text = intro + "\n" + text
        if outline.notes:
            text += "\n" + _with_citation(" ".join(outline.notes), n)
        return text
    return ""


def _beside_the_point(
    request: GenerationRequest, facts: Sequence[str], question: str, reading: Reading
) -> bool:
    """A subscription lookup whose facts share no word with the question, next to passages that
    speak to it (strong or weak): "which events can I subscribe to?" is near the subscription
    examples by its verb
    and is looked up, but the plan, seats and renewal date say nothing about webhook events,
    and the passages do. A lookup that shares a word ("when does my subscription renew?": the
    renewal date) answers, and so does any lookup when no passage does (confidence none);
    order and case lookups always answer (the customer named them)."""
    used = [r for r in request.tool_results if r.ok and r.found]
    if request.confidence == "none" or not request.passages or not used:
        return False
    if any(r.tool != "lookupSubscription" for r in used):
        return False
    return not terms(question, reading) & terms(" ".join(facts), reading)


def _names_beyond_facts(request: GenerationRequest, facts: Sequence[str]) -> bool:
    """The customer names something (a feature, a product, a plan) that the lookups' facts do
    not and the passages do: the account's facts alone do not answer about it. German
    capitalises every noun, so there only numbers and identifiers count as names."""
    named = set(named_terms(request.original)) | set(named_terms(request.question))
    if request.locale == "de":
        named = {t for t in named if is_code(t) or any(c.isdigit() for c in t)}
    beyond = named - term_set(" ".join(facts))
    if not beyond:
        return False
    present: set[str] = set()
    for p in request.passages:
        text = f"{p.title}\n{p.text}"
        present |= term_set(text) | covered_terms(text, request.synonyms)
    return beyond <= present


def missing_names(
    question: str,
    passages: Sequence[PassageLike],
    synonyms: SynonymTable = EMPTY,
    *,
    language: str = "en",
) -> list[str]:
    """The question's names that no passage (title and text) contains (`answer_types`)."""
    texts = [f"{p.title}\n{p.text}" for p in passages]
    return names_missing_from(question, texts, synonyms, language=language)


def _join(items: Sequence[str], conjunction: str = " or ") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + conjunction + items[-1]


class OfflineChatModel:
    """Deterministic rules + extractive answers; `complete_json` raises (see module doc)."""

    name = "offline"
    language_model = False

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        raise ProviderError("the offline provider has no JSON mode: use the rules condenser")

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        return GenerationReply(text=offline_answer(request), usage=Usage(), model=self.name)

    async def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        reply = await self.generate(request)
        for piece in re.findall(r"\S+\s*|\s+", reply.text):  # word by word, as a model would
            yield TextDelta(piece)
        yield StreamDone(reply)
