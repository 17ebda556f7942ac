"""Conversations, their messages, and feedback.

A conversation is owned by exactly one principal: a customer id or an anonymous session id. Reads
that serve a customer go through `get_owned`, which puts the owner into the query filter, so a
conversation that belongs to someone else is indistinguishable from one that does not exist.

Every write a turn makes is O(1) in the length of the conversation: messages are appended one
document each; the conversation document holds only fixed-size fields (counters by `$inc`,
status, dates), so rewriting it costs the same at turn 200 as at turn 5; the memory that grows
lives beside it — one document per remembered fact in `conversation_facts` (inserted once, never
rewritten) and one summary document per conversation in `conversation_summaries` (replaced off
the request path every few turns, its length capped by the memory budget). `get` reassembles the
`Conversation` model, so callers do not see the split.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from app.safety.pii import KINDS, mask, mask_text, mask_value
from app.store.models import MEMORY_FIELDS, Conversation, Feedback, Message, Role

_MASKED_META = ("condensedQuestion", "standaloneQuestion", "askedFor")


def new_id() -> str:
    return uuid.uuid4().hex


def now_utc() -> datetime:
    return datetime.now(UTC)


def owner_filter(customer_id: str | None, anonymous_id: str | None) -> dict[str, Any]:
    """Exactly one owner, or a filter that matches nothing (fail closed)."""
    if customer_id:
        return {"customerId": customer_id}
    if anonymous_id:
        return {"customerId": None, "anonymousId": anonymous_id}
    return {"_id": {"$in": []}}


FACTS_READ_LIMIT = 200  # the prompt's budget keeps far fewer; this bounds the read


def fact_id(conversation_id: str, fact: dict[str, Any]) -> str:
    """One document per (conversation, kind, value): a repeated fact is not stored twice."""
    return f"{conversation_id}|{fact.get('kind')}|{str(fact.get('value', '')).casefold()}"


class ConversationRepo:
    def __init__(self, db: Any, pii: tuple[str, ...] = KINDS) -> None:
        self._c = db["conversations"]
        self._pii = pii
        self._m = db["messages"]
        self._facts = db["conversation_facts"]
        self._summaries = db["conversation_summaries"]

    async def create(
        self,
        *,
        customer_id: str | None,
        anonymous_id: str | None,
        anonymous_ttl_days: int,
        now: datetime | None = None,
    ) -> Conversation:
        """Anonymous conversations expire (a cache); a signed-in customer's never do (a record)."""
        if not customer_id and not anonymous_id:
            raise ValueError("a conversation needs an owner")
        now = now or now_utc()
        expires = None if customer_id else now + timedelta(days=anonymous_ttl_days)
        conv = Conversation(
            id=new_id(),
            customer_id=customer_id,
            anonymous_id=None if customer_id else anonymous_id,
            created_at=now,
            updated_at=now,
            expires_at=expires,
        )
        await self._c.insert_one(_stored(conv.to_doc()))
        return conv

    async def get(self, conversation_id: str) -> Conversation | None:
        """The conversation with its memory (summary and facts) reassembled."""
        doc = await self._c.find_one({"_id": conversation_id})
        return await self._with_memory(doc) if doc else None

    async def get_owned(
        self, conversation_id: str, *, customer_id: str | None, anonymous_id: str | None
    ) -> Conversation | None:
        query = {"_id": conversation_id, **owner_filter(customer_id, anonymous_id)}
        doc = await self._c.find_one(query)
        return await self._with_memory(doc) if doc else None

    async def _with_memory(self, doc: dict[str, Any]) -> Conversation:
        cid = doc["_id"]
        summary = await self._summaries.find_one({"_id": cid})
        cursor = self._facts.find(
            {"conversationId": cid}, {"_id": 0, "kind": 1, "value": 1, "seq": 1}
        )
        facts = await cursor.sort("seq", -1).limit(FACTS_READ_LIMIT).to_list()
        return Conversation.from_doc(
            {
                **doc,
                "summary": summary["text"] if summary else "",
                "summarizedThroughSeq": summary["throughSeq"] if summary else 0,
                "facts": sorted(facts, key=lambda f: int(f.get("seq", 0))),
            }
        )

    async def add_facts(
        self, conversation: Conversation, facts: list[dict[str, Any]], now: datetime | None = None
    ) -> None:
        """Remember facts; each is inserted once (its first appearance wins), never rewritten."""
        for fact in facts:
            fact = {**fact, "value": mask_value(fact.get("value"), self._pii)}  # the id holds it
            await self._facts.update_one(
                {"_id": fact_id(conversation.id, fact)},
                {
                    "$setOnInsert": {
                        "conversationId": conversation.id,
                        "kind": fact.get("kind"),
                        "value": fact.get("value"),
                        "seq": fact.get("seq", 0),
                        "createdAt": now or now_utc(),
                        "expiresAt": conversation.expires_at,
                    }
                },
                upsert=True,
            )

    async def set_summary(self, conversation: Conversation, text: str, through_seq: int) -> bool:
        """Replace the rolling summary (off the request path; its length is capped by memory).

        A version check, not a blind replace: the write lands only if no summary through a
        later message is stored, so a slow job that started earlier cannot undo a newer one.
        False when a newer summary was already there."""
        doc = {
            "conversationId": conversation.id,
            "text": mask_text(text, self._pii),
            "throughSeq": through_seq,
            "updatedAt": now_utc(),
            "expiresAt": conversation.expires_at,
        }
        try:
            await self._summaries.update_one(
                {"_id": conversation.id, "throughSeq": {"$lte": through_seq}},
                {"$set": doc},
                upsert=True,
            )
        except DuplicateKeyError:  # the document exists with a later throughSeq
            return False
        return True

    async def allocate_seq(self, conversation_id: str) -> int:
        """Atomically reserve the next message sequence number ($inc on the conversation)."""
        doc = await self._c.find_one_and_update(
            {"_id": conversation_id},
            {"$inc": {"lastSeq": 1}, "$set": {"updatedAt": now_utc()}},
            return_document=ReturnDocument.AFTER,
        )
        if doc is None:
            raise LookupError(f"conversation {conversation_id} does not exist")
        return int(doc["lastSeq"])

    async def update(self, conversation_id: str, fields: dict[str, Any]) -> None:
        """Set fields given in snake_case model names (e.g. failed_turns, status).

        Memory fields go where they live: `facts` are added (never rewritten), `summary` with
        `summarized_through_seq` replaces the summary document.
        """
        memory = {k: fields[k] for k in MEMORY_FIELDS if k in fields}
        if memory:
            conv = await self.get(conversation_id)
            if conv is None:
                return
            if "facts" in memory:
                await self.add_facts(conv, list(memory["facts"]))
            if "summary" in memory or "summarized_through_seq" in memory:
                await self.set_summary(
                    conv,
                    str(memory.get("summary", conv.summary)),
                    int(memory.get("summarized_through_seq", conv.summarized_through_seq)),
                )
        rest = {k: v for k, v in fields.items() if k not in MEMORY_FIELDS}
        if not rest and memory:
            return
        doc = {Conversation.model_fields[k].alias or k: v for k, v in rest.items()}
        doc["updatedAt"] = now_utc()
        await self._c.update_one({"_id": conversation_id}, {"$set": doc})

    async def mark_read(self, conversation_id: str, seq: int) -> None:
        """The customer has seen messages up to `seq` (only ever moves forward)."""
        await self._c.update_one({"_id": conversation_id}, {"$max": {"readSeq": seq}})

    async def record_turn(
        self, conversation_id: str, *, failed_turns: int, last_intent: str | None
    ) -> None:
        await self._c.update_one(
            {"_id": conversation_id},
            {
                "$inc": {"turnCount": 1},
                "$set": {
                    "failedTurns": failed_turns,
                    "lastIntent": last_intent,
                    "updatedAt": now_utc(),
                },
            },
        )

    async def reclaim_unused_seqs(self) -> int:
        """After a crash: give back sequence numbers reserved for messages never stored.

        A seq is reserved ($inc) just before its message is inserted; a process killed between
        the two leaves `lastSeq` one ahead of the last message, and the next message would leave
        a hole. Run at the start of the single process that owns an embedded store (never with
        several workers sharing a cluster: one of them may be between the two steps right now).
        """
        pipeline = [{"$group": {"_id": "$conversationId", "top": {"$max": "$seq"}}}]
        top = {d["_id"]: int(d["top"]) for d in await (await self._m.aggregate(pipeline)).to_list()}
        fixed = 0
        async for doc in self._c.find({"lastSeq": {"$gt": 0}}, {"_id": 1, "lastSeq": 1}):
            last = top.get(doc["_id"], 0)
            if int(doc["lastSeq"]) > last:
                await self._c.update_one({"_id": doc["_id"]}, {"$set": {"lastSeq": last}})
                fixed += 1
        return fixed

    async def delete_for_customer(self, customer_id: str) -> list[str]:
        """The customer's conversations and their memory (messages are `MessageRepo`'s)."""
        ids = [d["_id"] async for d in self._c.find({"customerId": customer_id}, {"_id": 1})]
        if ids:
            await self._facts.delete_many({"conversationId": {"$in": ids}})
            await self._summaries.delete_many({"_id": {"$in": ids}})
            await self._c.delete_many({"_id": {"$in": ids}})
        return ids


def _stored(doc: dict[str, Any]) -> dict[str, Any]:
    """The conversation document as stored: without the memory kept beside it."""
    for name in ("summary", "summarizedThroughSeq", "facts"):
        doc.pop(name, None)
    return doc


class MessageRepo:
    """Customer and agent text, and the condensed question in a reply's meta, are PII-masked
    here, at the last step before storage, whoever the caller was."""

    def __init__(self, db: Any, pii: tuple[str, ...] = KINDS) -> None:
        self._c = db["messages"]
        self._pii = pii

    def _meta(self, meta: dict[str, Any] | None) -> dict[str, Any]:
        out = dict(meta or {})
        for key in _MASKED_META:
            if isinstance(out.get(key), str):
                out[key] = mask_text(out[key], self._pii)
        return out

    async def append(
        self,
        conversation: Conversation,
        *,
        seq: int,
        role: Role,
        content: str,
        meta: dict[str, Any] | None = None,
    ) -> Message:
        """Store one message at a pre-allocated seq (anonymous conversations' messages expire)."""
        msg = Message(
            id=new_id(),
            conversation_id=conversation.id,
            seq=seq,
            role=role,
            content=mask_text(content, self._pii) if role != "assistant" else content,
            meta=self._meta(meta),
            created_at=now_utc(),
            expires_at=conversation.expires_at,
        )
        await self._c.insert_one(msg.to_doc())
        return msg

    async def get(self, conversation_id: str, message_id: str) -> Message | None:
        doc = await self._c.find_one({"_id": message_id, "conversationId": conversation_id})
        return Message.from_doc(doc) if doc else None

    async def last(self, conversation_id: str, n: int) -> list[Message]:
        """The last n messages in chronological order (served by {conversationId, seq:-1})."""
        cursor = self._c.find({"conversationId": conversation_id}).sort("seq", -1).limit(n)
        docs = await cursor.to_list()
        return [Message.from_doc(d) for d in reversed(docs)]

    async def after(self, conversation_id: str, after_seq: int = 0) -> list[Message]:
        cursor = self._c.find({"conversationId": conversation_id, "seq": {"$gt": after_seq}})
        return [Message.from_doc(d) for d in await cursor.sort("seq", 1).to_list()]

    async def delete_for_conversations(self, conversation_ids: list[str]) -> int:
        res = await self._c.delete_many({"conversationId": {"$in": conversation_ids}})
        return int(res.deleted_count)


class FeedbackRepo:
    def __init__(self, db: Any, pii: tuple[str, ...] = KINDS) -> None:
        self._c = db["feedback"]
        self._pii = pii

    async def add(
        self,
        conversation_id: str,
        *,
        message_id: str | None = None,
        helpful: bool | None = None,
        resolved: bool | None = None,
        comment: str | None = None,
        expires_at: datetime | None = None,
    ) -> Feedback:
        fb = Feedback(
            expires_at=expires_at,
            id=new_id(),
            conversation_id=conversation_id,
            message_id=message_id,
            helpful=helpful,
            resolved=resolved,
            comment=mask(comment, self._pii),
            created_at=now_utc(),
        )
        await self._c.insert_one(fb.to_doc())
        return fb

    async def votes_on(self, message_id: str) -> int:
        """How many helpful/unhelpful votes a message has had (including one just added)."""
        return int(
            await self._c.count_documents({"messageId": message_id, "helpful": {"$ne": None}})
        )

    async def delete_for_conversations(self, conversation_ids: list[str]) -> int:
        res = await self._c.delete_many({"conversationId": {"$in": conversation_ids}})
        return int(res.deleted_count)
