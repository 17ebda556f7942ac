"""Agent assist for the person who takes a handoff (bearer admin token): the suggested reply with
its sources and similar resolved cases, and how the suggestion was used."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from app.api.deps import AdminDep, ServicesDep
from app.api.schemas import AssistEventOut, SuggestionOut
from app.api.views import error_responses
from app.assist import suggestion_for
from app.store.assist import Suggestion

router = APIRouter(
    prefix="/v1/admin", tags=["admin"], responses=error_responses(401, 404, 422, 429, 503)
)


class AssistEventIn(BaseModel):
    suggestionId: str = Field(min_length=1, max_length=64)
    event: Literal["inserted"] = Field(
        description="The agent put the suggestion into the reply box. (Shown is counted when "
        "the suggestion is served; sent, when a reply carrying its suggestionId is sent.)"
    )


def suggestion_view(s: Suggestion, cached: bool) -> dict[str, Any]:
    doc = s.model_dump(by_alias=True)
    doc["suggestionId"] = doc.pop("_id")
    doc.pop("conversationId", None)
    doc.pop("customerId", None)
    return {**doc, "cached": cached}


@router.get("/escalations/{case_ref}/suggestion", response_model=SuggestionOut)
async def suggestion(case_ref: str, _: AdminDep, services: ServicesDep) -> dict[str, Any]:
    """The suggested reply for the case as it stands: computed on first opening, then cached
    until the conversation grows. Sources are only what the case's customer may read."""
    case = await services.store.escalations.get(case_ref)
    if case is None:
        raise HTTPException(404, detail="case not found")
    found, cached = await suggestion_for(services, case)
    await services.store.assist.record(found, "shown", datetime.now(UTC))
    return suggestion_view(found, cached)


@router.post("/escalations/{case_ref}/suggestion/events", response_model=AssistEventOut)
async def suggestion_event(
    case_ref: str, body: AssistEventIn, _: AdminDep, services: ServicesDep
) -> dict[str, Any]:
    """Record that the agent inserted the suggestion into the reply box."""
    found = await services.store.assist.get(body.suggestionId)
    if found is None or found.case_ref != case_ref:
        raise HTTPException(404, detail="suggestion not found for this case")
    return {"recorded": await services.store.assist.record(found, body.event, datetime.now(UTC))}
