"""Clamping arbitrary model output to the closed sets of DESIGN 5.1."""

from __future__ import annotations

from typing import Any

import pytest

from app.turn.clamp import (
    INTENTS,
    SENTIMENTS,
    TOOLS,
    Condensation,
    clamp_condensation,
    normalize_order_id,
)

ORIGINAL = "where is my order ORD-1042?"

VALID: dict[str, Any] = {
    "standaloneQuestion": "Where is order ORD-1042?",
    "intent": "order_status",
    "needsRetrieval": True,
    "needsTools": ["lookupOrder"],
    "sentiment": "neutral",
    "mentionedOrderId": "ORD-1042",
    "explicitHumanRequest": False,
}


def test_valid_output_passes_untouched() -> None:
    c = clamp_condensation(VALID, original=ORIGINAL)
    assert c == Condensation(
        standalone_question="Where is order ORD-1042?",
        intent="order_status",
        needs_retrieval=True,
        needs_tools=("lookupOrder",),
        sentiment="neutral",
        mentioned_order_id="ORD-1042",
        explicit_human_request=False,
    )
    assert c.clamped_fields == ()


@pytest.mark.parametrize("raw", [None, "not json", 42, ["intent", "legal"], b"{}", 3.5])
def test_garbage_becomes_safe_defaults(raw: object) -> None:
    c = clamp_condensation(raw, original="  my panel is dead  ")
    assert c.standalone_question == "my panel is dead"
    assert c.intent == "other"
    assert c.sentiment == "neutral"
    assert c.needs_tools == ()
    assert c.mentioned_order_id is None
    assert c.explicit_human_request is False
    assert c.needs_retrieval is True
    assert "raw" in c.clamped_fields and "intent" in c.clamped_fields


@pytest.mark.parametrize(
    ("field", "value", "attr", "expected", "clamped"),
    [
        # intent
        ("intent", "refund_request", "intent", "refund_request", False),
        ("intent", "Refund-Request", "intent", "refund_request", True),
        ("intent", "refund please", "intent", "other", True),
        ("intent", "escalate_now", "intent", "other", True),
        ("intent", 7, "intent", "other", True),
        ("intent", None, "intent", "other", True),
        # sentiment
        ("sentiment", "angry", "sentiment", "angry", False),
        ("sentiment", "ANGRY", "sentiment", "angry", True),
        ("sentiment", "ecstatic", "sentiment", "neutral", True),
        ("sentiment", ["angry"], "sentiment", "neutral", True),
        # needsRetrieval
        ("needsRetrieval", False, "needs_retrieval", False, False),
        ("needsRetrieval", "false", "needs_retrieval", False, True),
        ("needsRetrieval", "yes", "needs_retrieval", True, True),
        ("needsRetrieval", 0, "needs_retrieval", False, True),
        ("needsRetrieval", {"x": 1}, "needs_retrieval", True, True),
        # needsTools
        ("needsTools", [], "needs_tools", (), False),
        ("needsTools", ["lookupOrder", "lookupOrder"], "needs_tools", ("lookupOrder",), False),
        ("needsTools", ["deleteCustomer", "lookupCase"], "needs_tools", ("lookupCase",), True),
        ("needsTools", "lookupSubscription", "needs_tools", ("lookupSubscription",), True),
        ("needsTools", [1, None], "needs_tools", (), True),
        ("needsTools", None, "needs_tools", (), True),
        # mentionedOrderId
        ("mentionedOrderId", "ORD-123", "mentioned_order_id", "ORD-123", False),
        ("mentionedOrderId", "ord-1042", "mentioned_order_id", "ORD-1042", True),
        ("mentionedOrderId", " ORD-104299 ", "mentioned_order_id", "ORD-104299", True),
        ("mentionedOrderId", "ORD-12", "mentioned_order_id", None, True),
        ("mentionedOrderId", "ORD-1234567", "mentioned_order_id", None, True),
        ("mentionedOrderId", "order 1042", "mentioned_order_id", None, True),
        ("mentionedOrderId", "the order ORD-5555", "mentioned_order_id", "ORD-5555", True),
        ("mentionedOrderId", None, "mentioned_order_id", None, False),
        ("mentionedOrderId", 1042, "mentioned_order_id", None, True),
        # explicitHumanRequest
        ("explicitHumanRequest", True, "explicit_human_request", True, False),
        ("explicitHumanRequest", "true", "explicit_human_request", True, True),
        ("explicitHumanRequest", "maybe", "explicit_human_request", False, True),
        # standaloneQuestion
        ("standaloneQuestion", "   ", "standalone_question", ORIGINAL, True),
        ("standaloneQuestion", None, "standalone_question", ORIGINAL, True),
        ("standaloneQuestion", 12, "standalone_question", ORIGINAL, True),
        ("standaloneQuestion", "x" * 5000, "standalone_question", ORIGINAL, True),
    ],
)
def test_each_field_is_clamped(
    field: str, value: object, attr: str, expected: object, clamped: bool
) -> None:
    raw = dict(VALID, **{field: value})
    c = clamp_condensation(raw, original=ORIGINAL)
    assert getattr(c, attr) == expected
    assert (attr in c.clamped_fields) is clamped


def test_missing_fields_are_recorded() -> None:
    c = clamp_condensation({"intent": "how_to"}, original="how do I add a room")
    assert c.standalone_question == "how do I add a room"
    assert c.intent == "how_to"
    assert set(c.clamped_fields) >= {
        "standalone_question",
        "needs_retrieval",
        "needs_tools",
        "sentiment",
        "mentioned_order_id",
        "explicit_human_request",
    }


def test_missing_retrieval_flag_defaults_by_intent() -> None:
    ack = clamp_condensation({"intent": "acknowledgment"}, original="thanks")
    assert ack.needs_retrieval is False
    other = clamp_condensation({"intent": "troubleshooting"}, original="panel is dead")
    assert other.needs_retrieval is True


def test_snake_case_keys_are_accepted() -> None:
    c = clamp_condensation(
        {"standalone_question": "q", "intent": "legal", "needs_tools": ["lookupCase"]},
        original="x",
    )
    assert (c.standalone_question, c.intent, c.needs_tools) == ("q", "legal", ("lookupCase",))


def test_closed_sets_match_the_design() -> None:
    assert len(INTENTS) == 14 and "other" in INTENTS
    assert SENTIMENTS == ("positive", "neutral", "frustrated", "angry")
    assert TOOLS == ("lookupOrder", "listRecentOrders", "lookupSubscription", "lookupCase")


def test_meta_uses_contract_keys() -> None:
    meta = clamp_condensation(VALID, original=ORIGINAL).to_meta()
    for key in VALID:
        assert meta[key] == VALID[key]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ORD-1042", "ORD-1042"), ("ord-999", "ORD-999"), ("ORD-99", None), (None, None),
     ("ORD-1042 and ORD-2000", None)],
)  # fmt: skip
def test_normalize_order_id(value: object, expected: str | None) -> None:
    assert normalize_order_id(value) == expected
