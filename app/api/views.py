"""How stored documents are shown over the API (one place, so every route agrees)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from app.store.models import Article, Conversation, Draft, Escalation, Message, Ticket
from app.turn.escalate import is_breached
from app.turn.trace import TurnTrace

# Operator-only parts of a reply's trace: why a provider or a search failed (exception text) and
# the state of the spend cap. Customers see that a fallback happened, not why.
ADMIN_ONLY_META = frozenset({"fallbackReason", "spendCapReached", "retrievalReason"})


def _trace(meta: dict[str, Any]) -> dict[str, Any]:
    """An assistant message's meta in the one `TurnTrace` shape (older documents are filled in);
    a document the model cannot read is shown as stored rather than failing the request."""
    try:
        return TurnTrace.read(meta).to_meta()
    except ValidationError:
        return dict(meta)


def message_view(m: Message, *, admin: bool = False) -> dict[str, Any]:
    """A message as the API shows it; `admin=False` (customers) drops operator-only trace."""
    meta = m.meta or {}
    if m.role != "assistant":
        meta = {k: v for k, v in meta.items() if k in ("agent", "error", "masked")}
    else:
        meta = _trace(meta)
    if m.role == "assistant" and not admin:
        public = {k: v for k, v in meta.items() if k not in ADMIN_ONLY_META}
        public["fallback"] = bool(meta.get("fallbackReason"))
        condensation = meta.get("condensation")
        if isinstance(condensation, dict) and "fallbackReason" in condensation:
            public["condensation"] = {
                **{k: v for k, v in condensation.items() if k != "fallbackReason"},
                "fallback": bool(condensation["fallbackReason"]),
            }
        meta = public
    return {
        "id": m.id,
        "seq": m.seq,
        "role": m.role,
        "content": m.content,
        "createdAt": m.created_at.isoformat(),
        "meta": meta,
    }


def conversation_view(c: Conversation, messages: list[Message]) -> dict[str, Any]:
    return {
        "id": c.id,
        "status": c.status,
        "createdAt": c.created_at.isoformat(),
        "readSeq": c.read_seq,
        "messages": [message_view(m) for m in messages],
    }


def escalation_view(e: Escalation, now: datetime | None = None) -> dict[str, Any]:
    return {
        "caseRef": e.case_ref,
        "conversationId": e.conversation_id,
        "status": e.status,
        "reason": e.reason,
        "intent": e.intent,
        "askedFor": e.asked_for,
        "trigger": e.trigger,
        "sentiment": e.sentiment,
        "customer": e.customer,
        "conversation": e.conversation,
        "attempted": e.attempted,
        "claimedBy": e.claimed_by,
        "createdAt": e.created_at,
        "slaDueAt": e.sla_due_at,
        "resolvedAt": e.resolved_at,
        "breached": is_breached(e, now or datetime.now(UTC)),
        "resolution": e.resolution,
        "knowledge": e.knowledge,
        "ticketId": e.ticket_id,
    }


def article_view(a: Article) -> dict[str, Any]:
    return {
        "slug": a.slug,
        "title": a.title,
        "audience": a.audience,
        "locale": a.locale,
        "status": a.status,
        "reviewFlags": a.review_flags,
        "reviewedBy": a.reviewed_by,
        "reviewedAt": a.reviewed_at.isoformat() if a.reviewed_at else None,
        "updatedAt": a.updated_at.isoformat(),
    }


def ticket_view(t: Ticket) -> dict[str, Any]:
    return {
        "id": t.id,
        "subject": t.subject,
        "symptom": t.symptom,
        "resolution": t.resolution,
        "product": t.product,
        "audience": t.audience,
        "locale": t.locale,
        "status": t.status,
        "quality": t.quality,
        "agentQuality": t.agent_quality,
        "votesUp": t.votes_up,
        "votesDown": t.votes_down,
        "reviewFlags": t.review_flags,
        "resolvedAt": t.resolved_at,
        "source": t.source,
        "caseRef": t.case_ref,
        "updatedBy": t.updated_by,
    }


def draft_view(d: Draft) -> dict[str, Any]:
    return {
        "id": d.id,
        "title": d.title,
        "markdown": d.markdown,
        "audience": d.audience,
        "locale": d.locale,
        "status": d.status,
        "clusterLabel": d.cluster_label,
        "caseRefs": d.case_refs,
        "questionCount": d.question_count,
        "writtenBy": d.written_by,
        "createdAt": d.created_at,
        "updatedAt": d.updated_at,
        "updatedBy": d.updated_by,
        "publishedSlug": d.published_slug,
    }


class ErrorOut(BaseModel):
    """Every error response: a sentence a person can act on (422 adds `errors`, per field)."""

    detail: str
    errors: list[dict[str, Any]] | None = None


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    text = {
        401: "Missing, forged or expired credentials",
        404: "Not found (someone else's resource looks the same as none)",
        409: "Not possible in the current state",
        413: "Request or message too large",
        422: "The request is malformed; `detail` says what to fix",
        429: "Rate limited; see Retry-After",
        503: "Database unreachable; nothing was half-written",
    }
    return {c: {"model": ErrorOut, "description": text[c]} for c in codes}
