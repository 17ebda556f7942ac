"""The embedded store's in-memory indexes narrow scans but never change an answer."""

from __future__ import annotations

import random

import mongomock_ng
import pytest
from pymongo.errors import DuplicateKeyError

from app.store.embedded import EmbeddedClient


async def test_indexed_queries_answer_exactly_like_a_full_scan() -> None:
    rng = random.Random(5)
    ours = EmbeddedClient()["t"]["messages"]
    plain = mongomock_ng.MongoClient(tz_aware=True)["t"]["messages"]
    for coll in (ours, plain):
        r = coll.create_index([("conversationId", 1), ("seq", -1)], unique=True)
        if not isinstance(r, str):
            await r
    convs = [f"c{i}" for i in range(6)]
    for n in range(300):
        doc = {"_id": f"m{n}", "conversationId": rng.choice(convs), "seq": n, "n": n % 7}
        if n % 50 == 0:
            doc["conversationId"] = ["odd", "list"]  # a non-string value in an indexed field
        await ours.insert_one(dict(doc))
        plain.insert_one(dict(doc))
        if n % 9 == 0:  # updates, including one moving a document to another conversation
            moved = {"$set": {"conversationId": rng.choice(convs), "n": -1}}
            await ours.update_one({"_id": f"m{n // 2}"}, moved)
            plain.update_one({"_id": f"m{n // 2}"}, moved)
        if n % 13 == 0:
            await ours.delete_many({"conversationId": rng.choice(convs), "n": 3})
            plain.delete_many({"conversationId": convs[0], "n": 99})  # keep in step below
    # bring the two into the same state, then compare many queries
    ours_ids = {d["_id"] async for d in ours.find({})}
    plain.delete_many({"_id": {"$nin": sorted(ours_ids)}})
    queries = [{"conversationId": c} for c in [*convs, "missing", "odd"]] + [
        {"_id": "m10"},
        {"_id": {"$in": ["m3", "m200", "nope"]}},
        {"conversationId": "c1", "seq": {"$gt": 100}},
        {"n": -1},
    ]
    for q in queries:
        got = await ours.find(q).to_list()
        want = list(plain.find(q))
        assert got == want, q
        assert await ours.count_documents(q) == plain.count_documents(q)


async def test_unique_index_still_refuses_a_duplicate_within_the_bucket() -> None:
    coll = EmbeddedClient()["t"]["messages"]
    await coll.create_index([("conversationId", 1), ("seq", -1)], unique=True)
    await coll.insert_one({"conversationId": "c", "seq": 1})
    await coll.insert_one({"conversationId": "d", "seq": 1})  # another conversation: fine
    with pytest.raises(DuplicateKeyError):
        await coll.insert_one({"conversationId": "c", "seq": 1})
    assert await coll.count_documents({}) == 2
