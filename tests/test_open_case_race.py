"""One open case per conversation is a database rule (a unique partial index), and concurrent
handoffs on the yielding embedded store end with one case, the same reference for every caller."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from app.identity import Principal
from app.providers.embeddings.fake import FakeEmbedder
from app.services import build_services
from app.settings import Settings
from app.store import Store
from app.store.escalations import OpenCaseExists
from app.store.indexes import load_regular
from app.turn.engine import request_handoff

RACERS = 8


def test_the_rule_is_defined_for_open_and_claimed_cases() -> None:
    spec = next(
        s for s in load_regular() if s["options"]["name"] == "one_open_case_per_conversation"
    )
    assert spec["collection"] == "escalations"
    assert spec["keys"] == [["conversationId", 1]]
    assert spec["options"]["unique"] is True
    assert spec["options"]["partialFilterExpression"] == {"status": {"$in": ["open", "claimed"]}}


async def test_concurrent_handoffs_open_one_case(settings: Settings, store: Store) -> None:
    services = await build_services(settings, embedder=FakeEmbedder(), store=store)
    conv = await store.conversations.create(
        customer_id=None, anonymous_id="anon-1", anonymous_ttl_days=1
    )
    principal = Principal(session_id="s", customer_id=None, anonymous_id="anon-1")
    results = await asyncio.gather(
        *(request_handoff(services, principal, conv) for _ in range(RACERS))
    )
    refs = {ref for ref, _ in results}
    cases = await store.db["escalations"].find({"conversationId": conv.id}).to_list()
    assert len(cases) == 1, [c["caseRef"] for c in cases]
    assert refs == {cases[0]["caseRef"]}
    replies = [reply for _, reply in results if reply is not None]
    assert len(replies) == 1  # the losers answer like a second click: no second reply stored


async def test_the_store_refuses_a_second_open_case_and_allows_one_after_resolving(
    settings: Settings, store: Store
) -> None:
    services = await build_services(settings, embedder=FakeEmbedder(), store=store)
    conv = await store.conversations.create(
        customer_id=None, anonymous_id="anon-2", anonymous_ttl_days=1
    )
    principal = Principal(session_id="s", customer_id=None, anonymous_id="anon-2")
    first, _ = await request_handoff(services, principal, conv)
    existing = await store.escalations.open_for_conversation(conv.id)
    assert existing is not None
    second = existing.model_copy(update={"case_ref": "CASE-ZZZZZZ"})
    with pytest.raises(OpenCaseExists) as caught:
        await store.escalations.create(second)
    assert caught.value.existing.case_ref == first
    await store.db["escalations"].update_one(
        {"caseRef": first}, {"$set": {"status": "resolved", "resolvedAt": datetime.now(UTC)}}
    )
    again = await store.escalations.create(second)
    assert again.case_ref == "CASE-ZZZZZZ"
