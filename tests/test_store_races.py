"""The embedded store can fail the tests it should (issue 12).

Its facade yields to the event loop on every call, as a network driver's round trip does, so
concurrent turns interleave between store calls as they would against MongoDB; it refuses
`session=` instead of dropping it. The race tests below carry a control: the read-modify-write
that memory used to do loses writes here, which it could not if the facade did not yield — the
same tests on a facade that never yields fail at the control.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from pymongo import InsertOne
from pymongo.errors import DuplicateKeyError

from app.store import Store
from app.store.embedded import SessionsUnsupported
from app.store.models import Conversation

RACERS = 8

Op = Callable[[Any], Awaitable[Any]]


async def _cursor_iter(c: Any) -> list[Any]:
    return [d async for d in c.find({})]


OPS: dict[str, Op] = {
    "insert_one": lambda c: c.insert_one({"_id": "n", "v": 1}),
    "find_one": lambda c: c.find_one({"_id": "a"}),
    "find.to_list": lambda c: c.find({}).to_list(),
    "async for": _cursor_iter,
    "update_one": lambda c: c.update_one({"_id": "a"}, {"$inc": {"v": 1}}),
    "update_many": lambda c: c.update_many({}, {"$inc": {"v": 1}}),
    "replace_one": lambda c: c.replace_one({"_id": "a"}, {"v": 2}),
    "find_one_and_update": lambda c: c.find_one_and_update({"_id": "a"}, {"$inc": {"v": 1}}),
    "delete_one": lambda c: c.delete_one({"_id": "a"}),
    "delete_many": lambda c: c.delete_many({"v": 99}),
    "count_documents": lambda c: c.count_documents({}),
    "bulk_write": lambda c: c.bulk_write([InsertOne({"_id": "m"})]),
    "aggregate": lambda c: c.aggregate([{"$match": {}}]),
    "create_index": lambda c: c.create_index("v"),
    "list_indexes": lambda c: c.list_indexes(),
}


async def _yields(call: Callable[[], Awaitable[Any]]) -> bool:
    """Whether another task got to run while `call` was awaited."""
    ran = asyncio.Event()

    async def other() -> None:
        ran.set()

    task = asyncio.ensure_future(other())  # scheduled: it runs at the caller's first yield
    try:
        await call()
    finally:
        seen = ran.is_set()
        await task
    return seen


@pytest.mark.parametrize("op", list(OPS))
async def test_every_call_yields_to_the_event_loop(store: Store, op: str) -> None:
    coll = store.db["yield_probe"]
    await coll.insert_one({"_id": "a", "v": 0})
    assert await _yields(lambda: OPS[op](coll)), f"{op} completed without yielding"


async def test_a_failing_call_yields_too(store: Store) -> None:
    """An error reply is a round trip as well (the duplicate-key race path depends on it)."""
    coll = store.db["yield_probe"]
    await coll.insert_one({"_id": "a"})

    async def duplicate() -> None:
        with pytest.raises(DuplicateKeyError):
            await coll.insert_one({"_id": "a"})

    assert await _yields(duplicate)


async def test_database_calls_yield(store: Store) -> None:
    assert await _yields(store.db.list_collection_names)
    assert await _yields(lambda: store.db.command("ping"))


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.find_one({}, session=object()),
        lambda c: c.insert_one({"x": 1}, session=object()),
        lambda c: c.update_one({}, {"$set": {"x": 1}}, session=object()),
        lambda c: c.aggregate([], session=object()),
        lambda c: c.find({}, session=object()).to_list(),
    ],
    ids=["find_one", "insert_one", "update_one", "aggregate", "find"],
)
async def test_a_session_is_refused_not_silently_dropped(store: Store, call: Op) -> None:
    coll = store.db["probe"]
    with pytest.raises(SessionsUnsupported):
        await call(coll)
    assert await coll.count_documents({}) == 0  # nothing was written without the session
    assert await coll.find_one({}, session=None) is None  # an explicit None is no session


def test_the_client_has_no_sessions(store: Store) -> None:
    assert not hasattr(store.client, "start_session")


# --- memory facts: concurrent turns of one conversation -------------------------------------


def _fact(i: int) -> dict[str, Any]:
    return {"kind": "order", "value": f"ORD-{1000 + i}", "seq": i + 1}


async def _conversation(store: Store) -> Conversation:
    return await store.conversations.create(
        customer_id=None, anonymous_id="anon-race", anonymous_ttl_days=1
    )


async def _read_modify_write(store: Store, conversation_id: str, fact: dict[str, Any]) -> None:
    """Memory before issue 12: read the list at the start of the turn, write the merged list."""
    coll = store.db["conversations"]
    doc = await coll.find_one({"_id": conversation_id})
    assert doc is not None
    facts = [*doc.get("factsList", []), fact]
    await coll.update_one({"_id": conversation_id}, {"$set": {"factsList": facts}})


async def test_control_read_modify_write_loses_facts_on_this_facade(store: Store) -> None:
    """If this fails, the facade serialises every caller and no race test here can fail."""
    conv = await _conversation(store)
    await asyncio.gather(*(_read_modify_write(store, conv.id, _fact(i)) for i in range(RACERS)))
    doc = await store.db["conversations"].find_one({"_id": conv.id})
    assert doc is not None
    assert len(doc["factsList"]) < RACERS  # lost updates: the last writer wins


async def test_concurrent_turns_keep_every_fact(store: Store) -> None:
    """What turns do now (`ConversationRepo.add_facts`, one upserted document per fact), each
    racer holding the conversation as it read it at the start of its turn."""
    conv = await _conversation(store)

    async def turn(i: int) -> None:
        seen = await store.conversations.get(conv.id)
        assert seen is not None
        await store.conversations.add_facts(seen, [_fact(i)])

    await asyncio.gather(*(turn(i) for i in range(RACERS)))
    await asyncio.gather(*(turn(i) for i in range(RACERS)))  # repeats are not stored twice
    stored = await store.conversations.get(conv.id)
    assert stored is not None
    assert sorted(f["value"] for f in stored.facts) == sorted(
        _fact(i)["value"] for i in range(RACERS)
    )


async def test_an_older_summary_job_cannot_overwrite_a_newer_one(store: Store) -> None:
    """Two summary jobs in flight: the one through the later message wins, whatever the
    order they finish in."""
    conv = await _conversation(store)
    assert await store.conversations.set_summary(conv, "through twelve", 12)
    assert not await store.conversations.set_summary(conv, "through six (late)", 6)
    stored = await store.conversations.get(conv.id)
    assert stored is not None
    assert (stored.summary, stored.summarized_through_seq) == ("through twelve", 12)

    results = await asyncio.gather(
        *(store.conversations.set_summary(conv, f"through {n}", n) for n in (13, 18, 14, 15))
    )
    stored = await store.conversations.get(conv.id)
    assert stored is not None and stored.summarized_through_seq == 18
    assert stored.summary == "through 18"
    assert results[1] is True  # 18 landed


async def test_summary_write_keeps_ttl_and_masks(store: Store) -> None:
    conv = await _conversation(store)
    assert await store.conversations.set_summary(conv, "card 4111 1111 1111 1111", 3)
    doc = await store.db["conversation_summaries"].find_one({"_id": conv.id})
    assert doc is not None
    assert "4111 1111 1111 1111" not in doc["text"]
    assert conv.expires_at is not None and doc["expiresAt"] > datetime.now(UTC)
    assert abs((doc["expiresAt"] - conv.expires_at).total_seconds()) < 0.001  # BSON keeps ms
