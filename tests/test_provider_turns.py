"""Providers inside whole turns, through the HTTP API: a Voyage server that never answers, a
refusal, summaries under the spend cap, configuration errors and cache counters in /readyz and
the admin metrics."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from app.providers.budget import RetryPolicy
from app.providers.chat.base import GenerationReply, Usage
from app.providers.chat.fake import ScriptedChatModel
from app.providers.embeddings.voyage import VoyageEmbedder
from app.providers.rerank.fake import FakeReranker
from app.providers.rerank.voyage import VoyageReranker
from app.providers.voyage_connection import VoyageConnection
from app.services import probe_providers
from app.turn import engine
from tests.apihelp import ADMIN, Api, running_app
from tests.fake_anthropic import Hang, MessagesAPI, message, sse, tool_use
from tests.fake_voyage import API_KEY, FakeVoyage
from tuning import TUNING

# Small stage budgets so a hung provider costs a test a second, not the production 2 + 3 s.
FAST = dataclasses.replace(
    TUNING,
    condense_budget_seconds=2.0,
    condense_fallback_reserve_seconds=0.5,
    retrieve_budget_seconds=2.0,
    embed_budget_seconds=0.5,
    rerank_budget_seconds=0.5,
    provider_min_attempt_seconds=0.1,
)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(tuning=FAST) as api:
        yield api


def strong_passages(api: Api) -> None:
    api.services.reranker = FakeReranker(scores={"": 0.9}, calibration="offline")


def test_a_voyage_server_that_never_answers_costs_one_stage_budget(api: Api) -> None:
    """Item 1 / acceptance: router, retrieval and reranker all on a Voyage server that never
    answers; the turn completes with the fallbacks and the trace says why."""
    fake = FakeVoyage().script(*["hang"] * 6)
    served: AbstractAsyncContextManager[FakeVoyage] = fake.serve()
    api.run(served.__aenter__)
    conn = VoyageConnection(API_KEY, base_url=fake.base_url, retry=RetryPolicy.from_tuning(FAST))
    voyage = VoyageEmbedder(conn, model="voyage-3.5", dimensions=256)
    router = api.services.router
    original = (api.services.embedder, api.services.reranker, router.embedder)
    api.services.embedder = router.embedder = voyage
    api.services.reranker = VoyageReranker(conn)
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        first = api.send(h, conv, "How do I update the room panel firmware?")
        second = api.send(h, conv, "And how do I reset the room panel?")
    finally:
        api.services.embedder, api.services.reranker, router.embedder = original
        api.run(conn.aclose)
        api.run(served.__aexit__, None, None, None)
    # one request reached the server: the router's, which timed out after the condense budget;
    # then the circuit opened and everything else in both turns fell back at once
    assert len(fake.requests) == 1
    assert conn.health.failures["timeout"] == 1 and conn.health.failures["circuit_open"] >= 4
    for out in (first, second):
        meta = out["reply"]["meta"]
        errors = meta["retrievalErrors"]
        assert any(e.startswith("embed: ProviderError: voyage skipped") for e in errors), errors
        assert any(e.startswith("rerank: ProviderError: voyage skipped") for e in errors), errors
        assert meta["passageCount"] > 0  # the lexical ranker answered without a query vector
        assert meta["confidence"] == "none"  # unscored passages are not evidence
        assert out["reply"]["content"]  # an honest reply, stored
        # a bound far above the stage budgets, not a timing measurement: without deadlines the
        # SDK would have waited 600 s per call
        assert meta["latencyMs"]["total"] < FAST.turn_budget_seconds * 1000


def test_a_refused_answer_is_not_stored_and_the_turn_fails(api: Api) -> None:
    refusal = GenerationReply("No. [1]", Usage(output=5, calls=1), "anthropic:test", (), "refusal")
    original = (api.services.chat_model, api.services.reranker)
    api.services.chat_model = ScriptedChatModel.always(refusal, name="anthropic:test")
    strong_passages(api)
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        out = api.send(h, conv, "How do I update the room panel firmware?")
    finally:
        api.services.chat_model, api.services.reranker = original
    meta = out["reply"]["meta"]
    assert meta["confidence"] == "strong" and meta["stopReason"] == "refusal"
    assert "No. [1]" not in out["reply"]["content"]
    assert meta["failedTurns"] == 1  # a strong passage, but no answer: the turn failed
    assert api.conversation_doc(conv)["failedTurns"] == 1


def test_summaries_are_metered_and_respect_the_spend_cap() -> None:
    """Issue 13's item and item 6: a summary is a paid call like the others."""
    with running_app(tuning=FAST) as api:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        for i in range(8):  # offline turns: enough history for a summary to absorb
            api.send(h, conv, f"Question number {i} about the room panel?")
        summary = GenerationReply(
            "The customer asked about the room panel.",
            Usage(input=300, output=40, calls=1),
            "anthropic:test",
            (),
            "end_turn",
        )
        model = ScriptedChatModel.always(summary, name="anthropic:test")
        api.services.chat_model = model
        spend = api.services.store.spend

        async def summarize_now() -> None:
            await api.services.store.conversations.update(conv, {"summarized_through_seq": 0})
            await engine._summarize(api.services, conv)

        api.run(summarize_now)
        counters = api.run(spend.counters_today)
        assert len(model.requests) == 1
        assert counters["calls"] == 1 and counters["inputTokens"] == 300
        stored = api.run(api.services.store.conversations.get, conv)
        assert stored is not None and stored.summary.startswith("The customer asked")

        api.run(spend.add, TUNING.daily_spend_cap_usd + 1, 0, 0)  # over the cap
        api.run(summarize_now)
        assert len(model.requests) == 1  # not called again: the extractive summary was used
        assert api.run(spend.counters_today)["calls"] == 1


def test_a_summary_that_never_comes_ends_at_the_summary_budget(api: Api) -> None:
    """Item 6: a summary call has a deadline of its own (`summary_budget_seconds`), not the turn's
    and not the SDK's 600 s; past it the extractive summary is stored and nothing is billed."""
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    for question in ("Where is ORD-1042?", "And how do I reset the room panel?"):
        api.send(h, conv, question)
    fake = MessagesAPI().add(Hang())
    original = (api.services.chat_model, api.services.tuning)
    api.services.chat_model = fake.model(retry=RetryPolicy.from_tuning(FAST))
    # one verbatim turn, so the first of the two is summarised now
    api.services.tuning = dataclasses.replace(FAST, summary_budget_seconds=1.0, verbatim_turns=1)
    before = api.run(api.services.store.spend.counters_today)

    async def summarize_now() -> None:
        await api.services.store.conversations.update(conv, {"summarized_through_seq": 0})
        await asyncio.wait_for(engine._summarize(api.services, conv), timeout=20)

    try:
        api.run(summarize_now)
    finally:
        api.services.chat_model, api.services.tuning = original
    assert len(fake.bodies) == 1  # asked once, given up on at the budget (no SDK retry loop)
    stored = api.run(api.services.store.conversations.get, conv)
    assert stored is not None
    assert stored.summary.startswith("#1 customer: Where is ORD-1042?")  # the extractive one
    assert api.run(api.services.store.spend.counters_today)["calls"] == before["calls"]


def test_a_rejected_key_shows_in_readyz_and_the_admin_metrics(api: Api) -> None:
    """Item 6: a revoked key no longer turns the service offline silently."""
    fake = MessagesAPI()
    original = api.services.chat_model
    api.services.chat_model = fake.model(api_key="sk-ant-revoked")  # the fake answers 401
    try:
        api.run(probe_providers, api.services)
        ready = api.client.get("/readyz")
        metrics = api.client.get("/v1/admin/metrics", headers=ADMIN).json()
    finally:
        api.services.chat_model = original
    assert ready.status_code == 200  # degraded (offline answers), not out of rotation
    body = ready.json()
    assert body["degraded"] == ["chat"]
    assert "authentication_error" in body["providers"]["chat"]["configError"]
    assert metrics["providers"]["chat"]["ok"] is False
    assert fake.bodies == []  # the probe is a (free) token count, not a message


def test_the_probe_measures_the_cacheable_prefix(api: Api) -> None:
    fake = MessagesAPI()
    original = api.services.chat_model
    api.services.chat_model = model = fake.model()
    try:
        api.run(probe_providers, api.services)
        view = api.client.get("/readyz").json()["providers"]["chat"]
    finally:
        api.services.chat_model = original
    tokens = view["prefixTokens"]
    assert tokens["signedIn"] > tokens["anonymous"] > 0 and tokens["condense"] > 0
    assert view["cacheMinTokens"] == model.capabilities.cache_min_tokens
    assert view["prefixCacheable"] == {k: v >= view["cacheMinTokens"] for k, v in tokens.items()}
    assert len(fake.counted) == 3


def test_admin_metrics_report_cache_tokens_and_alert_when_reads_stay_zero() -> None:
    with running_app(tuning=FAST) as api:
        spend = api.services.store.spend

        def cache() -> dict[str, Any]:
            r = api.client.get("/v1/admin/metrics", headers=ADMIN)
            assert r.status_code == 200
            return dict(r.json()["spend"]["cache"])

        assert cache()["alert"] is None
        calls = FAST.cache_read_alert_calls
        api.run(_add, spend, calls, 0, 2100)  # eligible calls that only ever wrote
        first = cache()
        assert first["eligibleCalls"] == calls and first["creationInputTokens"] == 2100
        assert first["alert"] and "not working" in first["alert"]
        api.run(_add, spend, 1, 2100, 0)  # one read: caching works
        assert cache()["alert"] is None and cache()["readInputTokens"] == 2100


async def _add(spend: Any, eligible: int, read: int, write: int) -> None:
    await spend.add(
        0.0, 0, 0, cache_read=read, cache_write=write, calls=eligible, cache_eligible_calls=eligible
    )
    await asyncio.sleep(0)


def test_a_whole_turn_over_the_wire_format_fake(api: Api) -> None:
    """Condensation (forced JSON tool) and a streamed answer through the Anthropic adapter and
    the wire-format fake: what was stored, and what was billed."""
    condensed = {
        "standaloneQuestion": "How do I update the Room Panel firmware?",
        "intent": "how_to",
        "needsRetrieval": True,
        "needsTools": [],
        "sentiment": "neutral",
        "mentionedOrderId": None,
        "explicitHumanRequest": False,
    }
    fake = MessagesAPI().add(
        message(tool_use("record_output", condensed), stop_reason="tool_use"),
        sse("Open the admin console and start the update [1].", "It takes a few minutes [1]."),
    )
    original = (api.services.chat_model, api.services.reranker)
    api.services.chat_model = fake.model()
    strong_passages(api)
    before = api.run(api.services.store.spend.counters_today)
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        events = api.stream(h, conv, "how do i update the panel firmware")
    finally:
        api.services.chat_model, api.services.reranker = original
    done = [data for name, data in events if name == "done"][-1]
    stored = done["message"]
    meta = stored["meta"]
    assert meta["model"].startswith("anthropic:") and meta["stopReason"] == "end_turn"
    assert meta["condensation"]["source"] == "model"
    assert meta["condensedQuestion"] == condensed["standaloneQuestion"]
    assert stored["content"].endswith("It takes a few minutes [1].")
    # the prefix (tools + instructions + tenant reference) reaches Sonnet 4.6's minimum
    assert meta["tokens"]["calls"] == 1 and meta["tokens"]["cacheEligibleCalls"] == 1
    condense_body, answer_body = fake.bodies
    assert condense_body["tool_choice"] == {"type": "tool", "name": "record_output"}
    assert answer_body["stream"] is True
    assert answer_body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    after = api.run(api.services.store.spend.counters_today)
    assert after["calls"] - before["calls"] == 2  # the condensation and the answer, both billed
