"""Finding 4: GDPR delete left sessions valid; a case opened afterwards was stored with
`customer: null`, so a second delete missed it (and the email in it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.store.models import Conversation
from app.turn.escalate import build_packet
from tests.apihelp import ADMIN, Api
from tuning import TUNING

WHO = "cus_castellan"


def _every_document(api: Api) -> dict[str, str]:
    async def read() -> dict[str, str]:
        db = api.services.store.db
        out = {}
        for name in await db.list_collection_names():
            docs = await db[name].find({}).to_list()
            out[name] = json.dumps(docs, default=str)
        return out

    return api.run(read)


def test_delete_revokes_sessions_and_leaves_nothing_behind(api: Api) -> None:
    customer = api.run(api.services.store.customers.get, WHO)
    assert customer is not None
    h = api.session(WHO)
    conv = api.conversation(h)
    api.send(h, conv, f"My email is {customer.email}, my order ORD-1042 never arrived")
    assert api.client.post(f"/v1/conversations/{conv}/handoff", headers=h).status_code == 200
    api.client.post(f"/v1/conversations/{conv}/feedback", headers=h, json={"resolved": False})
    before = _every_document(api)
    assert any(WHO in text for text in before.values())

    r = api.client.delete(f"/v1/admin/customers/{WHO}", headers=ADMIN)
    assert r.status_code == 200 and r.json()["deleted"]["escalations"] >= 1

    # the attack: keep using the session minted before the deletion
    assert api.client.post("/v1/conversations", headers=h).status_code == 401
    assert api.client.post(f"/v1/conversations/{conv}/handoff", headers=h).status_code == 401
    assert api.client.get(f"/v1/conversations/{conv}", headers=h).status_code == 401

    # one pass was enough: no collection mentions the customer or their email
    after = _every_document(api)
    for name, text in after.items():
        assert WHO not in text, name
        assert customer.email not in text, name


def test_a_case_always_records_the_conversations_customer() -> None:
    now = datetime.now(UTC)
    conv = Conversation(id="c1", customer_id="cus_gone", created_at=now, updated_at=now)
    packet = build_packet(
        conversation=conv,
        customer=None,  # the customer record could not be read
        subscription=None,
        reason="explicit",
        intent=None,
        asked_for="help",
        sentiment=None,
        failed_turns=0,
        attempted={},
        now=now,
        tuning=TUNING,
    )
    assert packet.customer_id == "cus_gone"
    doc: dict[str, Any] = packet.to_doc()
    assert doc["customerId"] == "cus_gone"


def test_revoking_a_customers_sessions_ends_them(api: Api) -> None:
    who = "cus_harrowgate"
    h = api.session(who)
    assert api.client.post("/v1/conversations", headers=h).status_code == 201
    assert api.run(api.services.store.customers.revoke_sessions, who)
    assert api.client.post("/v1/conversations", headers=h).status_code == 401
    fresh = api.session(who)
    assert api.client.post("/v1/conversations", headers=fresh).status_code == 201
