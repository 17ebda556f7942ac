"""Agent and admin endpoints (bearer admin token): metrics, docs gaps, the queue, GDPR delete."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field

from app.api.deps import AdminDep, ServicesDep
from app.api.schemas import (
    AgentReplyOut,
    ArticleEnvelope,
    CustomerDeletedOut,
    EscalationDetail,
    EscalationEnvelope,
    EscalationList,
    GapsOut,
    MetricsOut,
    ResolveOut,
    ReviewsOut,
)
from app.api.views import (
    article_view,
    error_responses,
    escalation_view,
    message_view,
    ticket_view,
)
from app.assist import record_sent
from app.knowledge.loop import LoopError, erase_knowledge, loop_per_week, resolve_case
from app.knowledge.resolution import suggested_resolution
from app.safety.pii import mask_text
from app.spend import spend_status
from app.store import analytics

router = APIRouter(
    prefix="/v1/admin", tags=["admin"], responses=error_responses(401, 404, 409, 413, 422, 429, 503)
)


class ClaimIn(BaseModel):
    agent: str = Field(min_length=1, max_length=100)


class ReviewIn(BaseModel):
    reviewer: str = Field(min_length=1, max_length=100)
    decision: Literal["approve", "unpublish"]


class ResolveIn(BaseModel):
    """How the case ended; with `knowledge` the resolution becomes a searchable ticket."""

    agent: str | None = Field(default=None, max_length=100)
    resolution: str | None = Field(
        default=None, max_length=4000, description="Short resolution (PII is masked)."
    )
    knowledge: bool = Field(
        default=False, description="The agent's consent: may this resolution become knowledge?"
    )
    quality: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Ticket quality; default from tuning. Below ticketMinQuality it is kept "
        "but never retrieved.",
    )
    audience: Literal["all", "pro", "enterprise"] | None = Field(
        default=None, description="Who may see the ticket; default: the customer's plan rung."
    )
    product: str | None = Field(default=None, max_length=100)
    subject: str | None = Field(
        default=None,
        max_length=300,
        description="The ticket's title as the agent edited it in the preview (written like the "
        "default: links, secrets and names removed, PII masked).",
    )
    symptom: str | None = Field(
        default=None, max_length=4000, description="The problem as the agent edited it."
    )


class ReplyIn(BaseModel):
    agent: str = Field(min_length=1, max_length=100)
    content: str = Field(min_length=1, max_length=8000)
    suggestionId: str | None = Field(
        default=None, max_length=64, description="The agent-assist suggestion this reply began as."
    )


def _range(start: date | None, end: date | None) -> tuple[datetime, datetime]:
    """[from 00:00, to+1 00:00) in UTC; default: the last 30 days. A day whose range cannot be
    represented (`to=9999-12-31` has no next day) is the caller's mistake: 422, never a 500."""
    today = datetime.now(UTC).date()
    end = end or today
    try:
        start = start or end - timedelta(days=29)
        after_end = end + timedelta(days=1)
    except OverflowError:
        raise HTTPException(422, detail="date out of range") from None
    if start > end:
        raise HTTPException(422, detail="'from' must not be after 'to'")
    return datetime.combine(start, time.min, UTC), datetime.combine(after_end, time.min, UTC)


FromQ = Annotated[date | None, Query(alias="from", description="First day (UTC), YYYY-MM-DD.")]
ToQ = Annotated[date | None, Query(alias="to", description="Last day (UTC), inclusive.")]


@router.get("/metrics", response_model=MetricsOut)
async def metrics(
    _: AdminDep, services: ServicesDep, start: FromQ = None, end: ToQ = None
) -> dict[str, Any]:
    """Deflection and confirmed resolution side by side, per day, plus what drives them."""
    lo, hi = _range(start, end)
    db = services.store.db
    conv = await analytics.conversation_metrics(db, lo, hi)
    return {
        "from": lo.date().isoformat(),
        "to": (hi - timedelta(days=1)).date().isoformat(),
        **conv,
        "confidenceMix": await analytics.confidence_mix(db, lo, hi),
        "escalationReasons": await analytics.escalation_reasons(db, lo, hi),
        "medianLatencyMs": await analytics.median_latency_ms(db, lo, hi),
        "spend": await spend_status(services.store, services.tuning),
        "providers": services.provider_status(),
        "knowledgeLoop": await loop_per_week(services, lo, hi),
        "assist": await analytics.assist_use(db, lo, hi),
    }


@router.get("/gaps", response_model=GapsOut)
async def gaps(
    _: AdminDep, services: ServicesDep, start: FromQ = None, end: ToQ = None
) -> dict[str, Any]:
    """What the docs fail to answer: weak/none turns by intent, most frequent first."""
    lo, hi = _range(start, end)
    return {"gaps": await analytics.docs_gaps(services.store.db, lo, hi)}


@router.get("/escalations", response_model=EscalationList)
async def list_escalations(
    _: AdminDep,
    services: ServicesDep,
    status: Literal["open", "claimed", "resolved"] | None = None,
) -> dict[str, Any]:
    items = await services.store.escalations.list(status)
    now = datetime.now(UTC)
    return {"escalations": [escalation_view(e, now) for e in items]}


async def _case(services: Any, case_ref: str) -> Any:
    case = await services.store.escalations.get(case_ref)
    if case is None:
        raise HTTPException(404, detail="case not found")
    return case


@router.get(
    "/escalations/{case_ref}", response_model=EscalationDetail, response_model_exclude_unset=True
)
async def get_escalation(case_ref: str, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """The handoff packet and the full transcript."""
    case = await _case(services, case_ref)
    messages = await services.store.messages.after(case.conversation_id, 0)
    return {
        "escalation": escalation_view(case),
        "messages": [message_view(m, admin=True) for m in messages],
        "suggestedResolution": case.resolution or suggested_resolution(messages),
    }


@router.post("/escalations/{case_ref}/claim", response_model=EscalationEnvelope)
async def claim(case_ref: str, body: ClaimIn, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    await _case(services, case_ref)
    case = await services.store.escalations.claim(case_ref, body.agent)
    if case is None:
        raise HTTPException(409, detail="case is not open (already claimed or resolved)")
    return {"escalation": escalation_view(case)}


@router.post(
    "/escalations/{case_ref}/reply", response_model=AgentReplyOut, response_model_exclude_unset=True
)
async def reply(case_ref: str, body: ReplyIn, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """An agent's reply, stored with role `agent`; it appears in the customer's widget."""
    case = await _case(services, case_ref)
    if case.status == "resolved":
        raise HTTPException(409, detail="case is resolved")
    if case.status == "open":
        await services.store.escalations.claim(case_ref, body.agent)
    conv = await services.store.conversations.get(case.conversation_id)
    if conv is None:
        raise HTTPException(404, detail="conversation no longer exists")
    seq = await services.store.conversations.allocate_seq(conv.id)
    msg = await services.store.messages.append(
        conv,
        seq=seq,
        role="agent",
        content=mask_text(body.content.strip(), services.settings.pii_mask),
        meta={"agent": body.agent, "caseRef": case_ref},
    )
    await record_sent(services, case_ref, body.suggestionId, msg.content, msg.id)
    return {"message": message_view(msg)}


@router.post("/escalations/{case_ref}/resolve", response_model=ResolveOut)
async def resolve(
    case_ref: str, _: AdminDep, services: ServicesDep, body: ResolveIn | None = None
) -> dict[str, Any]:
    """Close the case; the assistant may answer again in that conversation. With `knowledge`
    (the agent's consent) the resolution becomes a resolved ticket — the condensed problem
    written without links, secrets, instructions, names or PII (see `knowledge-preview`), the
    resolution, the customer's plan rung or stricter as audience — searchable at once unless
    the screen holds it for review."""
    body = body or ResolveIn()
    await _case(services, case_ref)
    try:
        case, ticket = await resolve_case(
            services,
            case_ref,
            resolution=body.resolution,
            knowledge=body.knowledge,
            quality=body.quality,
            audience=body.audience,
            product=body.product,
            agent=body.agent,
            subject=body.subject,
            symptom=body.symptom,
        )
    except LoopError as exc:
        raise HTTPException(422, detail=str(exc)) from None
    if case is None:
        raise HTTPException(409, detail="case is already resolved")
    return {"escalation": escalation_view(case), "ticket": ticket_view(ticket) if ticket else None}


@router.delete("/customers/{customer_id}", response_model=CustomerDeletedOut)
async def delete_customer(customer_id: str, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """GDPR erasure: the customer, their subscription, orders, conversations, messages,
    feedback and handoff packets, and the knowledge written from their cases (tickets deleted,
    unpublished drafts deleted, published ones unlinked; see `erase_knowledge`). Returns what
    was deleted, by collection."""
    knowledge = await erase_knowledge(services, customer_id)
    deleted = await services.store.delete_customer(customer_id)
    return {"customerId": customer_id, "deleted": {**deleted, **knowledge}}


@router.get("/reviews", response_model=ReviewsOut)
async def reviews(_: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """Articles ingestion flagged for review (instruction-like text aimed at AI assistants)."""
    return {"articles": [article_view(a) for a in await services.store.articles.flagged()]}


@router.post("/articles/{slug}/review", response_model=ArticleEnvelope)
async def review_article(
    slug: str, body: ReviewIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """Approve flagged content (a quarantined article is published at once), or unpublish it:
    its chunks leave the search index at once."""
    store = services.store
    article = await store.articles.record_review(
        slug, reviewer=body.reviewer, at=datetime.now(UTC), unpublish=body.decision == "unpublish"
    )
    if article is None:
        raise HTTPException(404, detail="article not found")
    chunks = await store.chunks.for_article(slug)
    if chunks and any(c.status != article.status for c in chunks):
        await store.chunks.set_status(slug, article.status)  # unpublished, or out of quarantine
        refresh = getattr(services.search, "refresh", None)
        if callable(refresh):
            await refresh()  # LocalSearch is a snapshot; Atlas indexes follow the collection
    return {"article": article_view(article)}
