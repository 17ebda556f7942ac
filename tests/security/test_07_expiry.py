"""Finding 7: feedback and cases from anonymous conversations never expired."""

from __future__ import annotations

import json
from datetime import timedelta

from app.store.indexes import load_regular
from tests.apihelp import Api


def test_anonymous_feedback_and_cases_expire_with_their_conversation(api: Api) -> None:
    h = api.session()
    conv = api.conversation(h)
    api.send(h, conv, "How do I reset my password?")
    assert (
        api.client.post(
            f"/v1/conversations/{conv}/feedback", headers=h, json={"resolved": True}
        ).status_code
        == 200
    )
    assert api.client.post(f"/v1/conversations/{conv}/handoff", headers=h).status_code == 200
    db = api.services.store.db

    async def docs() -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
        c = await db["conversations"].find_one({"_id": conv})
        f = await db["feedback"].find_one({"conversationId": conv})
        e = await db["escalations"].find_one({"conversationId": conv})
        return c, f, e

    c, f, e = api.run(docs)
    assert c["expiresAt"] and f["expiresAt"] == c["expiresAt"] and e["expiresAt"] == c["expiresAt"]

    async def sweep_later() -> int:
        return int(await db.sweep_expired(now=c["expiresAt"] + timedelta(seconds=1)))

    assert api.run(sweep_later) >= 3

    async def left() -> list[int]:
        return [
            await db[n].count_documents({"conversationId": conv})
            for n in ("feedback", "escalations", "messages")
        ]

    assert api.run(left) == [0, 0, 0]


def test_signed_in_customers_cases_do_not_expire(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    api.client.post(f"/v1/conversations/{conv}/handoff", headers=h)

    async def case() -> dict:  # type: ignore[type-arg]
        return await api.services.store.db["escalations"].find_one({"conversationId": conv})

    assert api.run(case).get("expiresAt") is None


def test_ttl_indexes_are_defined() -> None:
    ttl = {
        (i["collection"], i["keys"][0][0])
        for i in load_regular()
        if "expireAfterSeconds" in i.get("options", {})
    }
    assert {("feedback", "expiresAt"), ("escalations", "expiresAt")} <= ttl, json.dumps(sorted(ttl))
