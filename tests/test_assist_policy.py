"""Agent assist's pure parts: the quote, the policy draft from tenant data, the offers a draft
for a person leaves out, and the problem a case is searched with."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from app.assist.policy import is_policy_case, plain, policy_draft, quote, without_offers
from app.assist.suggest import case_problem
from app.store.models import Escalation, Message
from app.tenant import Tenant, load_tenant

SEED = load_tenant()
PROMISE = re.compile(
    r"\b(I|we)('ve| have| will|'ll)\s+(refund|cancel|delete|credit|issue)|refunded|cancelled\b"
    r"|\bapproved\b|erstattet|storniert|gelöscht|remboursé|annulé|supprimé",
    re.IGNORECASE,
)


@pytest.mark.parametrize(
    ("intent", "policy"),
    [
        ("refund_request", True),
        ("cancellation", True),
        ("legal", True),
        ("data_deletion", True),
        ("billing_dispute", True),
        ("human_handoff", False),  # asking for a person decides nothing
        ("how_to", False),
        ("troubleshooting", False),
        (None, False),
    ],
)
def test_policy_cases_are_the_tenants_decisions(intent: str | None, policy: bool) -> None:
    assert is_policy_case(intent, SEED) is policy


def test_quote_keeps_whole_sentences_without_the_chunks_heading() -> None:
    text = (
        "### Opened but working\n\nOpened hardware in working condition is refunded minus a "
        "**15% restocking fee**. See [Returning hardware](hardware-returns-rma). A third "
        "sentence that does not fit."
    )
    got = quote(text, 120)
    assert got == (
        "Opened hardware in working condition is refunded minus a 15% restocking fee. "
        "See Returning hardware."
    )
    assert "Opened but working" not in got and "**" not in got


def test_a_first_sentence_longer_than_the_limit_is_cut_at_a_word() -> None:
    got = quote("word " * 50, 23)
    assert got.endswith(" …") and len(got) <= 25 and "wor …" not in got


def test_plain_reads_like_text() -> None:
    assert plain("1. Open **Billing**\n2. Click [Cancel](x)") == "Open Billing Click Cancel"


@pytest.mark.parametrize("locale", ["en", "de", "fr"])
def test_the_policy_draft_quotes_and_promises_nothing_in_every_locale(locale: str) -> None:
    passage = "### Monthly plans\n\nMonthly charges are not refunded. The plan stays active."
    text, decide, quoted = policy_draft(SEED, "refund_request", locale, passage, 400)
    assert quoted == "Monthly charges are not refunded. The plan stays active."
    assert quoted in text and "[1]" in text
    assert not PROMISE.search(text.replace(quoted, "")), text
    assert decide == SEED.assist_decisions["refund_request"]
    plain_text, _, none = policy_draft(SEED, "refund_request", locale, None, 400)
    assert none is None and "[1]" not in plain_text and not PROMISE.search(plain_text)
    assert plain_text == SEED.text("assist_policy_unquoted", locale)


def test_every_decision_forbids_the_promise_it_is_about() -> None:
    for intent, decide in SEED.assist_decisions.items():
        assert "do not" in decide.lower(), intent


def test_an_unknown_intent_in_assist_decisions_is_refused() -> None:
    with pytest.raises(ValidationError, match="unknown intents"):
        Tenant.model_validate(
            {**SEED.model_dump(by_alias=True), "assistDecisions": {"refund_reqest": "x"}}
        )


def test_the_bots_offers_of_a_person_leave_the_draft() -> None:
    offers = ["If that doesn't cover your situation, I can connect you with a person."]
    text = "Restart the panel [1].\n\n" + offers[0]
    assert without_offers(text, offers) == "Restart the panel [1]."
    assert without_offers("Restart the panel [1].", offers) == "Restart the panel [1]."


def _case(intent: str, asked_for: str, trigger: str) -> Escalation:
    now = datetime.now(UTC)
    return Escalation(
        case_ref="CASE-ABC234",
        conversation_id="c1",
        reason="explicit",
        intent=intent,
        asked_for=asked_for,
        trigger=trigger,
        created_at=now,
        sla_due_at=now,
    )


def _said(*texts: str) -> list[Message]:
    now = datetime.now(UTC)
    return [
        Message(id=f"m{i}", conversation_id="c1", seq=i, role="user", content=t, created_at=now)
        for i, t in enumerate(texts, 1)
    ]


def test_a_request_for_a_person_is_not_the_problem_searched() -> None:
    ask = "can I speak to an actual person?"
    messages = _said("My room panel is offline", "it's just off", ask)
    problem, latest = case_problem(_case("human_handoff", ask, ask), messages, 3)
    assert problem == "My room panel is offline it's just off" and ask not in latest
    alone = _said(ask)  # nothing else was said: the request is all there is
    assert case_problem(_case("human_handoff", ask, ask), alone, 3)[0] == ask
    stated = _case("troubleshooting", "My room panel is offline", "it's just off")
    assert case_problem(stated, messages, 3)[0] == "My room panel is offline"
