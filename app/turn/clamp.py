"""Clamp a condensation, field by field, to the closed sets of DESIGN 5.1 (pure, no I/O).

Whatever a model returns (a dict, a list, a string, null) comes out as a well-formed
`Condensation`; every coerced field is named in `clamped_fields`, so a trace can show that the
model misbehaved. An unknown intent becomes `other`: it must never pass silently, because an
unclamped value could slip past the escalation policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from app.language.identifiers import Identifiers, generic_identifiers
from app.tenant import INTENTS as _TENANT_INTENTS
from app.tenant import SENTIMENTS as _TENANT_SENTIMENTS

INTENTS: Final[tuple[str, ...]] = _TENANT_INTENTS
SENTIMENTS: Final[tuple[str, ...]] = _TENANT_SENTIMENTS
TOOLS: Final[tuple[str, ...]] = (
    "lookupOrder",
    "listRecentOrders",
    "lookupSubscription",
    "lookupCase",
)

Source = Literal["model", "offline"]

MAX_STANDALONE_CHARS: Final = 1000  # longer is an answer or a paste, not a question

_TRUE = frozenset({"true", "yes", "y", "1", "on"})
_FALSE = frozenset({"false", "no", "n", "0", "off", "none", "null", ""})


@dataclass(frozen=True, slots=True)
class Condensation:
    """The condensed, classified turn every later stage reads (DESIGN 5.1)."""

    standalone_question: str
    intent: str
    needs_retrieval: bool
    needs_tools: tuple[str, ...]
    sentiment: str
    mentioned_order_id: str | None
    explicit_human_request: bool
    clamped_fields: tuple[str, ...] = ()
    source: Source = "offline"
    fallback_reason: str | None = None  # why the model's output was not used, when it was not
    intent_score: float | None = None  # router confidence (offline path only)
    mentioned_case_ref: str | None = None
    identifiers: tuple[str, ...] = ()  # order/case refs, error codes, SKUs, verbatim, in order

    def to_meta(self) -> dict[str, Any]:
        """The camelCase contract shape of DESIGN 5.1 plus the trace fields."""
        return {
            "standaloneQuestion": self.standalone_question,
            "intent": self.intent,
            "needsRetrieval": self.needs_retrieval,
            "needsTools": list(self.needs_tools),
            "sentiment": self.sentiment,
            "mentionedOrderId": self.mentioned_order_id,
            "explicitHumanRequest": self.explicit_human_request,
            "clampedFields": list(self.clamped_fields),
            "source": self.source,
            "fallbackReason": self.fallback_reason,
        }


def _pick(raw: Mapping[Any, Any], *names: str) -> tuple[bool, Any]:
    for name in names:
        if name in raw:
            return True, raw[name]
    return False, None


def _token(value: str) -> str:
    return re.sub(r"[\s\-]+", "_", value.strip().lower())


def _bool(value: Any) -> tuple[bool | None, bool]:
    """(parsed value or None when unusable, whether it had to be coerced)."""
    if isinstance(value, bool):
        return value, False
    if isinstance(value, int | float):
        return bool(value), True
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return True, True
        if low in _FALSE:
            return False, True
    return None, True


def normalize_order_id(value: object, ids: Identifiers | None = None) -> str | None:
    """`ord-1042` → `ORD-1042`; anything that is not exactly one order reference → None."""
    return (ids or generic_identifiers()).normalise("order", value)


def clamp_condensation(
    raw: object, *, original: str, ids: Identifiers | None = None
) -> Condensation:
    """A valid `Condensation` from arbitrary model output; `original` is the customer's message."""
    clamped: list[str] = []
    data: Mapping[Any, Any] = raw if isinstance(raw, Mapping) else {}
    if not isinstance(raw, Mapping):
        clamped.append("raw")

    # standalone question: a non-empty string, else the customer's own words
    _, value = _pick(data, "standaloneQuestion", "standalone_question")
    standalone = value.strip() if isinstance(value, str) else ""
    if not standalone:
        standalone = original.strip()
        clamped.append("standalone_question")
    elif len(standalone) > MAX_STANDALONE_CHARS:
        standalone = original.strip()[:MAX_STANDALONE_CHARS]
        clamped.append("standalone_question")

    # intent: exactly one of the closed set, else `other`
    _, value = _pick(data, "intent")
    intent = _token(value) if isinstance(value, str) else ""
    if intent not in INTENTS:
        intent = "other"
    if not (isinstance(value, str) and value == intent):
        clamped.append("intent")

    # needsRetrieval: a boolean; missing → retrieve unless the turn is an acknowledgment
    _, value = _pick(data, "needsRetrieval", "needs_retrieval")
    parsed, coerced = _bool(value)
    if parsed is None:
        parsed = intent != "acknowledgment"
    if coerced:
        clamped.append("needs_retrieval")
    needs_retrieval = parsed

    # needsTools: known tool names only, deduplicated, order kept
    present, value = _pick(data, "needsTools", "needs_tools")
    items: list[Any]
    if isinstance(value, list | tuple):
        items, coerced = list(value), False
    elif isinstance(value, str):
        items, coerced = [value], True
    else:
        items, coerced = [], True  # null, missing or not a list
    tools: list[str] = []
    for item in items:
        if isinstance(item, str) and item in TOOLS:
            if item not in tools:
                tools.append(item)
            continue
        coerced = True
    if coerced:
        clamped.append("needs_tools")

    # sentiment: one of four, else neutral
    _, value = _pick(data, "sentiment")
    sentiment = _token(value) if isinstance(value, str) else ""
    if sentiment not in SENTIMENTS:
        sentiment = "neutral"
    if not (isinstance(value, str) and value == sentiment):
        clamped.append("sentiment")

    # mentionedOrderId: ORD-### to ORD-###### (upper case) or None
    present, value = _pick(data, "mentionedOrderId", "mentioned_order_id")
    order_id = normalize_order_id(value, ids)
    if not present or (value is not None and order_id != value):
        clamped.append("mentioned_order_id")

    # explicitHumanRequest: a boolean; anything unusable → False
    _, value = _pick(data, "explicitHumanRequest", "explicit_human_request")
    human, coerced = _bool(value)
    if coerced:
        clamped.append("explicit_human_request")

    return Condensation(
        standalone_question=standalone,
        intent=intent,
        needs_retrieval=needs_retrieval,
        needs_tools=tuple(tools),
        sentiment=sentiment,
        mentioned_order_id=order_id,
        explicit_human_request=bool(human),
        clamped_fields=tuple(clamped),
    )


CUSTOMER_DATA_TOOLS: Final = frozenset({"lookupOrder", "listRecentOrders", "lookupSubscription"})


def without_customer_data(cond: Condensation) -> Condensation:
    """A deployment with no orders or subscriptions (a docs folder served with ARTICLES_DIR)
    has a smaller closed set: no order/subscription tools, and `order_status` is not one of its
    intents, so it becomes `other` like any value outside the set."""
    tools = tuple(t for t in cond.needs_tools if t not in CUSTOMER_DATA_TOOLS)
    intent = "other" if cond.intent == "order_status" else cond.intent
    if tools == cond.needs_tools and intent == cond.intent:
        return cond
    changed = [
        name
        for name, same in (
            ("intent", intent == cond.intent),
            ("needs_tools", tools == cond.needs_tools),
        )
        if not same
    ]
    return replace(
        cond,
        intent=intent,
        needs_tools=tools,
        mentioned_order_id=None,
        clamped_fields=tuple(dict.fromkeys((*cond.clamped_fields, *changed))),
    )
