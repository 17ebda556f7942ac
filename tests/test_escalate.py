"""Escalation policy: table-driven, no I/O."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.store.models import Conversation, Customer, Escalation
from app.turn.escalate import (
    Decision,
    asks_permission,
    build_packet,
    decide,
    is_breached,
    may_self_serve,
    next_failed_turns,
    settle_self_serve,
    sla_due,
    turn_outcome,
)
from tuning import TUNING

NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("intent", "explicit", "sentiment", "outcome", "failed", "expected"),
    [
        ("refund_request", False, "neutral", "success", 0, "policy"),
        ("legal", True, "angry", "failed", 9, "policy"),  # policy is checked first
        ("how_to", True, "neutral", "success", 0, "explicit"),
        ("troubleshooting", False, "angry", "failed", 1, "frustration"),
        ("troubleshooting", False, "frustrated", "success", 0, None),  # upset but helped
        ("how_to", False, "frustrated", "partial", 1, None),  # a hedged answer is an answer
        ("how_to", False, "angry", "partial", 3, "failed_turns"),  # but counts in the streak
        ("troubleshooting", False, "neutral", "failed", 3, "failed_turns"),
        ("troubleshooting", False, "neutral", "failed", 2, None),  # > 2, not >= 2
        ("acknowledgment", False, "angry", "neutral", 0, None),
        ("how_to", False, "positive", "success", 0, None),
    ],
)
def test_signals_in_order(
    intent: str, explicit: bool, sentiment: str, outcome: str, failed: int, expected: str | None
) -> None:
    d = decide(
        intent=intent,
        explicit_request=explicit,
        sentiment=sentiment,
        outcome=outcome,  # type: ignore[arg-type]
        failed_turns=failed,
        tuning=TUNING,
    )
    assert d.escalate is (expected is not None)
    assert d.reason == expected
    assert d.explain()


@pytest.mark.parametrize(
    ("intent", "explicit", "person_only", "steps", "expected"),
    [
        ("data_deletion", False, (), False, True),
        ("cancellation", False, ("refund_request",), False, True),
        ("refund_request", False, ("refund_request",), False, False),  # the tenant keeps it
        ("refund_request", False, ("refund_request",), True, False),  # asked how, still kept
        ("data_deletion", True, (), False, False),  # a person was asked for
        ("billing_dispute", True, (), True, False),
        ("legal", False, (), False, False),  # a request: a person grants it
        ("billing_dispute", False, (), False, False),
        ("billing_dispute", False, (), True, True),  # asked how to: the docs' steps first
        ("legal", False, (), True, True),
        ("legal", False, ("legal",), True, False),
        ("how_to", False, (), False, False),  # not a policy request at all
    ],
)
def test_which_policy_requests_may_be_self_served(
    intent: str, explicit: bool, person_only: tuple[str, ...], steps: bool, expected: bool
) -> None:
    got = may_self_serve(
        intent, explicit_request=explicit, person_only=person_only, tuning=TUNING, steps=steps
    )
    assert got is expected


@pytest.mark.parametrize(
    ("intent", "explicit", "escalates"),
    [
        ("data_deletion", False, False),
        ("cancellation", False, False),
        ("billing_dispute", False, False),  # the caller found it self-servable (asked how to)
        ("human_handoff", False, True),  # a person asked for: never overridden
        ("data_deletion", True, True),
    ],
)
def test_a_found_procedure_gives_way_to_the_policy_signal(
    intent: str, explicit: bool, escalates: bool
) -> None:
    d = decide(
        intent=intent,
        explicit_request=explicit,
        sentiment="neutral",
        outcome="success",
        failed_turns=0,
        tuning=TUNING,
        self_serve=True,
    )
    assert d.escalate is escalates
    assert d.self_serve is not escalates
    assert ("self-serve" in d.explain()) is not escalates


def test_a_self_serve_reply_without_steps_is_handed_off_as_policy() -> None:
    found = Decision(False, self_serve=True)
    steps = "You can do it yourself:\n1. Open Settings.\n2. Choose Delete account."
    assert settle_self_serve(found, steps) == found
    quoted = "People can ask for their data to be deleted [1]."
    assert settle_self_serve(found, quoted) == Decision(True, "policy")
    assert settle_self_serve(Decision(False), quoted) == Decision(False)  # not self-serve: as is
    # "can I …?" asks what the terms allow: the docs' answer stands, steps or not
    assert settle_self_serve(found, quoted, permission=True) == found


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Can I pay the invoice by bank transfer?", True),
        ("Is it possible to pause a plan?", True),
        ("Darf ich mein Abo per Brief kündigen?", True),
        ("Puis-je annuler par téléphone ?", True),
        ("Can you close my account?", False),  # addressed to us: a request
        ("I can't sign in", False),
        ("Cancel my plan", False),
    ],
)
def test_a_question_whether_the_customer_may_do_something(text: str, asks: bool) -> None:
    assert asks_permission(text) is asks


def test_failed_turn_counting() -> None:
    assert turn_outcome(needed_answer=False, strong_passage=False, tool_found=False) == "neutral"
    assert turn_outcome(needed_answer=True, strong_passage=False, tool_found=False) == "failed"
    assert turn_outcome(needed_answer=True, strong_passage=False, tool_found=True) == "success"
    assert turn_outcome(needed_answer=True, strong_passage=True, tool_found=False) == "success"
    weak = turn_outcome(
        needed_answer=True, strong_passage=False, tool_found=False, weak_passage=True
    )
    assert weak == "partial" and next_failed_turns(1, weak) == 2
    assert next_failed_turns(2, "failed") == 3
    assert next_failed_turns(2, "neutral") == 2
    assert next_failed_turns(2, "success") == 0


def test_max_failed_turns_is_tunable() -> None:
    strict = replace(TUNING, max_failed_turns=0)
    d = decide(
        intent="how_to",
        explicit_request=False,
        sentiment="neutral",
        outcome="failed",
        failed_turns=1,
        tuning=strict,
    )
    assert d.reason == "failed_turns"


def test_sla_by_plan_and_breach_computed_on_read() -> None:
    assert sla_due("enterprise", NOW, TUNING) == NOW + timedelta(hours=4)
    assert sla_due("legacy-gold", NOW, TUNING) == NOW + timedelta(hours=72)
    assert sla_due(None, NOW, TUNING) == NOW + timedelta(hours=72)
    p = Escalation(
        case_ref="CASE-AAAAAA",
        conversation_id="c",
        reason="policy",
        created_at=NOW,
        sla_due_at=NOW + timedelta(hours=4),
    )
    assert not is_breached(p, NOW + timedelta(hours=3))
    assert is_breached(p, NOW + timedelta(hours=5))
    assert not is_breached(p.model_copy(update={"status": "resolved"}), NOW + timedelta(days=9))


def test_packet_is_complete() -> None:
    conv = Conversation(
        id="c1",
        customer_id="cus",
        created_at=NOW,
        updated_at=NOW,
        turn_count=4,
        summary="asked about SSO",
        facts=[{"value": "AUTH_302"}],
    )
    cust = Customer(
        id="cus", name="Ada", email="a@example.com", plan="enterprise", seats=40, created_at=NOW
    )
    p = build_packet(
        conversation=conv,
        customer=cust,
        subscription=None,
        reason="explicit",
        intent="troubleshooting",
        asked_for="SSO fails with AUTH_302",
        sentiment="frustrated",
        failed_turns=2,
        attempted={"confidence": "weak", "passages": []},
        now=NOW,
        tuning=TUNING,
    )
    doc = p.to_doc()
    assert doc["caseRef"].startswith("CASE-") and len(doc["caseRef"]) == 11
    assert doc["customer"]["plan"] == "enterprise" and doc["customer"]["seats"] == 40
    assert doc["conversation"] == {
        "turnCount": 4,
        "failedTurns": 2,
        "summary": "asked about SSO",
        "facts": [{"value": "AUTH_302"}],
    }
    assert doc["slaDueAt"] == NOW + timedelta(hours=4)
    assert "breached" not in doc
