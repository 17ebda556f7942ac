"""`LLM=openai` end to end: the app built from settings pointing at the fake Chat Completions
server on 127.0.0.1, driven through the HTTP API; what was stored, billed and reported."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.providers.chat.openai import OpenAIChatModel
from app.providers.rerank.fake import FakeReranker
from app.services import probe_providers
from tests.apihelp import ADMIN, Api, running_app
from tests.fake_openai_server import API_KEY, MODEL, FakeOpenAI, Hang, Text, Tools
from tuning import TUNING

FAST = dataclasses.replace(
    TUNING,
    condense_budget_seconds=2.0,
    condense_fallback_reserve_seconds=0.5,
    generation_round_budget_seconds=1.5,
    provider_min_attempt_seconds=0.1,
    provider_circuit_open_seconds=0.0,  # each test meets the server afresh
)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI().running() as fake:
        yield fake


@pytest.fixture(scope="module")
def api(server: FakeOpenAI) -> Iterator[Api]:
    with running_app(
        tuning=FAST,
        llm="openai",
        openai_base_url=server.base_url,
        openai_model=MODEL,
        openai_api_key=API_KEY,
        openai_price_input_per_mtok_usd=1.0,
        openai_price_output_per_mtok_usd=4.0,
    ) as api:
        yield api


@pytest.fixture
def fake(server: FakeOpenAI, api: Api) -> Iterator[FakeOpenAI]:
    server.reset()
    original = api.services.reranker
    api.services.reranker = FakeReranker(scores={"": 0.9}, calibration="offline")
    yield server
    api.services.reranker = original


def answer_body(fake: FakeOpenAI) -> dict[str, Any]:
    return next(b for b in fake.bodies if "response_format" not in b)


def test_the_app_builds_the_adapter_from_settings_and_probes_it(api: Api) -> None:
    assert isinstance(api.services.chat_model, OpenAIChatModel)
    chat = api.client.get("/readyz").json()["providers"]["chat"]
    assert chat["ok"] is True and chat["model"] == MODEL
    assert chat["pricing"].startswith("USD per million tokens: input 1")


def test_a_streamed_turn_is_condensed_answered_and_billed(api: Api, fake: FakeOpenAI) -> None:
    before = api.run(api.services.store.spend.counters_today)
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    events = api.stream(h, conv, "How do I update the room panel firmware?")
    deltas = [data for name, data in events if name == "delta"]
    stored = [data for name, data in events if name == "done"][-1]["message"]
    meta = stored["meta"]
    assert meta["model"] == f"openai:{MODEL}" and meta["stopReason"] == "end_turn"
    assert meta["condensation"]["source"] == "model"
    assert meta["condensation"].get("fallbackReason") is None
    assert len(deltas) > 1  # streamed in pieces, as the server sent them
    assert stored["content"].endswith("[1]") and meta["citations"]
    condense, answer = fake.bodies
    assert condense["response_format"]["type"] == "json_schema"
    assert answer["stream"] is True and '<passage n="1"' in answer["messages"][1]["content"]
    assert meta["tokens"]["calls"] == 1 and meta["tokens"]["input"] > 0
    after = api.run(api.services.store.spend.counters_today)
    assert after["calls"] - before["calls"] == 2  # condensation and answer, both metered
    assert after["inputTokens"] > before["inputTokens"]
    spend = api.client.get("/v1/admin/metrics", headers=ADMIN).json()["spend"]
    assert spend["usd"] > 0


def test_the_model_calls_a_session_tool_and_only_sees_this_customers_order(
    api: Api, fake: FakeOpenAI
) -> None:
    fake.add(
        Text(
            '{"standaloneQuestion": "What is the status of my kiosk order?", "intent": '
            '"order_status", "needsRetrieval": false, "needsTools": [], "sentiment": "neutral", '
            '"mentionedOrderId": null, "explicitHumanRequest": false}'
        ),
        Tools([("lookupOrder", {"orderRef": "ORD-1003"})]),
        Text("Your order ORD-1003 shipped with FedEx."),
    )
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "what's happening with my kiosk order ORD-1003")
    meta = out["reply"]["meta"]
    assert {"tool": "lookupOrder", "ok": True, "found": True} in [
        {k: t[k] for k in ("tool", "ok", "found")} for t in meta["tools"]
    ]
    assert out["reply"]["content"] == "Your order ORD-1003 shipped with FedEx."
    tool_message = fake.bodies[2]["messages"][-1]
    assert tool_message["role"] == "tool" and "774120598833" in tool_message["content"]
    assert "cus_castellan" not in tool_message["content"]  # the customer id is projected out


def test_a_server_that_ignores_response_format_still_condenses(api: Api, fake: FakeOpenAI) -> None:
    fake.dialect.ignore_response_format = True
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "How do I pair a desk tag?")
    cond = out["reply"]["meta"]
    assert cond["condensedQuestion"] == "How do I pair a desk tag?"
    stored = api.messages(conv)[-1]["meta"]["condensation"]
    assert stored["source"] == "model" and stored["fallbackReason"] is None


def test_a_hung_server_falls_back_offline_within_budget_and_says_why(
    api: Api, fake: FakeOpenAI
) -> None:
    fake.add(Hang(), Hang(), Hang())
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "How do I update the room panel firmware?")
    assert out["reply"]["content"]  # answered offline
    stored = api.messages(conv)[-1]["meta"]
    assert stored["condensation"]["source"] == "offline"
    assert stored["condensation"]["fallbackReason"].startswith("model_error")
    assert "timed out" in stored["fallbackReason"] or "timeout" in stored["fallbackReason"]
    assert not stored["model"].startswith("openai:")
    # a bound far above the stage budgets (2 s condense + 1.5 s per round), not a measurement
    assert stored["latencyMs"]["total"] < FAST.turn_budget_seconds * 1000


def test_a_bad_key_shows_in_readyz(api: Api, server: FakeOpenAI) -> None:
    """The start-up probe's GET /models answers 401: /readyz names the configuration error."""
    original = api.services.chat_model
    api.services.chat_model = OpenAIChatModel(
        base_url=server.base_url, model=MODEL, api_key="sk-revoked"
    )
    try:
        api.run(probe_providers, api.services)
        ready = api.client.get("/readyz")
    finally:
        bad = api.services.chat_model
        api.services.chat_model = original
        api.run(bad.aclose)  # type: ignore[attr-defined]
    assert ready.status_code == 200  # degraded: answers fall back offline meanwhile
    body = ready.json()
    assert body["degraded"] == ["chat"]
    assert "invalid_api_key" in body["providers"]["chat"]["configError"]
    assert "HTTP 401" in body["providers"]["chat"]["configError"]


def test_summaries_are_written_by_the_server_and_metered(api: Api, fake: FakeOpenAI) -> None:
    from app.turn import engine

    h = api.session("cus_castellan")
    conv = api.conversation(h)
    for i in range(8):  # enough turns that some have left the verbatim window
        api.send(h, conv, f"Question number {i} about the room panel?")
    fake.reset()
    fake.add(Text("The customer asked about the room panel."))
    spend = api.services.store.spend
    before = api.run(spend.counters_today)

    async def summarize_now() -> None:
        await api.services.store.conversations.update(conv, {"summarized_through_seq": 0})
        await engine._summarize(api.services, conv)

    api.run(summarize_now)
    stored = api.run(api.services.store.conversations.get, conv)
    assert stored is not None
    assert stored.summary.startswith("The customer asked about")
    (body,) = fake.bodies
    assert "stream" not in body and "<transcript>" in body["messages"][1]["content"]
    after = api.run(spend.counters_today)
    assert after["calls"] - before["calls"] == 1 and after["outputTokens"] > before["outputTokens"]


def test_a_bad_key_at_start_is_in_readyz_without_any_turn(server: FakeOpenAI) -> None:
    """The real wiring: the start-up probe (GET /models) meets a 401 before any customer."""
    server.reset()
    with running_app(
        tuning=FAST,
        llm="openai",
        openai_base_url=server.base_url,
        openai_model=MODEL,
        openai_api_key="sk-revoked",
    ) as app:
        for _ in range(200):
            chat = app.client.get("/readyz").json()["providers"]["chat"]
            if chat["configError"]:
                break
            time.sleep(0.05)
    assert "HTTP 401" in chat["configError"] and chat["ok"] is False
    assert [s.path for s in server.seen] == ["/v1/models"]
    assert chat["pricing"].startswith("unknown")  # no OPENAI_PRICE_* given
