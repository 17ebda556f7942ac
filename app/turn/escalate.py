"""When the answer is a person: four independent signals (DESIGN 6), checked in order.

Kept separate on purpose: one blended score could be neither tuned nor explained. "Why did it
escalate?" is answered by `reason` in the message meta plus the numbers in tuning.py.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from app.language.lexicon import matcher
from app.language.utterance import opens_as_question
from app.search.answer_types import shows_type
from app.store.escalations import new_case_ref
from app.store.models import Conversation, Customer, Escalation, Subscription
from app.tenant import Tenant, generic_tenant
from tuning import Tuning

Reason = Literal["policy", "explicit", "frustration", "failed_turns"]
Outcome = Literal["success", "partial", "failed", "neutral"]


@dataclass(frozen=True)
class Decision:
    escalate: bool
    reason: Reason | None = None
    self_serve: bool = False  # a policy request answered with its documented procedure

    def explain(self) -> str:
        if self.self_serve:
            return (
                "not escalated: the tenant's docs give a self-serve procedure for this request "
                "(found with a strong passage) and the tenant file does not mark it person-only; "
                "the reply offers a person"
            )
        return {
            None: "no escalation signal fired",
            "policy": "the request is one a person must handle (policy intent)",
            "explicit": "the customer asked for a person",
            "frustration": "the customer is frustrated and this turn did not help",
            "failed_turns": "several turns in a row did not find an answer",
        }[self.reason]


def policy_escalates(
    intent: str, tuning: Tuning, tenant_intents: Collection[str] | None = None
) -> bool:
    """Signal 1, checked on arrival before any retrieval: a policy intent of `tuning` that the
    tenant's policy data (`escalateIntents`) keeps; a tenant can narrow the set, never widen it."""
    if tenant_intents is not None and intent not in tenant_intents:
        return False
    return intent in tuning.always_escalate_intents


def may_self_serve(
    intent: str,
    *,
    explicit_request: bool,
    person_only: Collection[str],
    tuning: Tuning,
    asked: bool = True,
    steps: bool = False,
) -> bool:
    """A policy request the docs may answer first (retrieval runs before deciding): one of the
    self-serve intents of `tuning`, or any policy intent when the customer asks how to do it
    (`steps`: "how do I dispute a charge?" asks for the procedure, not for us to act); not marked
    person-only by the tenant, no person asked for, and `asked` as a question or a wish of the
    customer's own ("how do I delete my account?", "I'd like to close my account"). A request
    addressed to us ("I want you to delete my data", "cancel my subscription") is one a person
    grants."""
    return (
        asked
        and (steps or intent in tuning.self_serve_intents)
        and intent not in person_only
        and not explicit_request
    )


_PERMISSION = matcher("asks.permission")


def asks_permission(text: str) -> bool:
    """It opens by asking whether the customer may do something ("can I …", "is it possible
    to …", "darf ich …", "puis-je …"): what the terms allow, not a request to us."""
    return bool(_PERMISSION.match(text.strip(" ¿¡\"'")))


def asks_or_wishes(text: str) -> bool:
    """A question (a question mark at its end, or a question's opening: "how do I …") or the
    customer's own wish ("I'd like to close my account", the lexicons' `wish`): not a request
    addressed to us ("cancel my subscription", "I want you to delete my data")."""
    stripped = text.strip()
    return (
        stripped.endswith("?") or opens_as_question(stripped) or bool(matcher("wish").search(text))
    )


def settle_self_serve(decision: Decision, reply: str, *, permission: bool = False) -> Decision:
    """A self-serve decision stands when the reply it produced shows the procedure (steps), or
    when the customer asked whether they may do something (`permission`: "can I cancel by
    email?") without asking how: the docs' answer is the answer, yes or no, and a person is
    offered with it. Otherwise a reply that quotes the policy without steps is handed off as the
    policy intent would be."""
    if decision.self_serve and not permission and not shows_type("procedure", reply):
        return Decision(True, "policy")
    return decision


def turn_outcome(
    *, needed_answer: bool, strong_passage: bool, tool_found: bool, weak_passage: bool = False
) -> Outcome:
    """A turn fails when it needed an answer and got neither a strong passage nor a found tool;
    it is `partial` when a weak passage still gave the hedged answer something to say."""
    if not needed_answer:
        return "neutral"
    if strong_passage or tool_found:
        return "success"
    return "partial" if weak_passage else "failed"


def next_failed_turns(previous: int, outcome: Outcome) -> int:
    """Success resets the streak; a neutral turn (thanks) leaves it alone."""
    if outcome == "success":
        return 0
    if outcome in ("failed", "partial"):
        return previous + 1
    return previous


def decide(
    *,
    intent: str,
    explicit_request: bool,
    sentiment: str,
    outcome: Outcome,
    failed_turns: int,
    tuning: Tuning,
    tenant_intents: Collection[str] | None = None,
    self_serve: bool = False,
) -> Decision:
    """Signals in order: policy, explicit request, frustration + failure, failed streak.

    Frustration is a signal, not a trigger: alone it never hands off, nor on a turn whose hedged
    answer the docs still supported (`partial`); it does on a turn that found nothing. A partial
    turn still counts towards the failed streak.

    Asking for a person is the explicit signal whether it was typed ("can I talk to a human?",
    intent `human_handoff`) or the button: it is not a policy intent's authority boundary.

    `self_serve`: the docs answered this policy request with a self-serve procedure (a strong
    passage; the caller checked `may_self_serve`), so the policy signal gives way to that answer
    and a person is offered in the same reply instead of brought in.
    """
    if intent == "human_handoff":
        return Decision(True, "explicit")
    if policy_escalates(intent, tuning, tenant_intents):
        if self_serve and not explicit_request:
            return Decision(False, self_serve=True)
        return Decision(True, "policy")
    if explicit_request:
        return Decision(True, "explicit")
    if sentiment in tuning.frustration_sentiments and outcome == "failed":
        return Decision(True, "frustration")
    if failed_turns > tuning.max_failed_turns:
        return Decision(True, "failed_turns")
    return Decision(False)


def sla_due(plan: str | None, created_at: datetime, tuning: Tuning) -> datetime:
    """Due time by plan; an unknown plan gets the free plan's (longest) window."""
    hours = tuning.sla_hours.get(plan or "free", tuning.sla_hours["free"])
    return created_at + timedelta(hours=hours)


def is_breached(packet: Escalation, now: datetime) -> bool:
    """Computed when read, never stored: open or claimed past its due time."""
    return packet.status != "resolved" and now > packet.sla_due_at


def build_packet(
    *,
    conversation: Conversation,
    customer: Customer | None,
    subscription: Subscription | None,
    reason: Reason,
    intent: str | None,
    asked_for: str,
    sentiment: str | None,
    failed_turns: int,
    attempted: dict[str, Any],
    now: datetime,
    tuning: Tuning,
    trigger: str | None = None,
) -> Escalation:
    """Everything a person needs so the customer never repeats themselves."""
    cust: dict[str, Any] | None = None
    if customer is not None:
        cust = {
            "id": customer.id,
            "name": customer.name,
            "email": customer.email,
            "plan": customer.plan,
            "seats": customer.seats,
            "locale": customer.locale,
            "subscriptionStatus": subscription.status if subscription else None,
            "renewsAt": subscription.renews_at if subscription else None,
        }
    plan = customer.plan if customer else None
    if plan not in tuning.sla_hours:
        plan = "free"
    return Escalation(
        case_ref=new_case_ref(),
        conversation_id=conversation.id,
        reason=reason,
        intent=intent,
        asked_for=asked_for,
        trigger=trigger,
        sentiment=sentiment,
        customer=cust,
        conversation={
            "turnCount": conversation.turn_count,
            "failedTurns": failed_turns,
            "summary": conversation.summary,
            "facts": conversation.facts,
        },
        attempted=attempted,
        created_at=now,
        customer_id=conversation.customer_id,
        expires_at=conversation.expires_at,
        sla_due_at=sla_due(plan, now, tuning),
    )


def handoff_reply(
    case_ref: str,
    reason: Reason,
    plan: str | None,
    tuning: Tuning,
    tenant: Tenant | None = None,
    locale: str | None = None,
    after_answer: bool = False,
) -> str:
    """What the customer reads, in their language: the case reference and what happens next.
    `after_answer`: the reply follows what the passages did cover (a failed streak whose last
    turn still found something), so it says a person is brought in *as well*."""
    hours = tuning.sla_hours.get(plan or "free", tuning.sla_hours["free"])
    tenant = tenant or generic_tenant()
    lead = tenant.text("handoff_after_answer" if after_answer else f"handoff_{reason}", locale)
    return f"{lead} {tenant.text('handoff_next', locale, case_ref=case_ref, hours=hours)}"
