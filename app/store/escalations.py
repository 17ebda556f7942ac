"""Handoff packets. A case reference is short, human-readable and unique (unique index)."""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from app.safety.pii import KINDS, mask_text, mask_value
from app.store.models import Escalation

_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read aloud over the phone


def new_case_ref() -> str:
    return "CASE-" + "".join(secrets.choice(_ALPHABET) for _ in range(6))


class OpenCaseExists(Exception):
    """The conversation already has an open (or claimed) case: the unique partial index
    `one_open_case_per_conversation` refused a second one (two handoffs raced)."""

    def __init__(self, existing: Escalation) -> None:
        super().__init__(f"conversation {existing.conversation_id} already has {existing.case_ref}")
        self.existing = existing


def _duplicate_on(exc: DuplicateKeyError, field: str) -> bool:
    details = exc.details or {}
    pattern = details.get("keyPattern") or {}
    return field in pattern or f"{field}:" in str(details.get("errmsg", ""))


class EscalationRepo:
    def __init__(self, db: Any, pii: tuple[str, ...] = KINDS) -> None:
        self._c = db["escalations"]
        self._pii = pii

    async def create(self, packet: Escalation) -> Escalation:
        """Insert, drawing a fresh case reference on the (rare) collision."""
        packet = packet.model_copy(
            update={  # what the customer typed; the account's own record (`customer`) stays
                "asked_for": mask_text(packet.asked_for, self._pii),
                "conversation": mask_value(packet.conversation, self._pii),
            }
        )
        for _ in range(5):
            try:
                await self._c.insert_one(packet.to_doc())
                return packet
            except DuplicateKeyError as exc:
                if _duplicate_on(exc, "conversationId"):  # one open case per conversation
                    existing = await self.open_for_conversation(packet.conversation_id)
                    if existing is not None:
                        raise OpenCaseExists(existing) from exc
                    continue  # resolved in between: try again
                packet = packet.model_copy(update={"case_ref": new_case_ref()})
        raise RuntimeError("could not allocate a unique case reference")

    async def get(self, case_ref: str) -> Escalation | None:
        doc = await self._c.find_one({"caseRef": case_ref})
        return Escalation.from_doc(doc) if doc else None

    async def get_for_customer(self, case_ref: str, customer_id: str) -> Escalation | None:
        doc = await self._c.find_one({"caseRef": case_ref, "customer.id": customer_id})
        return Escalation.from_doc(doc) if doc else None

    async def open_for_conversation(self, conversation_id: str) -> Escalation | None:
        doc = await self._c.find_one(
            {"conversationId": conversation_id, "status": {"$in": ["open", "claimed"]}}
        )
        return Escalation.from_doc(doc) if doc else None

    async def list(self, status: str | None = None, limit: int = 100) -> list[Escalation]:
        query: dict[str, Any] = {"status": status} if status else {}
        cursor = self._c.find(query).sort("createdAt", -1).limit(limit)
        return [Escalation.from_doc(d) for d in await cursor.to_list()]

    async def claim(self, case_ref: str, agent: str) -> Escalation | None:
        """Open -> claimed, atomically; None when it is not open (already claimed or resolved)."""
        doc = await self._c.find_one_and_update(
            {"caseRef": case_ref, "status": "open"},
            {"$set": {"status": "claimed", "claimedBy": agent}},
            return_document=ReturnDocument.AFTER,
        )
        return Escalation.from_doc(doc) if doc else None

    async def resolve(
        self,
        case_ref: str,
        at: datetime,
        *,
        resolution: str | None = None,
        knowledge: bool | None = None,
    ) -> Escalation | None:
        """Open/claimed -> resolved, with the agent's resolution (masked) and consent."""
        update: dict[str, Any] = {"status": "resolved", "resolvedAt": at}
        if resolution is not None:
            update["resolution"] = mask_text(resolution, self._pii)
        if knowledge is not None:
            update["knowledge"] = knowledge
        doc = await self._c.find_one_and_update(
            {"caseRef": case_ref, "status": {"$in": ["open", "claimed"]}},
            {"$set": update},
            return_document=ReturnDocument.AFTER,
        )
        return Escalation.from_doc(doc) if doc else None

    async def set_ticket(self, case_ref: str, ticket_id: str | None) -> None:
        await self._c.update_one({"caseRef": case_ref}, {"$set": {"ticketId": ticket_id}})

    async def case_refs_for_customer(self, customer_id: str) -> builtins.list[str]:
        """Every case reference of the customer (by customer id or packet customer)."""
        cursor = self._c.find(
            {"$or": [{"customerId": customer_id}, {"customer.id": customer_id}]}, {"caseRef": 1}
        )
        return [d["caseRef"] async for d in cursor]

    async def delete_for_customer(
        self, customer_id: str, conversation_ids: Sequence[str] = ()
    ) -> int:
        """The customer's cases: by customer id, packet customer, or their conversations."""
        res = await self._c.delete_many(
            {
                "$or": [
                    {"customerId": customer_id},
                    {"customer.id": customer_id},
                    {"conversationId": {"$in": list(conversation_ids)}},
                ]
            }
        )
        return int(res.deleted_count)
