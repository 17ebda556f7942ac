"""The offline provider: deterministic, extractive, no model weights, no network.

`generate` answers from the request's structured ingredients rather than its rendered prompt:

- tool results become short factual sentences (order status, carrier, tracking, items; plan,
  status, seats, renewal; case status), and "not found" is said as the tool phrased it;
- passages give the best sentences by lexical overlap with the question (IDF-weighted,
  favouring the top-ranked passage; a procedure's next step comes along with the step chosen), each
  run of sentences cited `[n]` with the number of the passage it came from;
- pages converted to plain text are read as a reader would: a short line without closing
  punctuation, or a line that is one question (an FAQ entry), heads the section under it, and a
  menu or breadcrumb line ("Home | Plans | FAQ") is never quoted;
- acknowledgments get a short reply using the customer's first name when known.

It never writes a sentence that is not in a passage or a tool result, so it cannot invent an
order detail. `complete_json` is not offered: condensation has its own rules path offline (an
offline "JSON mode" would only pretend), so it raises `ProviderError` and callers fall back.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import content_terms, is_code, table_rows, term_set
from app.language.utterance import awaits_delivery, reports_a_problem
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
from app.safety.screen import without_instructions
from app.search.answer_types import (
    DURATION_FRAME_WORDS,
    asked_types,
    asks_for_members,
    asks_for_steps,
    capability_terms,
    frame_terms,
    named_terms,
    shows_type,
)
from app.text import WEAK_HEDGE, Phrases, acknowledgment_reply, no_answer_reply, phrase

# How long an extract runs. Each further sentence must score at least `_SUPPORT_RATIO` of the
# best one (it answers the question nearly as well), and sentences stop being added once the
# answer reaches `MAX_ANSWER_WORDS`. Chosen on the MT-RAG tune part (answer token F1 against the
# reference answers, whose median is ~80 words over ~4 sentences): the old 3 sentences at 0.6
# gave 0.308; 5 at 0.4 gave 0.339, 6 at 0.3 with a 110-word budget 0.347 (median 90 tokens),
# and anything longer stayed on that plateau, so the shortest of its best settings is kept.
# Plain-text headings, FAQ questions and menu lines no longer quoted, and supporting sentences
# kept to the best sentence's section when its heading names the question: 0.347 -> 0.362;
# numbered steps kept as one procedure across their sub-items and code, no image markup: 0.368;
# supporting sentences that read as sentences, and a procedure's closing sentence: 0.3725.
MAX_SENTENCES = 6
# A section's first sentence is read with its heading when it shares no word with the question
# ("Uptime commitment": "… available at least 99.95% …"). MT-RAG tune part, answer token F1:
# 0.389 with and without (21 answers changed, none for the worse on balance); reading every
# lead with its heading, whatever it shares, cost 0.009 (0.380), so that is not done.
SECTION_LEADS = True
# How-to questions: a supporting sentence from another page must hold every question term the
# best sentence holds ("how do I cancel a booking?" is not helped by another page's "selects
# Cancel subscription"). MT-RAG tune part, answer token F1: 0.389 with and without; applied to
# every question it cost 0.026 (0.363: other pages' sentences carry much of the reference
# answers there), so it is kept to procedures, which are about one task.
OTHER_PAGES_HOLD_ALL = True
# How-to questions: a page's section whose headings name more of the question than its
# procedure's headings do answers instead of the procedure ("How do I book a recurring desk?":
# "Recurring meetings", not the room booking steps). MT-RAG tune part: no answer changed.
NARROWER_SECTION_STANDS = True
MAX_ANSWER_WORDS = 110
MAX_TABLE_ROWS = 8  # a whole table is quoted only when it is short enough to read in a chat
_SUPPORT_RATIO = 0.3
_SAME_SENTENCE = 0.8  # share of a sentence's terms already said by a chosen one: a repeat
MAX_CODE_LINES = 3  # lines of a code block quoted after the lead-in that introduces it
MAX_STEPS = 6  # a procedure is quoted whole up to this many steps: half a procedure misleads
_RANK_DECAY = 0.35  # passage i (0-based) weighs 1 / (1 + 0.35 i): the reranker's order counts
_SECTION_WEIGHT = 1.0  # question terms in the sentence's own section heading
_STEP_BONUS = 1.5  # how-to questions: list steps and their lead-in lines
_TYPE_BONUS = 1.8  # the sentence holds the answer type asked for (a price, a duration, ...)
_CODE_WEIGHT = 0.25  # a line inside a code fence, for a question naming no code: a JSON body
_TICKET_HOWTO = 0.5  # how-to questions: a ticket's resolution weighs half an article's sentence

_STOP = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can cannot could did do does doing don down during each few for
    from further get gets got had has have having he her here hers him his how i if in into
    is it its itself just let me more most my myself no nor not now of off on once only or
    other our ours out over own please same she should so some such than that the their
    theirs them then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself hi
    hello hey thanks thank need want like know tell help trying try way able
    """.split()  # noqa: SIM905 - a word list reads better as prose
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_]*", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)\s]*\)")  # an image says nothing in a chat reply
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_EMPHASIS = re.compile(r"\*\*|__|`")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|approx|incl|no|fig)\.$", re.IGNORECASE)


def _stem(word: str) -> str:
    """A few English suffixes and a final e, so "signatures"/"signature", "configured"/"configure"
    and "signing"/"sign" meet (identifiers are compared as written)."""
    w = word.lower()
    if "_" in w or any(c.isdigit() for c in w):
        return w
    if len(w) > 4:
        if w.endswith(("ies", "ied")):
            w = w[:-3] + "y"
        elif w.endswith(("sses", "ches", "shes", "xes", "zes")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        elif w.endswith("ing") and len(w) > 5:
            w = w[:-3]
        elif w.endswith("ed"):
            w = w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
            w = w[:-1]  # running → run
    elif len(w) == 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]  # short plurals too: "logs"/"log", "keys"/"key", "tags"/"tag"
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


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
    if reading.language == "en":
        return {_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP}
    stop, stem = _STOP | STOPWORDS[reading.language], STEMMERS[reading.language]
    return {stem(w) for w in _UNICODE_WORD.findall(text) if w.casefold() not in stop}


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


@dataclass(frozen=True, slots=True)
class _Sentence:
    passage: int  # 0-based rank
    index: int  # position among the passage's usable sentences
    text: str
    terms: frozenset[str]
    list_item: bool
    block: int  # paragraph / list / table number within the passage
    numbered: bool = False  # an item of a numbered list (the order matters)
    heading: frozenset[str] = frozenset()  # terms of the section heading it sits under
    heading_text: str = ""
    row: bool = False  # a table row
    code: bool = False  # a line of a fenced code block


def _link(match: re.Match[str]) -> str:
    text, target = match.group(1), match.group(2)
    return f"{text} ({target})" if target.startswith(("http://", "https://")) else text


def _clean(text: str) -> str:
    text = _LINK.sub(_link, _IMAGE.sub("", text))
    return " ".join(_EMPHASIS.sub("", text).split())


_END = re.compile(r"[.!:;,)\]\"'”’…]\s*$")
_BAR = re.compile(r"\s\|\s")  # any spaces, non-breaking ones included
_JOINED = re.compile(r"\b(?:or|and)\s*$", re.IGNORECASE)
_BARE_HEADING_WORDS = 8  # a line this short with no closing punctuation names a section
_QUESTION_HEADING_WORDS = 20  # a line that is one question is an FAQ entry's heading


def _navigation(line: str) -> bool:
    """A menu or breadcrumb trail written out as text ("Home | Plans | FAQ"): never an answer."""
    return bool(_BAR.search(line)) and not _LIST_ITEM.match(line) and not _END.search(line)


def _bare_heading(line: str) -> bool:
    """A plain line that heads what follows rather than saying something: a short title-like
    line without closing punctuation ("Setting up sync"), or a line that is one question (an
    FAQ's "How do I reset it?": the answer is what comes after it, not the question itself)."""
    text = line.strip()
    if not text or _LIST_ITEM.match(line) or text.startswith("|"):
        return False
    words = text.split()
    if text.endswith("?"):
        return len(words) <= _QUESTION_HEADING_WORDS and len(_SPLIT.split(text)) == 1
    if _END.search(text) or _JOINED.search(text) or not (text[0].isupper() or text[0].isdigit()):
        return False
    return len(words) <= _BARE_HEADING_WORDS


def split_sentences(text: str) -> list[tuple[str, bool, int, bool]]:
    """(sentence, is_list_item, block, numbered) from Markdown-ish text; headings are dropped.

    A block is a paragraph, a list or a table; blank lines and headings end one.
    """
    return [(t, item, block, numbered) for t, item, block, numbered, *_ in split_sections(text)]


def split_sections(text: str) -> list[tuple[str, bool, int, bool, str, str]]:
    """As `split_sentences`, each with the text of the heading it sits under ("" for none) and
    its kind: "row" (a table row), "code" (a line of a fenced code block) or ""."""
    out: list[tuple[str, bool, int, bool, str, str]] = []
    fenced = False
    table: list[str] = []
    block, was_item, heading = 0, False, ""
    steps: tuple[int, int] | None = None  # (block, number) of the numbered list so far
    for raw in [*text.splitlines(), ""]:
        if raw.strip().startswith("```"):
            fenced = not fenced  # the fence line itself says nothing and is dropped below
        if raw.strip().startswith("|") and not fenced:
            table.append(raw)
            continue
        if table:
            block += 1
            out.extend((row, False, block, False, heading, "row") for row in table_rows(table))
            table = []
            block += 1
        if _HEADING.match(raw):
            heading = _clean(raw.strip().lstrip("#"))
            block += 1
            steps = None
            continue
        if _navigation(raw) and not fenced:
            block += 1
            continue
        if _bare_heading(raw) and not fenced:  # a heading written as a plain line (pages
            # converted to text); inside a code fence a short line is code, not a heading
            heading = _clean(raw)
            block += 1
            continue
        if not raw.strip():
            block += 1
            continue
        marker = _LIST_ITEM.match(raw)
        is_item = marker is not None
        numbered = bool(marker and marker.group(0).strip()[:1].isdigit())
        if is_item != was_item:
            block += 1  # a list right under its lead-in line is still a block of its own
        was_item = is_item
        line = _clean(_LIST_ITEM.sub("", raw))
        pieces: list[str] = []
        for piece in [line] if is_item else _SPLIT.split(line):  # an item stays one step
            if pieces and _ABBREVIATION.search(pieces[-1]):
                pieces[-1] += " " + piece
            else:
                pieces.append(piece)
        where = block
        if numbered and marker is not None:
            number = int(marker.group(0).strip().rstrip(".)"))
            if steps is not None and number == steps[1] + 1:
                where = steps[0]  # step n+1 after step n's sub-items or code: the same list
            steps = (where, number)
        out.extend(
            (p, is_item, where, numbered, heading, "code" if fenced else "") for p in pieces if p
        )
    return out


def _with_citation(text: str, n: int) -> str:
    text = text.rstrip()
    if text and text[-1] in ".!?:;":
        end = "." if text[-1] in ":;" else text[-1]
        return f"{text[:-1]} [{n}]{end}"
    return f"{text} [{n}]."


def _procedure(best: _Sentence, sentences: Sequence[_Sentence]) -> list[_Sentence] | None:
    """The list `best` belongs to or introduces (with its lead-in line), or None."""
    same = [s for s in sentences if s.passage == best.passage]
    lead: list[_Sentence] = []
    if best.list_item:
        items = [s for s in same if s.block == best.block]
        before = [s for s in same if s.index < items[0].index]
        lead = before[-1:] if before and before[-1].text.endswith(":") else []
    else:
        after = [s for s in same if s.index > best.index]
        if best.text.endswith(":"):
            lead = [best]
        elif len(after) > 1 and after[0].text.endswith(":") and after[0].block == best.block:
            lead, after = [best, after[0]], after[1:]  # "Every request has X. To verify it:"
        if not lead or not after or not after[0].list_item:
            return None
        items = [s for s in after if s.block == after[0].block]
    if len(lead) == 1 and len(lead[0].text.split()) <= 5:  # "To verify it:" needs its subject
        context = [s for s in same if s.index == lead[0].index - 1 and s.block == lead[0].block]
        lead = context + lead
    steps: list[_Sentence] = []
    taken: set[int] = set()
    for item in items[:MAX_STEPS]:
        if item.index in taken:
            continue  # a sub-item of the block, already added under its step
        steps.append(item)
        taken.add(item.index)
        if item.numbered and item.text.endswith(":"):  # "in one of these ways:" and its ways
            following = [s for s in same if s.index > item.index]
            for s in following[:MAX_STEPS]:
                if not s.list_item or s.numbered:
                    break
                if s.index not in taken:
                    steps.append(s)
                    taken.add(s.index)
    return [*lead, *steps]


_JOINER = re.compile(r"(?:[,;]\s*)?(?:\b(?:or|and)\b)?[\s,;]*$", re.IGNORECASE)


def _is_fragment(item: str) -> bool:
    """A list item that continues a sentence ("- in the mobile app, or"), not one on its own."""
    stripped = item.rstrip()
    return stripped[:1].islower() or bool(re.search(r"(?:[,;]|\b(?:or|and))$", stripped))


def _strip_joiner(item: str) -> str:
    """A list item without the ", or" / ", and" / "," that joined it to the next one."""
    return _JOINER.sub("", item.rstrip()) or item


def _first_procedure(
    sentences: Sequence[_Sentence],
    passages: Sequence[PassageLike],
    score: Callable[[_Sentence], float],
    asked: set[str],
    names: set[str],
    reading: Reading = ENGLISH,
) -> _Sentence | None:
    """For a how-to question: the best step of the article procedure (a numbered list with a
    step sharing a term with the question) whose headings name most of what the question asks
    (`asked`: its terms besides the product it is about), the higher-ranked passage on a tie.

    A procedure below the top passage must earn its place: its headings name at least one asked
    term (else the reranker's order stands and the top passage's own sentences answer; "How do
    I add a new admin?" is not answered by the steps of another product's install that mention
    an admin), and its passage holds every name of the question some passage holds (the Slack
    install steps do not answer how to install the Teams app)."""
    held = [term_set(f"{p.title}\n{p.breadcrumb}\n{p.text}") for p in passages]
    known = {t for t in names if any(t in h for h in held)}
    best: tuple[int, int, _Sentence] | None = None
    for p, passage in enumerate(passages):
        if passage.kind == "ticket" or not known <= held[p]:
            continue  # an agent's note about one case is not a procedure to follow
        steps = [s for s in sentences if s.passage == p and s.numbered]
        touching = [s for s in steps if score(s) > 0]
        if len(steps) < 2 or not touching:
            continue
        step = max(touching, key=lambda s: (score(s), -s.index))
        # the procedure under the heading (title, breadcrumb, section) that names most of the
        # question; the reranker's order breaks ties
        header = terms(f"{passage.title} {passage.breadcrumb}", reading)
        named = len((header | step.heading) & asked)
        if (p == 0 or named > 0) and (best is None or named > best[0]):
            best = (named, -p, step)
    return best[2] if best else None


def _narrower(
    step: _Sentence,
    sentences: Sequence[_Sentence],
    passages: Sequence[PassageLike],
    headers: Sequence[set[str]],
    score: Callable[[_Sentence], float],
    asked: set[str],
) -> _Sentence:
    """`step`, or the best sentence of the same page under headings that name more of what is
    asked than the procedure's do ("How do I book a recurring desk?": "… › Recurring
    meetings" over the steps under "Booking a meeting room"): the section on the asked case
    answers, not the general steps."""

    def named(s: _Sentence) -> set[str]:
        return (headers[s.passage] | s.heading) & asked

    page = passages[step.passage].doc_id
    theirs = named(step)
    narrower = [
        s
        for s in sentences
        if score(s) > 0 and passages[s.passage].doc_id == page and theirs < named(s)
    ]
    if not narrower:
        return step
    return max(narrower, key=lambda s: (len(named(s)), score(s), -s.passage, -s.index))


def _render(chosen: Sequence[_Sentence]) -> str:
    """Sentences as prose, list items one per line (numbered when the source was), cited per run."""
    out = ""
    step = 0
    for k, s in enumerate(chosen):
        last_of_run = k + 1 == len(chosen) or chosen[k + 1].passage != s.passage
        text = _strip_joiner(s.text) if s.list_item else s.text
        if last_of_run:
            text = _with_citation(text, s.passage + 1)
        elif s.list_item and (s.code or _is_fragment(s.text)):
            pass  # a line of code, or one line of a list that reads as one sentence: no period
        elif text[-1:] not in ".!?:":
            text = text.rstrip(";,") + "."
        if s.list_item:
            nested = not s.numbered and step > 0 and any(c.numbered for c in chosen)
            step += 1 if s.numbered or not nested else 0
            marker = f"{step}. " if s.numbered else ("   - " if nested else "- ")
            out += ("\n" if out else "") + marker + text
        else:
            after_list = step > 0  # prose after a list starts its own line
            step = 0
            out += ("\n" if after_list else " " if out and not out.endswith("\n") else "") + text
    return out


def _ticket_parts(passage: PassageLike) -> tuple[str, str] | None:
    """A resolved ticket's (reported symptom, fix), or None for an article or a ticket whose
    text has no resolution."""
    if passage.kind != "ticket":
        return None
    symptom, sep, fix = passage.text.partition("Resolution:")
    return (symptom, fix.strip()) if sep else None


def _answerable_text(passage: PassageLike) -> str:
    """What a passage can answer with: for a resolved ticket, its fix, not the reported symptom
    (quoting the customer's own problem back at them answers nothing)."""
    parts = _ticket_parts(passage)
    return parts[1] if parts and parts[1] else passage.text


def _reported(passage: PassageLike) -> str:
    """A resolved ticket's reported problem (the text before its resolution); "" otherwise."""
    parts = _ticket_parts(passage)
    return parts[0] if parts else ""


_Unit = tuple[str, bool, int, bool, frozenset[str], frozenset[str], str, str]


@lru_cache(maxsize=4096)
def _units(text: str, reading: Reading = ENGLISH) -> tuple[_Unit, ...]:
    """A passage's usable sentences: (text, list item, block, numbered, terms, heading terms,
    heading, kind).

    Pure in the text and memoised: turns quote the same corpus passages again and again, and
    splitting and stemming them was most of the answerer's work.
    """
    return tuple(
        (
            t,
            item,
            block,
            numbered,
            frozenset(terms(t, reading) | synonym_terms(t, reading)),
            frozenset(terms(h, reading) | synonym_terms(h, reading)),
            h,
            kind,
        )
        for t, item, block, numbered, h, kind in split_sections(without_instructions(text))
        if len(t.split()) >= 3 or item
    )


_CLOSED = re.compile(r"[.!?:;][\"'”’)]?$")
_RUN_ON_WORDS = 25  # longer than this with no closing punctuation: a flattened table or infobox


def _row_key(row: str) -> str:
    """The first cell of a table row as `table_rows` renders it ("Desk Tag — Price: $39" or
    "Light bar: Solid amber; Meaning: …"): the cell that names the row."""
    return row.split(" — ", 1)[0] if " — " in row else row.split("; ", 1)[0]


def _reads_as_sentence(s: _Sentence) -> bool:
    """A supporting sentence must read as one: closed by punctuation, or short. A long run of
    words with no full stop is a table or an infobox flattened to text (the best sentence may
    still be one, when it is what matches the question)."""
    return bool(_CLOSED.search(s.text)) or len(s.text.split()) <= _RUN_ON_WORDS


# "what happens when I exceed it?", "what does the API return?": the answer may be what a page
# shows in a code block (a response, an error body) after the line that leads into it (en data)
_ASKS_OUTCOME = re.compile(
    r"\bwhat\s+(?:happens|will happen|would happen|do(?:es)?\s+(?:\w+\s+){1,3}?"
    r"(?:get|see|receive|return|respond|send|show)s?)\b|\bwhat\s+(?:is|gets)\s+returned\b",
    re.IGNORECASE,
)


def _shown_code(lead: _Sentence, sentences: Sequence[_Sentence]) -> list[_Sentence]:
    """The code lines a lead-in introduces ("When you exceed the limit, the API returns:" and
    the response it shows), as list items in backticks, up to `MAX_CODE_LINES`; nothing when
    `lead` is no lead-in or no code follows it. Without them the best sentence of such a
    section is dropped as a dangling lead-in, and the answer keeps only what supported it."""
    if not lead.text.endswith(":"):
        return []
    lines: list[_Sentence] = []
    for s in sentences:
        if s.passage != lead.passage or s.index <= lead.index:
            continue
        if not s.code or s.index != lead.index + 1 + len(lines):
            break
        lines.append(dataclasses.replace(s, text=f"`{s.text.strip('`')}`", list_item=True))
    return lines[:MAX_CODE_LINES]


def _closing(last: _Sentence, sentences: Sequence[_Sentence]) -> list[_Sentence]:
    """The sentence right after a procedure in its section, which usually says what the steps
    achieve or what to do next ("The policy is saved as a draft."), or nothing."""
    after = next((s for s in sentences if s.passage == last.passage and s.index > last.index), None)
    if after is None or after.list_item or after.heading != last.heading:
        return []
    return [] if after.text.endswith(":") else [after]


def _repeats(s: _Sentence, chosen: Sequence[_Sentence]) -> bool:
    """`s` adds next to nothing to `chosen`: a sentence that says what one of them says (the
    same paragraph is often in several passages of one collection)."""
    return any(
        len(s.terms - c.terms) <= 1 or len(s.terms & c.terms) >= _SAME_SENTENCE * len(s.terms)
        for c in chosen
    )


def extract_answer(
    question: str, passages: Sequence[PassageLike], reading: Reading = ENGLISH
) -> str:
    """The best passage sentences for `question` (or one whole short procedure), cited: the best
    one, its follower when that continues it, then others that score nearly as well (see
    `MAX_SENTENCES`), in document order."""
    wanted = terms(question, reading)
    # "Do you support Slack?": the verb asks whether; the Slack sentence answers, not a row
    # that happens to start with "Support"
    wanted = wanted - terms(" ".join(capability_terms(question)), reading) or wanted
    framed: frozenset[str] = frozenset()
    if frame_terms(question):  # "how long ... take": the duration type says it (weight below)
        framed = frozenset(terms(DURATION_FRAME_WORDS, reading) & wanted)
        wanted = wanted - framed or wanted
    subject = product_terms(question, reading) & wanted
    asked = wanted - subject
    sentences: list[_Sentence] = []
    for p, passage in enumerate(passages):
        title = " ".join(passage.title.split()).casefold()
        for i, (text, item, block, numbered, words, heading, head, kind) in enumerate(
            _units(_answerable_text(passage), reading)
        ):
            if subject and head and " ".join(head.split()).casefold() == title:
                # the article's own title heads its opening: for a question about a product, it
                # names the whole article (scored as the passage's context), not a section on
                # what is asked ("Room Panel network, Wi-Fi and PoE" does not make the opening
                # line an answer to "does the Room Panel support PoE?"). Elsewhere the title
                # heading stands: on pages with no sections it is what marks the page the
                # question names (MT-RAG tune part, answer token F1: 0.381 before this change;
                # applied to every question 0.372, the losses on pages whose title names what
                # was asked; applied to product questions only, as here, 0.385).
                heading, head = frozenset(), ""
            row, code = kind == "row", kind == "code"
            sentences.append(
                _Sentence(p, i, text, words, item, block, numbered, heading, head, row, code)
            )
    if not sentences:
        return ""
    # The products the question names are its subject, not what it asks: "what does it mean when
    # the Room Panel blinks yellow" is answered by what the docs say about blinking yellow, not
    # by any sentence that names the product. Product docs head their sections with the state
    # or part they describe ("Yellow, blinking fast"), so such a question reads each sentence
    # together with its heading (and quotes the heading with it), and a sentence that shares
    # nothing but the product with the question scores nothing. Questions naming no product of
    # the tenant are scored as before (the weights were chosen on MT-RAG, which names none).

    # the first sentence of a section states what its heading names ("Uptime commitment":
    # "… is available at least 99.95% …"): it is read with its heading
    leads = {
        (s.passage, s.index)
        for k, s in enumerate(sentences)
        if s.heading
        and not s.list_item
        and (
            k == 0
            or (sentences[k - 1].passage, sentences[k - 1].heading_text)
            != (s.passage, s.heading_text)
        )
    }

    # A customer who reports a problem ("our audit log stream to Splunk stopped") is answered by
    # the fix of a resolved ticket that reports the same problem, in whatever words the fix is
    # written ("the HEC token had been restricted…"): a ticket's resolution sentences are read
    # with its reported symptom, which is never quoted. Only for a report, not a question: a
    # question about a capability ("can we send them to Splunk?") is not answered by a fix.
    report = reports_a_problem(question)
    reported = [frozenset(terms(_reported(p), reading) if report else ()) for p in passages]

    def seen(s: _Sentence) -> frozenset[str]:
        if reported[s.passage]:
            return s.terms | reported[s.passage]
        if subject or (SECTION_LEADS and (s.passage, s.index) in leads and not s.terms & wanted):
            return s.terms | s.heading
        return s.terms

    df: dict[str, int] = {}
    for s in sentences:
        for t in seen(s) & wanted:
            df[t] = df.get(t, 0) + 1
    n = len(sentences)
    headers = [terms(f"{p.title} {p.breadcrumb}", reading) for p in passages]

    types = asked_types(question)
    steps_wanted = "procedure" in types or asks_for_steps(question)
    values = [k for k in types if k != "procedure"]  # a price, a duration, a number, a date
    has_article = any(p.kind != "ticket" for p in passages)
    # a line of code answers a question that names code (an identifier, a command in quotes)
    names_code = any(is_code(t) for t in content_terms(question)) or "`" in question

    blocks: dict[tuple[int, int], list[frozenset[str]]] = {}
    for s in sentences:
        if s.row:
            blocks.setdefault((s.passage, s.block), []).append(s.terms)
    columns = {k: frozenset.intersection(*v) for k, v in blocks.items()}  # in every row

    def matched(s: _Sentence) -> set[str]:
        """The question's terms `s` speaks to. A table row is named by its first cell ("Fast
        blinking amber") and read under its column names ("Desk Tag: $39"); the product a
        question names, met only in another cell of one row ("Check in on the panel"), does not
        tell that row apart."""
        got = set(seen(s) & wanted)
        if subject and s.row:
            key = _row_key(s.text)
            own = terms(key, reading) | synonym_terms(key, reading) | s.heading
            own |= columns[(s.passage, s.block)]
            got = {t for t in got if t not in subject or t in own}
        return got

    def weight(s: _Sentence) -> float:
        overlap = sum(math.log(1 + n / df[t]) for t in matched(s))
        shown = [k for k in values if shows_type(k, s.text)]
        specific = any(k != "quantity" for k in shown)  # (a quantity is any digit at all)
        if not overlap or (subject and asked and not seen(s) & asked and not specific):
            # (a sentence that names the product and shows the kind of value asked for, a
            # price for "how much does the Room Panel cost?", answers what is asked)
            return 0.0
        context = 0.5 * len(headers[s.passage] & wanted) / max(len(wanted), 1)
        # the section it sits under names what the question asks about
        section = _SECTION_WEIGHT * len(s.heading & wanted) / max(len(wanted), 1)
        length = 1 + 0.03 * max(len(s.terms) - 12, 0)  # long sentences match by sheer size
        kind = _CODE_WEIGHT if s.code and not names_code else 1.0
        if steps_wanted and (s.numbered or (s.text.endswith(":") and not s.list_item)):
            # numbered steps and the line that leads into a list; a bulleted list is options or
            # facts more often than a procedure (a chat app's commands are no booking steps)
            kind = _STEP_BONUS * (1.2 if s.numbered else 1.0)
        if shown:
            kind *= _TYPE_BONUS  # it holds the kind of answer asked for
        if steps_wanted and has_article and passages[s.passage].kind == "ticket":
            kind *= _TICKET_HOWTO  # an article's procedure over an agent's note about one case
        return kind * (overlap / length + context + section) / (1 + _RANK_DECAY * s.passage)

    scores = {(s.passage, s.index): weight(s) for s in sentences}
    if steps_wanted and any(
        v > 0 for (p, _), v in scores.items() if passages[p].kind != "ticket"
    ):  # a how-to question that an article speaks to: an agent's note is not the procedure
        scores = {k: (0.0 if passages[k[0]].kind == "ticket" else v) for k, v in scores.items()}

    def score(s: _Sentence) -> float:
        return scores[(s.passage, s.index)]

    best = max(sentences, key=lambda s: (score(s), -s.passage, -s.index))
    if score(best) <= 0:
        best = sentences[0]  # nothing overlaps: the top passage's opening is still its gist
    if steps_wanted:
        steps = _first_procedure(
            sentences, passages, score, asked or wanted, set(named_terms(question)), reading
        )
        if steps is not None:
            best = steps
            if NARROWER_SECTION_STANDS:
                best = _narrower(steps, sentences, passages, headers, score, asked or wanted)
    # A section headed with the question's own frame ("How long it takes" for "how long does
    # the update take?") is where its page answers it: its best sentence showing a duration is
    # the answer, even when other sections repeat more of the question's words (a release
    # cadence, a postponement limit), and only its own section supports it. Only on the page the
    # best sentence is from: another page's "How long visitor records are kept" does not answer
    # how long audit log entries are kept.
    in_frame = [
        s
        for s in sentences
        if framed
        and framed <= s.heading
        and score(s) > 0
        and shows_type("duration", s.text)
        and passages[s.passage].doc_id == passages[best.passage].doc_id
    ]
    if in_frame:
        best = max(in_frame, key=lambda s: (score(s), -s.passage, -s.index))
    if asks_for_members(question) and not steps_wanted:
        # "which webhook events are there?": a list under a heading made only of what the
        # question names ("Events") is the set asked for, whatever sentence repeats more words
        listed = next(
            (
                s
                for s in sentences
                if s.list_item
                and s.heading
                and s.heading <= wanted | framed
                and passages[s.passage].kind != "ticket"
            ),
            None,
        )
        if listed is not None:
            best = listed
    procedure = _procedure(best, sentences)
    if procedure:
        return _render([*procedure, *_closing(procedure[-1], sentences)])

    def whole_table(row: _Sentence) -> list[_Sentence] | None:
        """The rows of `row`'s table, one a line, when the question names nothing the rows
        differ on, only what the table is about ("what's the API rate limit?" over "API rate
        limits › Limits by plan"): it asks for the table, not for the one row that happens to
        repeat a word of the title ("Free: no API access")."""
        if not row.row:
            return None
        rows = [t for t in sentences if t.row and (t.passage, t.block) == (row.passage, row.block)]
        if not 1 < len(rows) <= MAX_TABLE_ROWS:
            return None
        # the column names are in every row ("Requests per minute per key: …"): words the rows
        # share say what the table is about, as its heading does, not which row is meant
        columns = frozenset.intersection(*(t.terms for t in rows))
        if (seen(row) & wanted) - headers[row.passage] - row.heading - columns:
            return None
        return [dataclasses.replace(t, list_item=True) for t in rows]

    table = whole_table(best)
    if table:
        return _render(table)
    chosen = [best]

    # the question's names the best sentence holds ("UK" in the United Kingdom row)
    best_names = best.terms & terms(" ".join(named_terms(question)), reading)

    def on_topic(s: _Sentence) -> bool:
        """When the best sentence sits under a heading that names the question, a sentence
        under another heading that names none of it answers some other question; when the best
        is the table row of what the question names, the other rows are about something else
        (the Canada row does not answer for the UK), and a row of the same table that lacks a
        question term the best row has describes another case ("solid red light": not the
        Solid amber or the Blinking red row)."""
        if in_frame and (s.passage, s.heading) != (best.passage, best.heading):
            return False
        if (
            OTHER_PAGES_HOLD_ALL
            and steps_wanted
            and passages[s.passage].doc_id != passages[best.passage].doc_id
            and not seen(best) & wanted <= seen(s)
        ):
            return False  # "cancel a booking": another page's "Cancel subscription" is not it
        if best.row and s.row and best_names and not s.terms & best_names:
            return False
        if best.row and s.row and s.passage == best.passage and not seen(best) & wanted <= seen(s):
            return False  # "solid red": the Solid amber and Blinking red rows answer another
        named = best.heading & wanted
        if subject:  # another section's heading must name all that the best one's does
            return s.heading == best.heading or best.heading & asked <= s.heading
        return not named or s.heading == best.heading or bool(s.heading & wanted)

    follower = next(
        (s for s in sentences if s.passage == best.passage and s.index == best.index + 1), None
    )
    if (
        follower
        and score(follower) >= 0.3 * score(best) > 0
        and not follower.list_item
        and _reads_as_sentence(follower)
        and not (follower.row and not on_topic(follower))
    ):
        chosen.append(follower)
    for s in sorted(sentences, key=lambda s: -score(s)):
        if (
            len(chosen) >= MAX_SENTENCES
            or sum(len(c.text.split()) for c in chosen) >= MAX_ANSWER_WORDS
            or score(s) < _SUPPORT_RATIO * score(best)
            or score(s) <= 0
        ):
            break
        if (
            s not in chosen
            and not s.list_item
            and not (s.code and not names_code)  # code supports no prose answer
            and _reads_as_sentence(s)
            and not _repeats(s, chosen)
            and on_topic(s)
        ):
            table = whole_table(s)
            if table and not any(t.row and t.block == s.block for t in chosen):
                chosen.extend(table)  # the table it belongs to, not one row of it
                break
            chosen.append(s)
    shows_code = names_code or _ASKS_OUTCOME.search(question) is not None
    shown = _shown_code(best, sentences) if best in chosen and shows_code else []
    chosen = [s for s in chosen if not s.text.endswith(":") or (shown and s is best)] or [
        best
    ]  # no dangling lead-ins: a lead-in stays only with the code it introduces
    chosen.sort(key=lambda s: (s.passage, s.index))
    if shown:
        at = chosen.index(best) + 1
        chosen[at:at] = shown
    if subject:
        chosen = _headed(chosen, asked)
    return _render(chosen)


def _headed(chosen: Sequence[_Sentence], asked: set[str]) -> list[_Sentence]:
    """The first chosen sentence of each section whose heading says what was asked and the
    sentence does not, with that heading in front ("Yellow, blinking slowly: The panel has an
    address but cannot reach the service.")."""
    out: list[_Sentence] = []
    for k, s in enumerate(chosen):
        first = k == 0 or (chosen[k - 1].passage, chosen[k - 1].heading_text) != (
            s.passage,
            s.heading_text,
        )
        if first and s.heading_text and not s.list_item and (s.heading & asked) - s.terms:
            s = dataclasses.replace(s, text=f"{s.heading_text}: {s.text}")
        out.append(s)
    return out


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
_NUMBERED_START = re.compile(r"1[.)]\s")  # an answer that opens with a numbered procedure


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
            steps = extract_answer(question, request.passages, reading)
            extract = steps if _NUMBERED_START.match(steps) else extract
        extract = extract or extract_answer(question, request.passages, reading)
    if not found and not extract:
        return no_answer_reply(request.tool_results, ph)  # what the lookups said, and a person
    body = extract
    if extract:
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
    if extract and request.confidence == "weak":
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", extract)]
        cited = list(
            dict.fromkeys(
                request.passages[n - 1].title
                for n in numbers
                if 0 < n <= len(request.passages) and request.passages[n - 1].title
            )
        )
        if cited:  # what the passages say is introduced as theirs; the lookups' facts are ours
            body = phrase(
                ph, "found_in", "This is what I found in {titles}: {text}",
                titles=_join([f"“{t}”" for t in cited], phrase(ph, "or", " or ")),
                text="\n" + body if _LIST_START.match(body) else body,
            ).replace(" \n", "\n")  # fmt: skip
        body += " " + phrase(ph, "weak_hedge", WEAK_HEDGE)
    # a list starts on its own line, also after the lookups' sentences
    joiner = "\n" if facts and _LIST_START.match(body) else " "
    return joiner.join(p for p in (" ".join(facts), body) if p)


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
    """The question's names, numbers and identifiers (as the customer wrote them) that no
    passage contains, by itself or through a synonym ("UK" is in a passage that writes "United
    Kingdom" when the tenant groups the two). German capitalises every noun, so there only
    numbers and identifiers count ("Batterie" is not a name the articles fail to mention)."""
    present: set[str] = set()
    for p in passages:
        text = f"{p.title}\n{p.text}"
        present |= term_set(text) | covered_terms(text, synonyms)
    named = set(named_terms(question))
    if language == "de":
        named = {t for t in named if is_code(t) or any(c.isdigit() for c in t)}
    out = []
    for word in _WORD.findall(question):
        found = content_terms(word)
        named_word = found and all(t in named for t in found)
        if named_word and not any(t in present for t in found) and word not in out:
            out.append(word)
    return out


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
