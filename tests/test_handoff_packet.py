"""A frustrated customer's handoff carries the problem, with the complaint beside it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.providers.rerank.fake import FakeReranker
from tests.apihelp import ADMIN, Api, running_app

# the real MiniLM embedder: intent and sentiment come from the classifier over its vectors, and
# hashed fake vectors would make "this is useless" an arbitrary intent
pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROBLEM = "the panel keeps rebooting"
COMPLAINT = "still rebooting, this is useless"


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(embedder="local") as api:
        # nothing retrieved is good enough: every answer-seeking turn fails
        api.services.reranker = FakeReranker(scores={"": 0.05}, calibration="offline")
        yield api


def test_packet_problem_is_the_first_request_and_trigger_the_complaint(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    first = api.send(h, conv, PROBLEM)["reply"]
    assert first["meta"]["escalated"] is False
    second = api.send(h, conv, COMPLAINT)["reply"]
    assert second["meta"]["escalated"] is True
    assert second["meta"]["escalationReason"] == "frustration"

    [packet] = api.escalations(conv)
    assert "rebooting" in packet["askedFor"] and "panel" in packet["askedFor"]
    assert packet["askedFor"] == first["meta"]["condensedQuestion"]
    assert packet["trigger"] == COMPLAINT
    assert packet["sentiment"] in ("frustrated", "angry")

    # the same three fields in the admin queue and the case view
    queue = api.client.get("/v1/admin/escalations", headers=ADMIN).json()["escalations"]
    [row] = [c for c in queue if c["caseRef"] == packet["caseRef"]]
    case = api.client.get(f"/v1/admin/escalations/{packet['caseRef']}", headers=ADMIN).json()
    for view in (row, case["escalation"]):
        assert view["askedFor"] == packet["askedFor"]
        assert view["trigger"] == COMPLAINT
        assert view["sentiment"] == packet["sentiment"]


def test_talk_to_a_person_button_names_the_open_problem(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    first = api.send(h, conv, PROBLEM)["reply"]
    r = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
    assert r.status_code == 200, r.text
    [packet] = api.escalations(conv)
    assert packet["askedFor"] == first["meta"]["condensedQuestion"]
    assert packet["trigger"] == PROBLEM
