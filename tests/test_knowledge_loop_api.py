"""The knowledge loop end to end through the HTTP API, on the real MiniLM embedder and the
offline reranker: a resolved handoff becomes a ticket the next customer is answered from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.apihelp import ADMIN, Api, running_app

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# a problem the seed corpus has no answer for, told two ways by two customers
PROBLEM_A = "The room panel shows the message 'calendar token revoked' every morning at 7 am"
PROBLEM_B = "Every morning at 7 the room panel says calendar token revoked"
RESOLUTION = (
    "The calendar token is revoked by a nightly sign-in frequency policy in Microsoft 365 "
    "conditional access. Exclude the room panel service account from that policy, then "
    "reconnect the calendar in Admin > Rooms > Calendar; the message stops the next morning. "
    "Call me on +44 20 7946 0958 or write to sam.agent@example.com if it comes back."
)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(embedder="local", ready_seconds=600) as api:
        yield api


def _ask(api: Api, customer: str, text: str) -> dict[str, Any]:
    return _ask_full(api, customer, text)[0]


def _ask_full(
    api: Api, customer: str, text: str
) -> tuple[dict[str, Any], str, str, dict[str, str]]:
    h = api.session(customer)
    conv = api.conversation(h)
    reply = api.send(h, conv, text)["reply"]
    return dict(reply["meta"]), conv, str(reply["id"]), h


def _cited_tickets(meta: dict[str, Any]) -> list[str]:
    return [c["docId"] for c in meta.get("citations", []) if c.get("kind") == "ticket"]


def test_a_resolved_handoff_answers_the_next_customer_on_the_same_rung(api: Api) -> None:
    # customer A (enterprise): the bot cannot answer; A asks for a person
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    first = api.send(h, conv, PROBLEM_A)["reply"]["meta"]
    assert first["confidence"] in ("weak", "none"), first
    r = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
    assert r.status_code == 200, r.text
    [packet] = api.escalations(conv)
    case_ref = packet["caseRef"]

    # before: customer B on the same rung gets no strong answer
    before = _ask(api, "cus_tidewater", PROBLEM_B)
    assert before["confidence"] != "strong", before

    # the agent replies, then resolves with knowledge allowed (prefill = the reply)
    reply = api.client.post(
        f"/v1/admin/escalations/{case_ref}/reply",
        headers=ADMIN,
        json={"agent": "Sam", "content": RESOLUTION},
    )
    assert reply.status_code == 200, reply.text
    detail = api.client.get(f"/v1/admin/escalations/{case_ref}", headers=ADMIN).json()
    assert "sign-in frequency policy" in detail["suggestedResolution"]
    resolved = api.client.post(
        f"/v1/admin/escalations/{case_ref}/resolve",
        headers=ADMIN,
        json={"agent": "Sam", "resolution": detail["suggestedResolution"], "knowledge": True},
    )
    assert resolved.status_code == 200, resolved.text
    body = resolved.json()
    ticket = body["ticket"]
    assert body["escalation"]["status"] == "resolved"
    assert body["escalation"]["ticketId"] == ticket["id"]
    assert ticket["source"] == "resolution" and ticket["caseRef"] == case_ref
    assert ticket["audience"] == "enterprise"  # A's plan rung
    assert ticket["locale"] == "en" and ticket["product"] == "room-panel"
    assert "calendar token revoked" in ticket["symptom"]

    # what was stored: masked text, an embedding, the resolved status
    doc = api.run(lambda: api.services.store.db["tickets"].find_one({"_id": ticket["id"]}))
    assert doc is not None and len(doc["embedding"]) == api.services.embedder.dimensions
    assert "sam.agent@example.com" not in doc["resolution"]
    assert "7946 0958" not in doc["resolution"]
    assert doc["status"] == "resolved" and doc["quality"] >= api.services.tuning.ticket_min_quality

    # after, without a restart: B (enterprise) asks in other words and is answered from it
    after, conv_b, msg_b, h_b = _ask_full(api, "cus_tidewater", PROBLEM_B)
    assert after["confidence"] == "strong", {
        k: after.get(k)
        for k in ("topRerankScore", "answerability", "confidenceReason", "passages", "citations")
    }
    assert ticket["id"] in _cited_tickets(after), after["citations"]

    # a pro customer (a lower rung than A's) never sees it
    lower = _ask(api, "cus_brightwater", PROBLEM_B)
    assert ticket["id"] not in _cited_tickets(lower)
    assert all(p["id"] != ticket["id"] for p in lower.get("passages", []))

    # the weekly loop metric counts the strong answer
    metrics = api.client.get("/v1/admin/metrics", headers=ADMIN).json()["knowledgeLoop"]
    assert metrics["totals"]["ticketsFromResolutions"] >= 1
    assert metrics["totals"]["answeredByThem"] >= 1

    # B's vote on that answer moves the ticket's quality (once per message)
    for _ in range(2):
        r = api.client.post(
            f"/v1/conversations/{conv_b}/messages/{msg_b}/feedback",
            headers=h_b,
            json={"helpful": False},
        )
        assert r.status_code == 200, r.text
    [listed] = [
        t
        for t in api.client.get("/v1/admin/tickets", headers=ADMIN).json()["tickets"]
        if t["id"] == ticket["id"]
    ]
    assert listed["votesDown"] == 1 and listed["agentQuality"] == ticket["quality"]
    assert listed["quality"] == pytest.approx(
        ticket["quality"] - api.services.tuning.resolution_vote_down
    )

    # unpublished from /admin: out of retrieval at once
    r = api.client.patch(
        f"/v1/admin/tickets/{ticket['id']}",
        headers=ADMIN,
        json={"editor": "Lead", "status": "unpublished"},
    )
    assert r.status_code == 200, r.text
    gone = _ask(api, "cus_tidewater", PROBLEM_B)
    assert ticket["id"] not in _cited_tickets(gone)
    assert all(p["id"] != ticket["id"] for p in gone.get("passages", []))
