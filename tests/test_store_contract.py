"""Repository contract: the same behaviour from the embedded store and from a real cluster."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from pymongo.errors import DuplicateKeyError

from app.store import Store
from app.store.escalations import OpenCaseExists, new_case_ref
from app.store.indexes import ensure_regular_indexes, load_regular
from app.store.models import (
    Article,
    Chunk,
    Customer,
    Escalation,
    Order,
    OrderItem,
    Subscription,
    Ticket,
)

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def order(customer: str, ref: str, days_ago: int) -> Order:
    return Order(
        customer_id=customer,
        order_ref=ref,
        status="shipped",
        items=[OrderItem(sku="HL-RP10", name="Room Panel", qty=1, unit_price_cents=29900)],
        total_cents=29900,
        placed_at=NOW - timedelta(days=days_ago),
    )


async def test_customer_roundtrip_and_delete(any_store: Store) -> None:
    c = Customer(id="cus_a", name="Ada", email="ada@example.com", plan="pro", created_at=NOW)
    await any_store.customers.upsert(c)
    await any_store.customers.upsert(c)  # idempotent
    got = await any_store.customers.get("cus_a")
    assert got is not None and got.plan == "pro" and got.created_at == NOW
    assert await any_store.db["customers"].count_documents({}) == 1
    assert await any_store.customers.delete("cus_a") == 1
    assert await any_store.customers.get("cus_a") is None


async def test_orders_are_scoped_to_their_customer(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    await any_store.orders.upsert(order("cus_a", "ORD-1001", 3))
    await any_store.orders.upsert(order("cus_b", "ORD-2001", 1))
    assert await any_store.orders.get("cus_a", "ORD-1001") is not None
    assert await any_store.orders.get("cus_a", "ORD-2001") is None  # someone else's: absent
    assert await any_store.orders.get("cus_b", "ORD-1001") is None


async def test_recent_orders_newest_first_and_clamped(any_store: Store) -> None:
    for i in range(15):
        await any_store.orders.upsert(order("cus_a", f"ORD-{1000 + i}", days_ago=i))
    recent = await any_store.orders.recent("cus_a", limit=50)
    assert len(recent) == 10
    assert [o.order_ref for o in recent[:3]] == ["ORD-1000", "ORD-1001", "ORD-1002"]
    assert len(await any_store.orders.recent("cus_a", limit=0)) == 1


async def test_order_ref_unique_per_customer(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    doc = order("cus_a", "ORD-1", 1).to_doc()
    await any_store.db["orders"].insert_one(dict(doc))
    with pytest.raises(DuplicateKeyError):
        await any_store.db["orders"].insert_one(dict(doc))


async def test_subscription_upsert(any_store: Store) -> None:
    sub = Subscription(customer_id="cus_a", plan="pro", status="active", seats=5, price_cents=6000)
    await any_store.subscriptions.upsert(sub)
    await any_store.subscriptions.upsert(sub.model_copy(update={"status": "past_due"}))
    got = await any_store.subscriptions.for_customer("cus_a")
    assert got is not None and got.status == "past_due"
    assert await any_store.db["subscriptions"].count_documents({}) == 1


def chunk(article: str, i: int, text: str = "x") -> Chunk:
    return Chunk(id=f"{article}#{i}", article_id=article, chunk_index=i, text=text, breadcrumb="T")


async def test_replace_chunks_leaves_no_orphans(any_store: Store) -> None:
    await any_store.chunks.replace_for_article("a", [chunk("a", i) for i in range(4)])
    await any_store.chunks.replace_for_article("b", [chunk("b", 0)])
    await any_store.chunks.replace_for_article("a", [chunk("a", i, "new") for i in range(2)])
    a = await any_store.chunks.for_article("a")
    assert [(c.chunk_index, c.text) for c in a] == [(0, "new"), (1, "new")]
    assert len(await any_store.chunks.for_article("b")) == 1
    with pytest.raises(ValueError):
        await any_store.chunks.replace_for_article("a", [chunk("b", 0)])


async def test_articles_and_tickets(any_store: Store) -> None:
    art = Article(id="s", slug="s", title="T", body="b", updated_at=NOW, content_hash="h1")
    await any_store.articles.upsert(art)
    assert await any_store.articles.hashes() == {"s": "h1"}
    t = Ticket(id="TCK-1", subject="s", symptom="y", resolution="r", product="p", status="resolved")
    await any_store.tickets.upsert_many([t, t])
    assert await any_store.tickets.count() == 1
    got = await any_store.tickets.get("TCK-1")
    assert got is not None and got.resolved_at is None


async def test_seq_allocation_is_atomic_and_contiguous(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    conv = await any_store.conversations.create(
        customer_id="cus_a", anonymous_id=None, anonymous_ttl_days=30
    )
    seqs = await asyncio.gather(*[any_store.conversations.allocate_seq(conv.id) for _ in range(30)])
    assert sorted(seqs) == list(range(1, 31))
    with pytest.raises(LookupError):
        await any_store.conversations.allocate_seq("missing")


async def test_anonymous_conversations_expire_customer_ones_never(any_store: Store) -> None:
    anon = await any_store.conversations.create(
        customer_id=None, anonymous_id="anon1", anonymous_ttl_days=30, now=NOW
    )
    mine = await any_store.conversations.create(
        customer_id="cus_a", anonymous_id="ignored", anonymous_ttl_days=30, now=NOW
    )
    assert anon.expires_at == NOW + timedelta(days=30)
    assert mine.expires_at is None and mine.anonymous_id is None
    m = await any_store.messages.append(anon, seq=1, role="user", content="hi")
    assert m.expires_at == anon.expires_at
    raw = await any_store.db["conversations"].find_one({"_id": mine.id})
    assert raw is not None and raw.get("expiresAt") is None


async def test_conversation_ownership_is_in_the_query(any_store: Store) -> None:
    conv = await any_store.conversations.create(
        customer_id="cus_a", anonymous_id=None, anonymous_ttl_days=30
    )
    get = any_store.conversations.get_owned
    assert await get(conv.id, customer_id="cus_a", anonymous_id=None) is not None
    assert await get(conv.id, customer_id="cus_b", anonymous_id=None) is None
    assert await get(conv.id, customer_id=None, anonymous_id="anon") is None
    assert await get(conv.id, customer_id=None, anonymous_id=None) is None


async def test_messages_unique_seq_and_ordering(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    conv = await any_store.conversations.create(
        customer_id="cus_a", anonymous_id=None, anonymous_ttl_days=30
    )
    for seq in range(1, 9):
        await any_store.messages.append(conv, seq=seq, role="user", content=f"m{seq}")
    last = await any_store.messages.last(conv.id, 3)
    assert [m.seq for m in last] == [6, 7, 8]
    with pytest.raises(DuplicateKeyError):
        await any_store.messages.append(conv, seq=8, role="user", content="dup")


async def test_escalation_claim_is_exclusive(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    packet = Escalation(
        case_ref=new_case_ref(),
        conversation_id="c1",
        reason="policy",
        customer={"id": "cus_a"},
        created_at=NOW,
        sla_due_at=NOW + timedelta(hours=4),
    )
    await any_store.escalations.create(packet)
    other = packet.model_copy(update={"conversation_id": "c2"})  # one open case per conversation
    dup = await any_store.escalations.create(other)  # same ref: a fresh one is drawn
    assert dup.case_ref != packet.case_ref
    with pytest.raises(OpenCaseExists):  # a second open case for c1 is a database error
        await any_store.escalations.create(packet.model_copy(update={"case_ref": "CASE-XXXXXX"}))
    first = await any_store.escalations.claim(packet.case_ref, "agent1")
    second = await any_store.escalations.claim(packet.case_ref, "agent2")
    assert first is not None and first.claimed_by == "agent1" and second is None
    assert await any_store.escalations.get_for_customer(packet.case_ref, "cus_b") is None
    resolved = await any_store.escalations.resolve(packet.case_ref, NOW)
    assert resolved is not None and resolved.status == "resolved"


async def test_regular_indexes_idempotent_and_complete(any_store: Store) -> None:
    n = await ensure_regular_indexes(any_store.db)
    await ensure_regular_indexes(any_store.db)
    assert n == len(load_regular())
    names = {ix["name"] async for ix in await any_store.db["conversations"].list_indexes()}
    assert "conversations_ttl_anonymous" in names
    info = await any_store.db["messages"].index_information()
    assert info["conversation_seq"]["unique"] is True


async def test_embedded_ttl_sweep(store: Store) -> None:
    await ensure_regular_indexes(store.db)
    now = datetime.now(UTC)
    anon = await store.conversations.create(
        customer_id=None, anonymous_id="a", anonymous_ttl_days=30, now=now
    )
    await store.messages.append(anon, seq=1, role="user", content="old")
    kept = await store.conversations.create(
        customer_id="cus_a", anonymous_id=None, anonymous_ttl_days=30, now=now
    )
    assert await store.db.sweep_expired(now=now + timedelta(days=29)) == 0
    assert await store.db.sweep_expired(now=now + timedelta(days=31)) == 2
    assert await store.conversations.get(anon.id) is None
    assert await store.messages.last(anon.id, 5) == []
    assert await store.conversations.get(kept.id) is not None


async def test_conversation_memory_lives_beside_the_document(any_store: Store) -> None:
    await ensure_regular_indexes(any_store.db)
    conv = await any_store.conversations.create(
        customer_id="cus_m", anonymous_id=None, anonymous_ttl_days=30, now=NOW
    )
    fact = {"kind": "order", "value": "ORD-1042", "seq": 1}
    await any_store.conversations.add_facts(conv, [fact])
    await any_store.conversations.add_facts(conv, [{**fact, "seq": 9}])  # first appearance wins
    await any_store.conversations.set_summary(conv, "asked about ORD-1042", 6)
    got = await any_store.conversations.get(conv.id)
    assert got is not None and got.summary == "asked about ORD-1042"
    assert got.summarized_through_seq == 6
    assert got.facts == [{"kind": "order", "value": "ORD-1042", "seq": 1}]
    raw = await any_store.db["conversations"].find_one({"_id": conv.id})
    assert raw is not None and "facts" not in raw and "summary" not in raw
    # erasure takes the memory with the conversation
    await any_store.delete_customer("cus_m")
    assert await any_store.db["conversation_facts"].count_documents({}) == 0
    assert await any_store.db["conversation_summaries"].count_documents({}) == 0


async def test_anonymous_memory_expires_with_its_conversation(store: Store) -> None:
    await ensure_regular_indexes(store.db)
    now = datetime.now(UTC)
    anon = await store.conversations.create(
        customer_id=None, anonymous_id="a", anonymous_ttl_days=30, now=now
    )
    await store.conversations.add_facts(anon, [{"kind": "order", "value": "ORD-7", "seq": 1}])
    await store.conversations.set_summary(anon, "s", 2)
    assert await store.db.sweep_expired(now=now + timedelta(days=31)) == 3
    assert await store.db["conversation_facts"].count_documents({}) == 0
