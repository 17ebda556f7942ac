"""Agent assist: suggestions cached per case and conversation length, and how agents used them.

A suggestion is computed when a person opens a case, once per conversation length: a new
message (the customer's or the agent's) makes the next opening compute a fresh one. Use is a
stream of events — shown and inserted once per suggestion, sent once per agent message.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from app.store.models import Model

AssistEvent = Literal["shown", "inserted", "sent_unchanged", "sent_edited"]
ONCE_PER_SUGGESTION: frozenset[str] = frozenset({"shown", "inserted"})
SuggestionKind = Literal["answer", "policy", "none"]


def new_suggestion_id() -> str:
    return "sug_" + secrets.token_hex(8)


class SuggestionSource(Model):
    """A passage the suggestion was drawn from (entitlement-filtered for the case's customer)."""

    n: int
    kind: Literal["doc", "ticket"]
    doc_id: str
    passage_id: str
    title: str
    breadcrumb: str = ""
    audience: str = "all"
    rerank_score: float | None = None
    cited: bool = False
    url: str | None = None


class SimilarCase(Model):
    """A resolution ticket or a past resolved case near the problem, with its resolution."""

    kind: Literal["ticket", "case"]
    id: str
    title: str
    resolution: str
    score: float
    audience: str = "all"


class Suggestion(Model):
    """What the agent is offered for one case at one conversation length."""

    id: str = Field(alias="_id", default_factory=new_suggestion_id)
    case_ref: str
    conversation_id: str
    customer_id: str | None = None
    conversation_length: int
    kind: SuggestionKind
    problem: str
    locale: str
    text: str = ""  # the draft reply to the customer ("" when nothing could be drafted)
    decide: str | None = None  # for a policy intent: what the agent must decide
    policy_quote: str | None = None  # the policy passage a policy draft quotes
    confidence: str = "none"
    sources: list[SuggestionSource] = Field(default_factory=list)
    similar: list[SimilarCase] = Field(default_factory=list)
    model: str = "rules"
    fallback_reason: str | None = None
    spend_cap_reached: bool = False
    latency_ms: dict[str, float] = Field(default_factory=dict)
    created_at: datetime


class AssistRepo:
    def __init__(self, db: Any) -> None:
        self._s = db["assist_suggestions"]
        self._e = db["assist_events"]

    async def cached(self, case_ref: str, conversation_length: int) -> Suggestion | None:
        doc = await self._s.find_one(
            {"caseRef": case_ref, "conversationLength": conversation_length}
        )
        return Suggestion.model_validate(doc) if doc else None

    async def get(self, suggestion_id: str) -> Suggestion | None:
        doc = await self._s.find_one({"_id": suggestion_id})
        return Suggestion.model_validate(doc) if doc else None

    async def save(self, suggestion: Suggestion) -> Suggestion:
        """Store it, unless another request stored one for the same key first (that one wins)."""
        key = {"caseRef": suggestion.case_ref, "conversationLength": suggestion.conversation_length}
        await self._s.update_one(key, {"$setOnInsert": suggestion.to_doc()}, upsert=True)
        return await self.cached(suggestion.case_ref, suggestion.conversation_length) or suggestion

    async def record(
        self,
        suggestion: Suggestion,
        event: AssistEvent,
        at: datetime,
        message_id: str | None = None,
    ) -> bool:
        """One use event; shown and inserted count once per suggestion. True when new."""
        doc = {
            "suggestionId": suggestion.id,
            "caseRef": suggestion.case_ref,
            "customerId": suggestion.customer_id,
            "conversationId": suggestion.conversation_id,
            "event": event,
            "at": at,
        }
        if event in ONCE_PER_SUGGESTION:
            key = {"suggestionId": suggestion.id, "event": event}
            res = await self._e.update_one(key, {"$setOnInsert": doc}, upsert=True)
            return res.upserted_id is not None
        await self._e.insert_one({**doc, "messageId": message_id})
        return True

    async def delete_for_customer(self, customer_id: str, conversation_ids: Sequence[str]) -> int:
        """The customer's suggestions and use events (GDPR erasure)."""
        who = {
            "$or": [
                {"customerId": customer_id},
                {"conversationId": {"$in": list(conversation_ids)}},
            ]
        }
        res = await self._s.delete_many(who)
        await self._e.delete_many(who)
        return int(res.deleted_count)
