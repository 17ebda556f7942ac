"""A resolved handoff as a resolved-ticket document (pure: no I/O).

The ticket is *written*, never copied from what the customer typed (`app.knowledge.written`):
its subject and problem are the packet's condensed problem (the first unresolved request's
standalone question) with links, secrets and instructions dropped, personal data masked and
names of people and organisations removed, plus the conversation's key facts that are not
account-specific; the resolution is the agent's, masked and with names removed. The agent sees
this exact text before publishing and may replace the subject and problem (`subject`,
`symptom`), which are written the same way. The audience is the source customer's plan rung or
stricter: an agent may narrow it, never widen it (a fix an enterprise customer got is never shown
to a free one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from app.knowledge.written import known_names, written_problem, written_resolution
from app.safety.pii import KINDS
from app.store.models import Audience, Escalation, Message, Ticket
from app.tenant import Product
from app.turn.entitlement import audience_ladder, normalize_locale
from tuning import Tuning

# facts that identify the customer's own records, not the problem: never copied into knowledge
_ACCOUNT_FACTS = frozenset({"order", "case"})
_SPACES = re.compile(r"\s+")


UNSTATED = "Problem not stated in publishable words (edit before publishing)"


def voted_quality(agent_quality: float, up: int, down: int, tuning: Tuning) -> float:
    """The agent's quality moved by customers' votes on answers that cited the ticket: each
    unhelpful vote costs more than a helpful one earns (a wrong fix shown with confidence is
    the expensive mistake), clamped to [0, 1]. Enough unhelpful votes drop it below the
    retrieval bar; the ticket stays listed in /admin for a person to fix or unpublish."""
    q = agent_quality + tuning.resolution_vote_up * up - tuning.resolution_vote_down * down
    return round(min(max(q, 0.0), 1.0), 4)


def ticket_id_for(case_ref: str) -> str:
    return f"res-{case_ref.lower()}"


def suggested_resolution(messages: Sequence[Message], limit: int = 1500) -> str:
    """What the agent told the customer, oldest first: the resolve dialog's prefill."""
    replies = [_SPACES.sub(" ", m.content).strip() for m in messages if m.role == "agent"]
    text = "\n\n".join(r for r in replies if r)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def audience_for_plan(plan: str | None, tuning: Tuning) -> Audience:
    """The highest rung the plan sees (free or unknown → `all`, pro → `pro`, …)."""
    return cast(Audience, audience_ladder(plan, tuning)[-1])


def product_of(text: str, products: Iterable[Product]) -> str:
    """The tenant product the text names (name, SKU or alias, whole words), slugified; ""."""
    lowered = text.casefold()
    for product in products:
        names = [product.name, *(product.aliases or ())]
        if product.sku:
            names.append(product.sku)
        for name in names:
            if name and re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", lowered):
                return re.sub(r"[^a-z0-9]+", "-", product.name.lower()).strip("-")
    return ""


def key_facts(facts: Iterable[Any]) -> list[str]:
    """The conversation's facts worth keeping with the problem (error codes, SKUs, versions…)."""
    out: list[str] = []
    for fact in facts:
        if not isinstance(fact, Mapping):
            continue
        kind, value = fact.get("kind"), fact.get("value")
        if isinstance(kind, str) and isinstance(value, str) and kind not in _ACCOUNT_FACTS:
            item = f"{kind.replace('_', ' ')}: {value.strip()}"
            if value.strip() and item not in out:
                out.append(item)
    return out


def stricter(a: str, b: str | None, tuning: Tuning) -> Audience:
    """The stricter of two audiences (the one fewer customers see); None leaves `a`."""
    order = list(audience_ladder("enterprise", tuning))
    if b is None or b not in order:
        return cast(Audience, a)
    return cast(Audience, a if order.index(a) >= order.index(b) else b)


def resolution_ticket(
    case: Escalation,
    resolution: str,
    *,
    quality: float,
    now: datetime,
    tuning: Tuning,
    products: Iterable[Product] = (),
    audience: Audience | None = None,
    locale: str | None = None,
    product: str | None = None,
    editor: str | None = None,
    pii: tuple[str, ...] = KINDS,
    keep: Callable[[str], bool] = lambda _: False,
    subject: str | None = None,
    symptom: str | None = None,
) -> Ticket:
    """The ticket a consented resolution becomes (not yet embedded)."""
    customer = case.customer or {}
    names = known_names(customer)

    def write(text: str) -> str:
        return written_problem(_SPACES.sub(" ", text).strip(), names=names, keep=keep, pii=pii)

    problem = write(symptom or case.asked_for or case.trigger or "")
    # an agent's edited problem already holds the details they kept
    facts = [] if symptom else [write(f) for f in key_facts(case.conversation.get("facts") or [])]
    facts = [f for f in facts if f]
    body = problem + (f"\n\nDetails: {'; '.join(facts)}." if facts else "")
    # everything the customer wrote may have been removed (a link, a secret): say so, never guess
    title = (write(subject) if subject else problem) or "; ".join(facts) or UNSTATED
    title = title if len(title) <= 120 else title[:119].rstrip() + "…"
    text_for_product = " ".join([problem, *facts, resolution])
    return Ticket(
        id=ticket_id_for(case.case_ref),
        subject=title,
        symptom=body.strip(),
        resolution=written_resolution(resolution, names=names, keep=keep, pii=pii),
        product=product if product is not None else product_of(text_for_product, products),
        audience=stricter(audience_for_plan(customer.get("plan"), tuning), audience, tuning),
        locale=normalize_locale(locale or customer.get("locale")),
        status="resolved",
        quality=quality,
        agent_quality=quality,
        resolved_at=now,
        source="resolution",
        case_ref=case.case_ref,
        updated_by=editor,
    )
