"""The knowledge loop in /admin: resolution-born tickets, gap clusters, drafts (admin token)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from app.api.admin import FromQ, ToQ, _range
from app.api.deps import AdminDep, ServicesDep
from app.api.schemas import (
    DraftEnvelope,
    DraftList,
    GapClustersOut,
    PublishOut,
    TicketEnvelope,
    TicketList,
)
from app.api.views import article_view, draft_view, error_responses, ticket_view
from app.knowledge.gaps import GapCluster, truncate
from app.knowledge.loop import (
    LoopError,
    draft_for_cluster,
    edit_ticket,
    gap_report,
    preview_ticket,
    publish_draft,
    save_draft,
)
from app.providers.errors import ProviderError

router = APIRouter(
    prefix="/v1/admin",
    tags=["knowledge loop"],
    responses=error_responses(401, 404, 409, 422, 429, 503),
)


class TicketEditIn(BaseModel):
    editor: str = Field(min_length=1, max_length=100)
    subject: str | None = Field(default=None, min_length=1, max_length=300)
    symptom: str | None = Field(default=None, min_length=1, max_length=4000)
    resolution: str | None = Field(default=None, min_length=1, max_length=4000)
    quality: float | None = Field(default=None, ge=0.0, le=1.0)
    audience: Literal["all", "pro", "enterprise"] | None = None
    status: Literal["resolved", "unpublished"] | None = Field(
        default=None, description="`unpublished` takes it out of retrieval at once."
    )


class DraftIn(BaseModel):
    editor: str = Field(min_length=1, max_length=100)


class DraftEditIn(BaseModel):
    editor: str = Field(min_length=1, max_length=100)
    markdown: str = Field(min_length=1, max_length=200_000)


class PreviewIn(BaseModel):
    resolution: str = Field(min_length=1, max_length=4000)
    audience: Literal["all", "pro", "enterprise"] | None = None
    subject: str | None = Field(default=None, max_length=300)
    symptom: str | None = Field(default=None, max_length=4000)
    product: str | None = Field(default=None, max_length=100)


@router.post("/escalations/{case_ref}/knowledge-preview", response_model=TicketEnvelope)
async def knowledge_preview(
    case_ref: str, body: PreviewIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """The exact ticket resolving with `knowledge` would publish (nothing is stored): edit its
    subject and problem here and send them with the resolve call. `status: unpublished` with
    `reviewFlags` means the screen would hold it until a person publishes it."""
    case = await services.store.escalations.get(case_ref)
    if case is None:
        raise HTTPException(404, detail="case not found")
    ticket = await preview_ticket(
        services,
        case,
        body.resolution,
        audience=body.audience,
        subject=body.subject,
        symptom=body.symptom,
        product=body.product,
    )
    return {"ticket": ticket_view(ticket)}


@router.get("/tickets", response_model=TicketList)
async def list_tickets(_: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """Tickets written from resolved handoffs, newest first."""
    return {"tickets": [ticket_view(t) for t in await services.store.tickets.from_resolutions()]}


@router.patch("/tickets/{ticket_id}", response_model=TicketEnvelope)
async def patch_ticket(
    ticket_id: str, body: TicketEditIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """Edit or unpublish a resolution-born ticket (imported tickets are edited at the source)."""
    changes = body.model_dump(exclude_none=True, exclude={"editor"})
    try:
        ticket = await edit_ticket(services, ticket_id, changes, body.editor)
    except LoopError as exc:
        raise HTTPException(409, detail=str(exc)) from None
    if ticket is None:
        raise HTTPException(404, detail="no resolution-born ticket with that id")
    return {"ticket": ticket_view(ticket)}


def _cluster_view(c: GapCluster) -> dict[str, Any]:
    cases = {m.case_ref: m for m in c.cases if m.case_ref}
    resolved = [m for m in cases.values() if m.case_status == "resolved" and m.resolution]
    return {
        "id": c.id,
        "label": c.label,
        "count": c.count,
        "conversations": c.conversations,
        "score": c.score,
        "firstSeen": c.first_seen,
        "lastSeen": c.last_seen,
        "audience": c.audience,
        "signals": c.signals,
        "examples": c.examples,
        "perWeek": [{"week": w, "count": n} for w, n in c.per_week],
        "cases": [
            {
                "caseRef": ref,
                "status": m.case_status,
                "resolution": truncate(m.resolution, 300) if m.resolution else None,
                "ticketId": m.ticket_id,
            }
            for ref, m in sorted(cases.items())
        ][:10],
        "resolvedCases": len(resolved),
        "canDraft": bool(resolved),
    }


async def _report(services: Any, lo: datetime, hi: datetime) -> list[GapCluster]:
    try:
        return await gap_report(services, lo, hi)
    except ProviderError as exc:  # the questions could not be embedded
        raise HTTPException(503, detail=f"embedding the gap questions failed: {exc}") from None


@router.get("/gap-clusters", response_model=GapClustersOut)
async def gap_clusters(
    _: AdminDep, services: ServicesDep, start: FromQ = None, end: ToQ = None, limit: int = 30
) -> dict[str, Any]:
    """Questions the bot could not answer well (weak/none, thumbs down, "not solved",
    non-policy handoffs), clustered by meaning, ranked by recency-weighted count."""
    lo, hi = _range(start, end)
    clusters = await _report(services, lo, hi)
    return {
        "from": lo.date().isoformat(),
        "to": (hi - timedelta(days=1)).date().isoformat(),
        "questions": sum(c.count for c in clusters),
        "clusters": [_cluster_view(c) for c in clusters[: max(1, min(limit, 200))]],
    }


@router.post("/gap-clusters/{cluster_id}/draft", response_model=DraftEnvelope, status_code=201)
async def draft_from_cluster(
    cluster_id: str,
    body: DraftIn,
    _: AdminDep,
    services: ServicesDep,
    start: FromQ = None,
    end: ToQ = None,
) -> dict[str, Any]:
    """A draft article from the cluster's resolved handoffs (never retrievable until a person
    publishes it). The cluster is found again in the same date range."""
    lo, hi = _range(start, end)
    clusters = {c.id: c for c in await _report(services, lo, hi)}
    cluster = clusters.get(cluster_id)
    if cluster is None:
        raise HTTPException(404, detail="no such cluster in this range (reload the gap report)")
    try:
        draft = await draft_for_cluster(services, cluster, body.editor)
    except LoopError as exc:
        raise HTTPException(409, detail=str(exc)) from None
    return {"draft": draft_view(draft)}


@router.get("/drafts", response_model=DraftList)
async def list_drafts(
    _: AdminDep,
    services: ServicesDep,
    status: Literal["draft", "published", "discarded"] | None = None,
) -> dict[str, Any]:
    return {"drafts": [draft_view(d) for d in await services.store.drafts.list(status)]}


@router.get("/drafts/{draft_id}", response_model=DraftEnvelope)
async def get_draft(draft_id: str, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    draft = await services.store.drafts.get(draft_id)
    if draft is None:
        raise HTTPException(404, detail="draft not found")
    return {"draft": draft_view(draft)}


@router.put("/drafts/{draft_id}", response_model=DraftEnvelope)
async def edit_draft(
    draft_id: str, body: DraftEditIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """Save an edited draft (markdown with front matter, validated like an article file)."""
    try:
        draft = await save_draft(services, draft_id, body.markdown, body.editor)
    except LoopError as exc:
        raise HTTPException(422, detail=str(exc)) from None
    if draft is None:
        raise HTTPException(404, detail="draft not found")
    return {"draft": draft_view(draft)}


@router.post("/drafts/{draft_id}/publish", response_model=PublishOut)
async def publish(
    draft_id: str, body: DraftIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """Publish: ingested like any article (chunked, embedded, screened; flagged content is
    quarantined until approved) and searchable at once."""
    try:
        done = await publish_draft(services, draft_id, body.editor)
    except LoopError as exc:
        raise HTTPException(409, detail=str(exc)) from None
    if done is None:
        raise HTTPException(404, detail="draft not found")
    draft, article = done
    return {"draft": draft_view(draft), "article": article_view(article)}


@router.post("/drafts/{draft_id}/discard", response_model=DraftEnvelope)
async def discard(
    draft_id: str, body: DraftIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    draft = await services.store.drafts.get(draft_id)
    if draft is None:
        raise HTTPException(404, detail="draft not found")
    if draft.status != "draft":
        raise HTTPException(409, detail=f"the draft is {draft.status}")
    updated = await services.store.drafts.update(
        draft_id,
        {"status": "discarded", "updatedAt": datetime.now(UTC), "updatedBy": body.editor},
    )
    assert updated is not None
    return {"draft": draft_view(updated)}


__all__ = ["router"]
