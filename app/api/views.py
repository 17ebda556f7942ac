"""How stored documents are shown over the API (one place, so every route agrees)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.store.models import Conversation, Escalation, Message
from app.turn.escalate import is_breached


def message_view(m: Message) -> dict[str, Any]:
    meta = m.meta or {}
    if m.role != "assistant":
        meta = {k: v for k, v in meta.items() if k in ("agent", "error", "masked")}
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
        "messages": [message_view(m) for m in messages],
    }


def escalation_view(e: Escalation, now: datetime | None = None) -> dict[str, Any]:
    doc = e.to_doc()
    doc.pop("_id", None)
    doc["breached"] = is_breached(e, now or datetime.now(UTC))
    return doc
