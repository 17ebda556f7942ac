"""The conversation engine through the HTTP API, asserting on what was stored."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import pytest

from app.providers.chat.fake import GARBAGE, ScriptedChatModel
from app.providers.errors import ProviderError
from app.providers.rerank.fake import FakeReranker
from tests.apihelp import Api, running_app
from tuning import TUNING, ConfidenceBands

# the fake reranker's scores are read as plain score thresholds (no answerability model)
SCORED = replace(
    TUNING, confidence={**TUNING.confidence, "scores": ConfidenceBands(strong=0.7, weak=0.55)}
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(tuning=SCORED) as api:
        yield api


@pytest.fixture
def rerank_scores(api: Api) -> Iterator[object]:
    """Control confidence: every passage gets the given rerank score, read against 0.7/0.55."""
    original = api.services.reranker

    def set_score(score: float) -> None:
        api.services.reranker = FakeReranker(scores={"": score}, calibration="scores")

    yield set_score
    api.services.reranker = original


def assistant_meta(reply: dict[str, object]) -> dict[str, object]:
    assert reply is not None
    meta = reply["meta"]
    assert isinstance(meta, dict)
    return meta


def test_user_message_stored_first_with_contiguous_seq(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    for text in ["How do I reset my password?", "thanks", "What is AUTH_304?"]:
        api.send(h, conv, text)
    msgs = api.messages(conv)
    assert [m["seq"] for m in msgs] == list(range(1, 7))
    assert [m["role"] for m in msgs] == ["user", "assistant"] * 3
    meta = msgs[1]["meta"]
    for key in (
        "intent",
        "sentiment",
        "confidence",
        "condensedQuestion",
        "topRerankScore",
        "escalated",
        "passageCount",
        "passages",
        "tools",
        "citations",
        "model",
        "latencyMs",
        "tokens",
    ):
        assert key in meta, key
    assert set(meta["latencyMs"]) >= {"condense", "retrieve", "rerank", "generate", "total"}


def test_policy_intent_escalates_before_retrieval(api: Api) -> None:
    h = api.session("cus_brightwater")
    conv = api.conversation(h)
    out = api.send(h, conv, "I want a refund for last month's invoice, we were double charged")
    meta = assistant_meta(out["reply"])
    assert meta["escalated"] is True and meta["escalationReason"] == "policy"
    assert meta["passageCount"] == 0 and "retrieve" not in meta["latencyMs"]
    assert "CASE-" in out["reply"]["content"]
    [packet] = api.escalations(conv)
    assert packet["reason"] == "policy" and packet["status"] == "open"
    assert packet["caseRef"] == meta["caseRef"]
    assert packet["customer"]["plan"] == "pro" and packet["customer"]["email"].endswith(
        "example.com"
    )
    assert packet["customer"]["subscriptionStatus"] in (
        "active",
        "past_due",
        "trialing",
        "canceled",
    )
    assert packet["askedFor"] and packet["slaDueAt"] > packet["createdAt"]
    assert api.conversation_doc(conv)["status"] == "escalated"


def test_explicit_request_escalates(api: Api) -> None:
    h = api.session("cus_tidewater")
    conv = api.conversation(h)
    out = api.send(h, conv, "Can I talk to a real person please?")
    meta = assistant_meta(out["reply"])
    assert meta["escalated"] is True
    assert meta["escalationReason"] in ("explicit", "policy")  # human_handoff is a policy intent
    assert len(api.escalations(conv)) == 1


def test_bot_is_silent_while_escalated_and_agent_reply_reaches_customer(api: Api) -> None:
    h = api.session("cus_tidewater")
    conv = api.conversation(h)
    r = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
    assert r.status_code == 200
    case_ref = r.json()["caseRef"]
    out = api.send(h, conv, "Also, the panel in room 4 is blinking red")
    assert out["reply"] is None  # no bot talking over the person
    stored = api.messages(conv)
    assert stored[-1]["role"] == "user" and "blinking red" in stored[-1]["content"]
    r = api.client.post(
        f"/v1/admin/escalations/{case_ref}/reply",
        headers={"Authorization": "Bearer test-admin-token"},
        json={"agent": "sam", "content": "Hi, Sam here. Looking at room 4 now."},
    )
    assert r.status_code == 200
    seq = stored[-1]["seq"]
    polled = api.client.get(f"/v1/conversations/{conv}/messages?after={seq}", headers=h).json()
    assert [m["role"] for m in polled["messages"]] == ["agent"]
    assert polled["status"] == "escalated"


def test_frustration_plus_failure_escalates(api: Api, rerank_scores) -> None:  # type: ignore[no-untyped-def]
    rerank_scores(0.05)
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "This is RIDICULOUS!!! Nothing works and your docs are useless!!!")
    meta = assistant_meta(out["reply"])
    assert meta["sentiment"] in ("frustrated", "angry")
    assert meta["escalated"] is True and meta["escalationReason"] == "frustration"
    [packet] = api.escalations(conv)
    assert packet["attempted"]["confidence"] == "none"


def test_failed_turn_streak_escalates_on_the_third_and_strong_resets(
    api: Api, rerank_scores
) -> None:  # type: ignore[no-untyped-def]
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    rerank_scores(0.05)
    for expected in (1, 2):
        meta = assistant_meta(api.send(h, conv, "How do I configure the room panel?")["reply"])
        assert meta["escalated"] is False and meta["failedTurns"] == expected
    # thanks neither searches nor counts
    meta = assistant_meta(api.send(h, conv, "ok thanks")["reply"])
    assert meta["intent"] == "acknowledgment" and meta["passageCount"] == 0
    assert "retrieve" not in meta["latencyMs"] and meta["failedTurns"] == 2
    assert api.conversation_doc(conv)["failedTurns"] == 2
    # a strong answer resets the streak
    rerank_scores(0.95)
    meta = assistant_meta(api.send(h, conv, "How do I update the room panel firmware?")["reply"])
    assert meta["confidence"] == "strong" and meta["failedTurns"] == 0
    rerank_scores(0.05)
    for expected in (1, 2):
        meta = assistant_meta(api.send(h, conv, "How do I mount the desk tag?")["reply"])
        assert meta["escalated"] is False and meta["failedTurns"] == expected
    out = api.send(h, conv, "How do I pair the kiosk printer?")
    meta = assistant_meta(out["reply"])
    assert meta["escalated"] is True and meta["escalationReason"] == "failed_turns"
    # nothing was found: the handoff alone
    assert out["reply"]["content"].startswith("I haven't been able to find the answer"), out
    [packet] = api.escalations(conv)
    assert packet["conversation"]["failedTurns"] == 3


def test_a_weak_streak_still_gets_what_was_found_before_the_handoff(  # type: ignore[no-untyped-def]
    api: Api, rerank_scores
) -> None:
    """Three weak turns in a row hand over (DESIGN 6.1, signal 4), but the third still quotes
    what its passages cover, then says a person is brought in as well."""
    rerank_scores(0.6)  # weak: between 0.55 and 0.7
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    for question in ("How do I configure the room panel?", "How do I mount the desk tag?"):
        meta = assistant_meta(api.send(h, conv, question)["reply"])
        assert meta["confidence"] == "weak" and meta["escalated"] is False
    out = api.send(h, conv, "How do I pair the kiosk printer?")
    meta = assistant_meta(out["reply"])
    content = out["reply"]["content"]
    assert meta["escalated"] is True and meta["escalationReason"] == "failed_turns"
    assert meta["confidence"] == "weak" and meta["citations"], meta
    found, _, handoff = content.partition("\n\n")
    assert re.search(r"\[\d\]", found) and "doesn't cover your situation" not in found, content
    assert handoff.startswith("I haven't been able to give you a confident answer"), content
    [packet] = api.escalations(conv)
    assert packet["caseRef"] in handoff and packet["reason"] == "failed_turns"
    assert api.conversation_doc(conv)["status"] == "escalated"


def test_none_confidence_is_honest(api: Api, rerank_scores) -> None:  # type: ignore[no-untyped-def]
    rerank_scores(0.05)
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "How do I configure the room panel?")
    meta = assistant_meta(out["reply"])
    assert meta["confidence"] == "none" and meta["citations"] == []
    assert "enough information" in out["reply"]["content"]
    assert "person" in out["reply"]["content"]


def test_another_customers_order_is_not_found(api: Api) -> None:
    h = api.session("cus_brightwater")  # ORD-1001 belongs to cus_castellan
    conv = api.conversation(h)
    out = api.send(h, conv, "Where is my order ORD-1001?")
    meta = assistant_meta(out["reply"])
    assert {"tool": "lookupOrder", "ok": True, "found": False, "ref": "ORD-1001"} in meta["tools"]
    assert "ORD-1001" in out["reply"]["content"] and "don't see" in out["reply"]["content"]
    assert "1Z" not in out["reply"]["content"]  # no tracking number leaked
    mine = api.send(h, conv, "What about ORD-1013?")
    found = {"tool": "lookupOrder", "ok": True, "found": True, "ref": "ORD-1013"}
    assert found in assistant_meta(mine["reply"])["tools"]


def test_tools_never_take_a_customer_id_from_the_model(api: Api) -> None:
    """A model that tries to pass another customer's id gets this session's data only."""
    from app.turn.tools import TOOL_SPECS, SessionTools

    for spec in TOOL_SPECS:
        props = spec["input_schema"].get("properties", {})
        assert not any("customer" in p.lower() for p in props)
    tools = SessionTools(api.services.store, "cus_brightwater")
    res = api.run(
        tools.call, "lookupOrder", {"orderRef": "ORD-1001", "customerId": "cus_castellan"}
    )
    assert res.found is False
    res = api.run(tools.call, "listRecentOrders", {"customerId": "cus_castellan", "limit": 10})
    assert all(o["orderRef"] in ("ORD-1013", "ORD-1014", "ORD-1015") for o in res.data)
    assert all("customerId" not in o for o in res.data)


def test_anonymous_visitors_get_no_account_data(api: Api) -> None:
    h = api.session(None)
    conv = api.conversation(h)
    out = api.send(h, conv, "Where is my order ORD-1001?")
    assert "sign in" in out["reply"]["content"].lower()
    assert "delivered" not in out["reply"]["content"].lower()
    doc = api.conversation_doc(conv)
    assert doc["expiresAt"] is not None
    assert all(m.get("expiresAt") is not None for m in api.messages(conv))


def test_signed_in_conversations_never_expire(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    api.send(h, conv, "hello")
    assert api.conversation_doc(conv).get("expiresAt") is None
    assert all(m.get("expiresAt") is None for m in api.messages(conv))


def test_card_numbers_are_masked_before_storage_and_providers(api: Api) -> None:
    model = ScriptedChatModel.always(ProviderError("down"), name="anthropic:test")
    original = api.services.chat_model
    api.services.chat_model = model
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        api.send(h, conv, "My card 4242 4242 4242 4242 was charged twice, order ORD-1002")
    finally:
        api.services.chat_model = original
    stored = api.messages(conv)
    assert "4242 4242 4242 4242" not in stored[0]["content"]
    assert "4242" in stored[0]["content"] and "ORD-1002" in stored[0]["content"]
    seen = [m.content for c in model.json_calls for m in c.messages]
    seen += [m.content for r in model.requests for m in r.messages]
    assert seen and not any("4242 4242 4242 4242" in s for s in seen)


def test_provider_failure_falls_back_offline_and_is_recorded(api: Api, rerank_scores) -> None:  # type: ignore[no-untyped-def]
    rerank_scores(0.9)
    model = ScriptedChatModel.always(GARBAGE, name="anthropic:test")
    original = api.services.chat_model
    api.services.chat_model = model
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        out = api.send(h, conv, "How do I update the room panel firmware?")
    finally:
        api.services.chat_model = original
    meta = assistant_meta(out["reply"])
    assert meta["condensation"]["fallback"] is True  # invalid JSON from the condenser call
    stored = api.messages(conv)[-1]["meta"]["condensation"]
    assert stored["fallbackReason"]  # the reason itself is kept for operators
    assert "Traceback" not in out["reply"]["content"]
    # the garbage (with its [99] and [0]) was discarded, not cleaned up and shown
    assert meta["model"] == "offline" and meta["fallback"] is True  # the customer's view
    assert api.messages(conv)[-1]["meta"]["fallbackReason"]  # the reason, for operators
    assert "[99]" not in out["reply"]["content"] and meta["invalidCitations"] == 0
    assert meta["citations"] and all(1 <= c["n"] <= 5 for c in meta["citations"])


def test_embedder_failure_still_answers_and_keeps_the_message(api: Api) -> None:
    original = api.services.embedder
    broken = type(original)()
    broken.fail_with = RuntimeError("embedding service exploded")  # type: ignore[attr-defined]
    api.services.embedder = broken
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        out = api.send(h, conv, "How do I update the room panel firmware?")
    finally:
        api.services.embedder = original
    stored = api.messages(conv)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    meta = out["reply"]["meta"]
    # no query vector: retrieval fell back to the lexical ranker, and the trace says why
    assert meta["retrievalErrors"] == ["embed: RuntimeError: embedding service exploded"]
    assert meta["passageCount"] > 0


@pytest.mark.parametrize(
    ("text", "status"),
    [("", 422), ("   \n\t ", 422), ("\x00\x01", 422), ("x" * 20_000, 413)],
)
def test_bad_messages_get_clear_4xx_and_store_nothing(api: Api, text: str, status: int) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    r = api.client.post(f"/v1/conversations/{conv}/messages", headers=h, json={"content": text})
    assert r.status_code == status
    assert "message" in r.json()["detail"]
    assert api.messages(conv) == []


@pytest.mark.parametrize(
    "body",
    [
        '{"content": "\\ud83d\\ude42\\ud83d\\ude42"}',  # emoji only
        '{"content": "Wie setze ich mein Passwort zur\\u00fcck?"}',  # another language
        '{"content": "reset \\ud800 password"}',  # an unpaired surrogate
    ],
)
def test_odd_but_valid_messages_get_a_reply(api: Api, body: str) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    r = api.client.post(
        f"/v1/conversations/{conv}/messages",
        headers={**h, "Content-Type": "application/json"},
        content=body,
    )
    assert r.status_code == 200, r.text
    assert r.json()["reply"]["content"]
    stored = api.messages(conv)
    assert [m["seq"] for m in stored] == [1, 2]
    assert "\ud800" not in stored[0]["content"]


def test_sse_stream_meta_deltas_done(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    events = api.stream(h, conv, "How do I update the room panel firmware?")
    names = [e for e, _ in events]
    assert names[0] == "meta" and names[-1] == "done" and "delta" in names
    assert set(names) <= {"meta", "delta", "done"}
    # the first event only says the message is stored (sent before any slow work) ...
    first = events[0][1]
    assert first["stage"] == "stored" and "intent" not in first
    assert first["userMessage"] == {"id": api.messages(conv)[-2]["_id"], "seq": 1}
    # ... and the analysis follows in a second meta event, before the answer
    analysis = next(d for e, d in events[1:] if e == "meta")
    assert analysis["intent"] and analysis["condensedQuestion"]
    text = "".join(d["text"] for e, d in events if e == "delta")
    done = events[-1][1]["message"]
    assert done["content"].replace(" ", "") == text.replace(" ", "")
    assert api.messages(conv)[-1]["content"] == done["content"]


def test_facts_and_summary_keep_identifiers(api: Api, rerank_scores) -> None:  # type: ignore[no-untyped-def]
    rerank_scores(0.9)
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    api.send(h, conv, "My order ORD-1003 has a room panel showing AUTH_302")
    for i in range(11):
        api.send(h, conv, f"how do I book meeting room {i}?")
    stored = api.run(api.services.store.conversations.get, conv)
    values = {f["value"] for f in stored.facts}
    assert {"ORD-1003", "AUTH_302"} <= values
    assert stored.turn_count == 12
    # the summary runs off the request path; wait for it
    import time

    for _ in range(50):
        stored = api.run(api.services.store.conversations.get, conv)
        if stored.summary:
            break
        time.sleep(0.05)
    # turns 1-6 are folded into the summary; turns 7-12 stay verbatim, never summarised twice
    assert "ORD-1003" in stored.summary and stored.summarized_through_seq == 12
    assert "meeting room 10" not in stored.summary
    # the conversation document itself does not grow with what is remembered
    doc = api.conversation_doc(conv)
    assert not {"facts", "summary", "summarizedThroughSeq"} & set(doc)


def test_an_amount_is_written_in_the_tenants_currency(api: Api) -> None:
    from app.turn.tools import SessionTools

    store = api.services.store
    assert SessionTools(store, None, currency="USD")._money(1116000) == "$11,160.00"
    assert SessionTools(store, None, currency="CHF")._money(4550) == "45.50 CHF"
    assert SessionTools(store, None)._money(4550) == "45.50"  # no currency named: a bare number
