"""The Anthropic adapter against a fake Messages API that speaks the wire format
(tests/fake_anthropic.py), with the retry settings production uses: what it sends, what it makes
of replies, streams and stop reasons, how failures and deadlines come out."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx2
import pytest

from app.providers import budget
from app.providers.chat import build_chat_model
from app.providers.chat.anthropic import AnthropicChatModel
from app.providers.chat.base import ChatMessage, StreamDone, TextDelta
from app.providers.chat.models import ModelCapabilities, capabilities_for, json_mode
from app.providers.errors import ProviderConfigError, ProviderError
from app.settings import Settings
from app.turn.prompt import SYSTEM_PROMPT, build_request
from app.turn.tools import TOOL_SPECS
from tests.fake_anthropic import (
    MODEL,
    Hang,
    MessagesAPI,
    error_response,
    message,
    redacted_thinking,
    sse,
    text_block,
    thinking_block,
    tool_use,
)
from tests.fakes_chat import AUTH_302, ORDER, RecordingTools

CONDENSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "standaloneQuestion": {"type": "string"},
        "intent": {"type": "string"},
        "needsRetrieval": {"type": "boolean"},
    },
    "required": ["standaloneQuestion", "intent", "needsRetrieval"],
}
SMALL_CACHE_MODEL = "claude-sonnet-5"  # documented 1,024-token cache minimum
THINKING_MODEL = "claude-opus-4-1"  # manual thinking ({"type": "enabled"}), 1,024 minimum


def schema_keys(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON schema."""
    keys: set[str] = set()
    if isinstance(schema, dict):
        for name, value in schema.items():
            if name == "properties" and isinstance(value, dict):
                keys |= set(value)
            keys |= schema_keys(value)
    elif isinstance(schema, list):
        for value in schema:
            keys |= schema_keys(value)
    return keys


def signed_in(question: str = "where is ORD-1042", **kw: Any) -> Any:
    tools = kw.pop("tools", RecordingTools({"lookupOrder": ORDER}))
    return build_request(question=question, tools=TOOL_SPECS, tool_runner=tools, **kw)


# --------------------------------------------------------------------------- basics


async def test_generate_sends_the_prompt_and_records_usage() -> None:
    api = MessagesAPI().add(message(text_block("AUTH_302 means the signature failed [1].")))
    request = build_request(question="What is AUTH_302?", passages=[AUTH_302])
    reply = await api.model().generate(request)
    assert reply.text == "AUTH_302 means the signature failed [1]."
    assert reply.model == f"anthropic:{MODEL}" and reply.stop_reason == "end_turn"
    assert reply.usage.input > 0 and reply.usage.output > 0 and reply.usage.calls == 1
    (body,) = api.bodies
    assert body["model"] == MODEL
    assert body["system"][0]["text"] == SYSTEM_PROMPT
    assert body["messages"] == [{"role": "user", "content": request.messages[0].content}]
    assert "tools" not in body  # no runner, no tools
    assert api.headers[0]["x-stainless-retry-count"] == "0"


# --------------------------------------------------------------------------- caching (item 2)


async def test_no_cache_breakpoint_is_claimed_below_the_models_minimum() -> None:
    """The anonymous generation prefix (system only) is far below Sonnet 4.6's minimum: marking
    it would claim a cache the API never creates."""
    api = MessagesAPI().add(message(text_block("a")), message(text_block("b")))
    model = api.model()
    assert model.prefix_tokens(SYSTEM_PROMPT) < model.capabilities.cache_min_tokens
    first = await model.generate(build_request(question="q1"))
    second = await model.generate(build_request(question="q2"))
    for body in api.bodies:
        assert "cache_control" not in body["system"][0]
    for reply in (first, second):
        assert reply.usage.cache_read == reply.usage.cache_write == 0
        assert reply.usage.cache_eligible_calls == 0


async def test_a_prefix_above_the_minimum_is_cached_then_read() -> None:
    """Tools + system for a signed-in customer reach a 1,024-token minimum: the breakpoint is
    sent, the first call writes the cache and the next one reads it."""
    api = MessagesAPI().add(message(text_block("one")), message(text_block("two")))
    model = api.model(model=SMALL_CACHE_MODEL)
    assert model.prefix_tokens(SYSTEM_PROMPT, TOOL_SPECS) >= 1024
    first = await model.generate(signed_in("q1"))
    second = await model.generate(signed_in("q2"))
    for body in api.bodies:
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first.usage.cache_write > 0 and first.usage.cache_read == 0
    assert second.usage.cache_read == first.usage.cache_write and second.usage.cache_write == 0
    assert first.usage.cache_eligible_calls == second.usage.cache_eligible_calls == 1


async def test_the_token_counting_endpoint_measures_the_prefix() -> None:
    api = MessagesAPI()
    model = api.model(model=SMALL_CACHE_MODEL)
    estimate = model.prefix_tokens(SYSTEM_PROMPT, TOOL_SPECS)
    measured = await model.measure_prefix(SYSTEM_PROMPT, TOOL_SPECS)
    assert model.prefix_tokens(SYSTEM_PROMPT, TOOL_SPECS) == measured
    assert estimate <= measured  # the documented estimate undercounts, never overclaims
    (counted,) = api.counted
    assert counted["model"] == SMALL_CACHE_MODEL and len(counted["tools"]) == len(TOOL_SPECS)


def test_capabilities_are_declared_per_model() -> None:
    assert capabilities_for("claude-sonnet-4-6").cache_min_tokens == 2048
    assert capabilities_for("claude-sonnet-4-5-20250929").cache_min_tokens == 1024
    assert capabilities_for("claude-sonnet-5-5").cache_min_tokens == 1024
    assert capabilities_for("claude-haiku-4-5").cache_min_tokens == 4096
    unknown = capabilities_for("some-future-model")
    assert not unknown.thinking and unknown.cache_min_tokens == 4096
    caps = capabilities_for(MODEL)
    assert json_mode(caps, thinking=False) == "forced_tool"
    assert json_mode(caps, thinking=True) == "output_format"  # never a forced tool + thinking
    no_format = ModelCapabilities(True, True, False, 1024)
    assert json_mode(no_format, thinking=True) == "auto_tool"


# --------------------------------------------------------------------------- tools and echoes


async def test_tool_use_round_trip_runs_tools_through_the_session_runner() -> None:
    api = MessagesAPI().add(
        message(
            text_block("Let me look."),
            tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
            stop_reason="tool_use",
        ),
        message(text_block("ORD-1042 shipped with UPS.")),
    )
    tools = RecordingTools({"lookupOrder": ORDER})
    reply = await api.model().generate(signed_in(tools=tools))
    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-1042"})]
    assert reply.text == "Let me look.\n\nORD-1042 shipped with UPS."
    assert [c.trace() for c in reply.tool_calls] == [
        {"tool": "lookupOrder", "ok": True, "found": True}
    ]
    assert reply.usage.calls == 2
    for body in api.bodies:
        assert [t["name"] for t in body["tools"]] == [t["name"] for t in TOOL_SPECS]
        assert not any("customer" in k.lower() for k in schema_keys(body["tools"]))
        assert "tool_choice" not in body
    second = api.bodies[1]
    assert second["messages"][1]["content"][1] == tool_use("lookupOrder", {"orderRef": "ORD-1042"})
    (result,) = second["messages"][2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01"
    assert result["is_error"] is False
    assert json.loads(result["content"])["data"]["tracking"] == "1Z999AA10123456784"


async def test_empty_text_blocks_are_never_echoed() -> None:
    """Item 5: the API rejects empty text blocks in a request."""
    api = MessagesAPI().add(
        message(
            text_block(""),
            tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
            stop_reason="tool_use",
        ),
        message(text_block("Shipped.")),
    )
    await api.model().generate(signed_in())
    echoed = api.bodies[1]["messages"][1]["content"]
    assert [b["type"] for b in echoed] == ["tool_use"]


async def test_thinking_blocks_are_echoed_unchanged_and_requested_from_capabilities() -> None:
    """Item 5: with thinking on, the tool loop must send thinking blocks back byte for byte."""
    api = MessagesAPI().add(
        message(
            thinking_block("The customer wants ORD-1042; look it up."),
            redacted_thinking(),
            tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
            stop_reason="tool_use",
        ),
        message(text_block("It shipped.")),
    )
    model = api.model(model=THINKING_MODEL, thinking_budget_tokens=2000)
    reply = await model.generate(signed_in())
    assert reply.text == "It shipped."
    first, second = api.bodies
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert first["max_tokens"] > 2000  # max_tokens must exceed the thinking budget
    assert second["messages"][1]["content"] == [
        thinking_block("The customer wants ORD-1042; look it up."),
        redacted_thinking(),
        tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
    ]


async def test_tool_rounds_are_capped_then_text_is_forced() -> None:
    looping = message(tool_use("listRecentOrders", {"limit": 3}), stop_reason="tool_use")
    api = MessagesAPI().add(looping, message(text_block("Here are your orders.")))
    tools = RecordingTools()  # knows no tools: every call is an ok=False result
    request = dataclasses.replace(signed_in("orders?", tools=tools), max_tool_rounds=1)
    reply = await api.model().generate(request)
    assert len(tools.calls) == 1
    assert reply.text == "Here are your orders."
    assert "tool_choice" not in api.bodies[0]
    assert api.bodies[1]["tool_choice"] == {"type": "none"}
    assert api.bodies[1]["messages"][2]["content"][0]["is_error"] is True


async def test_tool_runner_failures_are_not_provider_failures() -> None:
    api = MessagesAPI().add(
        message(tool_use("lookupOrder", {"orderRef": "ORD-1042"}), stop_reason="tool_use")
    )

    async def store_down(name: str, args: dict[str, Any]) -> Any:
        raise ConnectionError("store unreachable")

    with pytest.raises(ConnectionError):
        await api.model().generate(signed_in(tools=store_down))


# --------------------------------------------------------------------------- JSON mode


async def test_complete_json_forces_the_record_tool() -> None:
    data = {"standaloneQuestion": "Where is ORD-1042?", "intent": "order_status"}
    api = MessagesAPI().add(
        message(
            tool_use("record_output", {**data, "needsRetrieval": False}), stop_reason="tool_use"
        )
    )
    reply = await api.model().complete_json(
        "condense", [ChatMessage("user", "where's my order")], CONDENSE_SCHEMA
    )
    assert reply.data == {**data, "needsRetrieval": False}
    (body,) = api.bodies
    assert body["tool_choice"] == {"type": "tool", "name": "record_output"}
    assert body["tools"][0]["input_schema"] == CONDENSE_SCHEMA


async def test_complete_json_never_combines_a_forced_tool_with_thinking() -> None:
    """Item 5: the API rejects tool_choice tool/any while thinking is on."""
    api = MessagesAPI().add(
        message(tool_use("record_output", {"intent": "other"}), stop_reason="tool_use")
    )
    model = api.model(model=SMALL_CACHE_MODEL, thinking_budget_tokens=2000)
    await model.complete_json("s", [ChatMessage("user", "x")], CONDENSE_SCHEMA)
    (body,) = api.bodies
    assert "thinking" not in body and body["tool_choice"]["type"] == "tool"


async def test_complete_json_with_the_structured_output_format() -> None:
    caps = ModelCapabilities(True, False, True, 1024)  # a model without forced tool choice
    api = MessagesAPI().add(message(text_block('{"intent": "how_to"}')))
    reply = await api.model(capabilities=caps).complete_json(
        "s", [ChatMessage("user", "x")], CONDENSE_SCHEMA
    )
    assert reply.data == {"intent": "how_to"}
    (body,) = api.bodies
    assert body["output_config"]["format"]["schema"] == CONDENSE_SCHEMA and "tools" not in body


@pytest.mark.parametrize(
    "reply",
    [
        message(text_block("{not json")),
        message(tool_use("record_output", "a string"), stop_reason="tool_use"),
        message(tool_use("record_output", {"intent": "oth"}), stop_reason="max_tokens"),
        message(text_block("I can't help with that."), stop_reason="refusal"),
        {"garbage": True},
    ],
)
async def test_complete_json_without_a_whole_object_is_a_provider_error(reply: Any) -> None:
    api = MessagesAPI().add(reply)
    with pytest.raises(ProviderError):
        await api.model().complete_json("s", [ChatMessage("user", "x")], CONDENSE_SCHEMA)


# --------------------------------------------------------------------------- streams (item 7)


async def test_stream_yields_deltas_then_the_final_reply() -> None:
    api = MessagesAPI().add(sse("AUTH_302 means the signature failed [1]."))
    request = build_request(question="What is AUTH_302?", passages=[AUTH_302])
    events = [e async for e in api.model().stream(request)]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 3  # the fake splits the text into three deltas (pings in between)
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert "".join(deltas) == done.reply.text == "AUTH_302 means the signature failed [1]."
    assert done.reply.usage.output > 0 and api.bodies[0]["stream"] is True


async def test_stream_with_split_tool_input_and_thinking() -> None:
    """Tool input arrives as input_json_delta chunks starting with an empty one."""
    api = MessagesAPI().add(
        sse(
            thinking="Look the order up.",
            tool=tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
        ),
        sse("It shipped ", "on 2026-07-03."),
    )
    tools = RecordingTools({"lookupOrder": ORDER})
    model = api.model(model=SMALL_CACHE_MODEL, thinking_budget_tokens=1024)
    events = [e async for e in model.stream(signed_in("ORD-1042?", tools=tools))]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "It shipped \n\non 2026-07-03." or text == "It shipped on 2026-07-03."
    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-1042"})]
    echoed = api.bodies[1]["messages"][1]["content"]
    assert echoed[0] == thinking_block("Look the order up.")
    assert echoed[1]["input"] == {"orderRef": "ORD-1042"}


async def test_an_error_event_mid_stream_is_reported_by_its_type() -> None:
    """Item 6: an `error` event inside an HTTP 200 stream is not 'HTTP 200'."""
    api = MessagesAPI().add(sse("The answer starts", error="overloaded_error"))
    events: list[Any] = []
    with pytest.raises(ProviderError) as caught:
        async for e in api.model().stream(build_request(question="q")):
            events.append(e)
    assert caught.value.kind == "overloaded_error"
    assert "200" not in str(caught.value)
    assert events  # text had been shown, so it was not retried
    assert len(api.bodies) == 1


async def test_an_error_event_before_any_text_is_retried() -> None:
    api = MessagesAPI().add(sse(error="overloaded_error"), sse("Fine now."))
    events = [e async for e in api.model().stream(build_request(question="q"))]
    assert isinstance(events[-1], StreamDone) and events[-1].reply.text == "Fine now."
    assert len(api.bodies) == 2


@pytest.mark.parametrize("stop", ["refusal", "max_tokens"])
async def test_refusal_and_max_tokens_stops_reach_the_caller(stop: str) -> None:
    api = MessagesAPI().add(sse("Half an answer. And then", stop_reason=stop))
    events = [e async for e in api.model().stream(build_request(question="q"))]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.reply.stop_reason == stop


async def test_pause_turn_is_continued() -> None:
    api = MessagesAPI().add(
        message(text_block("Part one,"), stop_reason="pause_turn"),
        message(text_block(" part two.")),
    )
    reply = await api.model().generate(build_request(question="q"))
    assert reply.text == "Part one, part two." and reply.stop_reason == "end_turn"
    second = api.bodies[1]
    assert second["messages"][-1] == {"role": "assistant", "content": [text_block("Part one,")]}


# --------------------------------------------------------------------------- failures, retries


@pytest.mark.parametrize(
    ("responses", "error", "kind", "requests"),
    [
        ([error_response(529, "Overloaded")] * 2, ProviderError, "overloaded_error", 2),
        ([error_response(500)] * 2, ProviderError, "api_error", 2),
        ([error_response(500, should_retry=False)], ProviderError, "api_error", 1),
        ([error_response(400)], ProviderError, "invalid_request_error", 1),
        ([error_response(401)], ProviderConfigError, "authentication_error", 1),
        ([error_response(404, "model: x")], ProviderConfigError, "not_found_error", 1),
        ([httpx2.ConnectError("refused")] * 2, ProviderError, "connection", 2),
        ([httpx2.Response(200, content=b"<html>not json</html>")], ProviderError, None, 1),
        ([{"id": "x", "type": "message"}], ProviderError, None, 1),
    ],
)
async def test_failures_become_typed_provider_errors_after_production_retries(
    responses: list[Any], error: type[Exception], kind: str | None, requests: int
) -> None:
    api = MessagesAPI().add(*responses)
    model = api.model()
    with pytest.raises(error) as caught:
        await model.generate(build_request(question="q"))
    if kind is not None:
        assert caught.value.kind == kind  # type: ignore[attr-defined]
    assert len(api.bodies) == requests
    assert model.health.failures


async def test_a_retry_succeeds_when_it_fits() -> None:
    api = MessagesAPI().add(error_response(529, "Overloaded"), message(text_block("ok")))
    with budget.deadline(30):
        reply = await api.model().generate(build_request(question="q"))
    assert reply.text == "ok" and len(api.bodies) == 2
    assert api.headers[1]["x-stainless-retry-count"] == "0"  # our retry, not the SDK's


async def test_a_retry_after_longer_than_the_budget_falls_back_at_once() -> None:
    """Item 6: a 45 s retry-after inside a 30 s turn is not slept; the caller falls back now."""
    api = MessagesAPI().add(error_response(429, retry_after=45), message(text_block("late")))
    with budget.deadline(30), pytest.raises(ProviderError) as caught:
        await api.model().generate(build_request(question="q"))
    assert caught.value.kind == "rate_limit_error"
    assert "does not fit" in str(caught.value)
    assert len(api.bodies) == 1


async def test_a_call_that_never_answers_ends_at_the_deadline() -> None:
    api = MessagesAPI().add(Hang())
    with budget.deadline(1.5), pytest.raises(ProviderError) as caught:
        await api.model().generate(build_request(question="q"))
    assert caught.value.kind == "timeout"
    assert len(api.bodies) == 1  # no time was left for a retry


async def test_a_revoked_key_is_recorded_as_a_configuration_error() -> None:
    api = MessagesAPI().add(error_response(401, "invalid x-api-key"), message(text_block("ok")))
    model = api.model()
    with pytest.raises(ProviderConfigError):
        await model.generate(build_request(question="q"))
    assert model.health.config_error and "authentication_error" in model.health.config_error
    await model.generate(build_request(question="q"))
    assert model.health.config_error is None  # a later success clears it


def test_api_key_is_required() -> None:
    with pytest.raises(ProviderConfigError):
        AnthropicChatModel(None, model=MODEL)


def test_factory_builds_anthropic_from_settings() -> None:
    base: dict[str, Any] = {"mongodb_uri": None, "_env_file": None, "llm": "anthropic"}
    with pytest.raises(ProviderConfigError):
        build_chat_model(Settings(**base))
    model = build_chat_model(
        Settings(**base, anthropic_api_key="k", anthropic_model=MODEL)  # type: ignore[arg-type]
    )
    assert isinstance(model, AnthropicChatModel)
    assert model.name == f"anthropic:{MODEL}" and model.retry.max_retries == 1
    assert model.capabilities.cache_min_tokens == 2048
    # the bare instructions and tools (a tenant file without a reference) are below Sonnet 4.6's
    # minimum: no breakpoint, no claim (tests/test_prompt_cache.py covers the tenant's prefix)
    assert model.prefix_tokens(SYSTEM_PROMPT, TOOL_SPECS) < 2048
    lowered = build_chat_model(
        Settings(**base, anthropic_api_key="k", anthropic_cache_min_tokens=1024)  # type: ignore[arg-type]
    )
    assert isinstance(lowered, AnthropicChatModel)
    assert lowered.capabilities.cache_min_tokens == 1024


async def test_each_generation_round_has_its_own_budget() -> None:
    """Item 6: one turn deadline no longer covers every model call; a round that hangs ends at
    `round_timeout_seconds` even with no turn deadline around it."""
    api = MessagesAPI().add(Hang())
    request = dataclasses.replace(build_request(question="q"), round_timeout_seconds=1.5)
    with pytest.raises(ProviderError) as caught:
        await api.model().generate(request)
    assert caught.value.kind == "timeout" and "1.5s" in str(caught.value)
    assert len(api.bodies) == 1


# --------------------------------------------------------------------------- structured passages


async def test_the_prompt_carries_the_selected_section_whole_under_its_heading_path() -> None:
    from app.ingest.sections import build_sections
    from app.providers.chat.base import Passage

    body = (
        "## Exporting a vault\n\nSome history of the export feature first. "
        * 1
        + "It has changed a lot over the years and many people asked for it.\n\n"
        "To export a vault:\n\n"
        "1. Open Settings.\n2. Choose Export and pick a folder.\n3. Wait for the archive.\n"
        "4. Check the archive opens.\n5. Keep it somewhere safe.\n\n"
        "| Format | Size limit |\n|---|---|\n| Zip | 2 GB |\n| Folder | none |\n\n"
        + "Unrelated trivia about the team that built it, told at length. "
        * 20
    )
    (_intro, section) = build_sections("Vault guide", body)
    # the stored chunk is a fixed window that cuts the procedure after its second step
    chunk = Passage(
        id="vault-guide#1",
        doc_id="vault-guide",
        kind="doc",
        title="Vault guide",
        breadcrumb="Vault guide › Exporting a vault",
        text="## Exporting a vault\n\nTo export a vault:\n\n1. Open Settings.\n2. Choose Export",
        section=section,
    )
    api = MessagesAPI().add(message(text_block("Open Settings, then Export [1].")))
    request = build_request(question="How do I export a vault?", passages=[chunk])
    await api.model().generate(request)
    (sent,) = api.bodies
    content = sent["messages"][0]["content"]
    passage = content.split("<passages>", 1)[1].split("</passages>", 1)[0]
    assert 'breadcrumb="Vault guide › Exporting a vault"' in passage
    assert "To export a vault:" in passage  # the line that leads into the list, with it
    for step in ("1. Open Settings.", "3. Wait for the archive.", "5. Keep it somewhere safe."):
        assert step in passage, passage  # the procedure whole, not the window's two steps
    assert "Unrelated trivia" not in passage  # a long section gives its chosen block, not all
