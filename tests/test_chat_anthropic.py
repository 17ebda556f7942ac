"""The Anthropic adapter against a fake Messages API (httpx2.MockTransport): what it sends, what
it makes of the replies, and how failures come out."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx2
import pytest

from app.providers.chat import build_chat_model
from app.providers.chat.anthropic import AnthropicChatModel
from app.providers.chat.base import ChatMessage, StreamDone, TextDelta, Usage
from app.providers.errors import ProviderConfigError, ProviderError
from app.settings import Settings
from app.turn.prompt import SYSTEM_PROMPT, build_request
from app.turn.tools import TOOL_SPECS
from tests.fakes_chat import (
    AUTH_302,
    MODEL,
    ORDER,
    MessagesAPI,
    RecordingTools,
    error_response,
    message,
    sse,
    text_block,
    tool_use,
)
from tuning import TUNING

CONDENSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "standaloneQuestion": {"type": "string"},
        "intent": {"type": "string"},
        "needsRetrieval": {"type": "boolean"},
    },
    "required": ["standaloneQuestion", "intent", "needsRetrieval"],
}


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


def assert_cached_system(body: dict[str, Any], text: str = SYSTEM_PROMPT) -> None:
    assert body["system"] == [
        {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}
    ]


async def test_generate_sends_cached_system_and_records_usage() -> None:
    api = MessagesAPI().add(
        message(text_block("AUTH_302 means the signature did not verify [1]."), cache_read=1800)
    )
    request = build_request(question="What is AUTH_302?", passages=[AUTH_302])
    reply = await api.model().generate(request)
    assert reply.text == "AUTH_302 means the signature did not verify [1]."
    assert reply.usage == Usage(input=50, output=20, cache_read=1800, cache_write=0)
    assert reply.model == f"anthropic:{MODEL}" and reply.stop_reason == "end_turn"
    (body,) = api.bodies
    assert body["model"] == MODEL
    assert_cached_system(body)
    assert body["messages"] == [{"role": "user", "content": request.messages[0].content}]
    assert "tools" not in body  # no runner, no tools


async def test_tool_use_round_trip_runs_tools_through_the_session_runner() -> None:
    api = MessagesAPI().add(
        message(
            text_block("Let me look."),
            tool_use("lookupOrder", {"orderRef": "ORD-1042"}),
            stop_reason="tool_use",
            cache_write=1500,
        ),
        message(text_block("ORD-1042 shipped with UPS."), cache_read=1500),
    )
    tools = RecordingTools({"lookupOrder": ORDER})
    request = build_request(question="where is ORD-1042", tools=TOOL_SPECS, tool_runner=tools)
    reply = await api.model().generate(request)

    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-1042"})]
    assert reply.text == "Let me look.\n\nORD-1042 shipped with UPS."
    assert [c.trace() for c in reply.tool_calls] == [
        {"tool": "lookupOrder", "ok": True, "found": True}
    ]
    assert reply.usage == Usage(input=100, output=40, cache_read=1500, cache_write=1500)

    second = api.bodies[1]
    for body in api.bodies:
        assert_cached_system(body)
        assert [t["name"] for t in body["tools"]] == [t["name"] for t in TOOL_SPECS]
        assert not any("customer" in k.lower() for k in schema_keys(body["tools"]))
        assert "tool_choice" not in body
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "lookupOrder",
                "input": {"orderRef": "ORD-1042"},
            },
        ],
    }
    (result,) = second["messages"][2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert result["is_error"] is False
    assert json.loads(result["content"])["data"]["tracking"] == "1Z999AA10123456784"


async def test_tool_rounds_are_capped_then_text_is_forced() -> None:
    looping = message(tool_use("listRecentOrders", {"limit": 3}), stop_reason="tool_use")
    api = MessagesAPI().add(looping, message(text_block("Here are your orders.")))
    tools = RecordingTools()  # knows no tools: every call is an ok=False result
    request = dataclasses.replace(
        build_request(question="orders?", tools=TOOL_SPECS, tool_runner=tools), max_tool_rounds=1
    )
    reply = await api.model().generate(request)
    assert len(tools.calls) == 1
    assert reply.text == "Here are your orders."
    assert "tool_choice" not in api.bodies[0]
    assert api.bodies[1]["tool_choice"] == {"type": "none"}
    assert api.bodies[1]["messages"][2]["content"][0]["is_error"] is True


async def test_a_model_ignoring_the_forced_stop_ends_with_no_text() -> None:
    looping = message(tool_use("listRecentOrders", {"limit": 3}), stop_reason="tool_use")
    api = MessagesAPI().add(looping, looping)
    request = dataclasses.replace(
        build_request(question="q", tools=TOOL_SPECS, tool_runner=RecordingTools()),
        max_tool_rounds=1,
    )
    reply = await api.model().generate(request)
    assert reply.text == "" and len(reply.tool_calls) == 1  # the caller falls back on empty


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
    assert reply.usage.input == 50
    (body,) = api.bodies
    assert_cached_system(body, "condense")
    assert body["tool_choice"] == {"type": "tool", "name": "record_output"}
    assert body["tools"][0]["input_schema"] == CONDENSE_SCHEMA


@pytest.mark.parametrize(
    "reply",
    [
        message(text_block("{not json")),
        message(tool_use("record_output", "a string"), stop_reason="tool_use"),  # type: ignore[arg-type]
        {"garbage": True},
    ],
)
async def test_complete_json_without_structured_output_is_a_provider_error(
    reply: dict[str, Any],
) -> None:
    api = MessagesAPI().add(reply)
    with pytest.raises(ProviderError):
        await api.model().complete_json("s", [ChatMessage("user", "x")], CONDENSE_SCHEMA)


async def test_stream_yields_deltas_then_the_final_reply() -> None:
    api = MessagesAPI().add(sse("AUTH_302 means ", "the signature failed [1].", cache_read=900))
    request = build_request(question="What is AUTH_302?", passages=[AUTH_302])
    events = [e async for e in api.model().stream(request)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "AUTH_302 means ",
        "the signature failed [1].",
    ]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.reply.text == "AUTH_302 means the signature failed [1]."
    assert done.reply.usage == Usage(input=50, output=20, cache_read=900)
    assert api.bodies[0]["stream"] is True
    assert_cached_system(api.bodies[0])


async def test_stream_with_a_tool_round() -> None:
    api = MessagesAPI().add(
        sse(tool=tool_use("lookupOrder", {"orderRef": "ORD-1042"}), stop_reason="tool_use"),
        sse("It shipped ", "on 2026-07-03."),
    )
    tools = RecordingTools({"lookupOrder": ORDER})
    request = build_request(question="ORD-1042?", tools=TOOL_SPECS, tool_runner=tools)
    events = [e async for e in api.model().stream(request)]
    assert (
        "".join(e.text for e in events if isinstance(e, TextDelta)) == "It shipped on 2026-07-03."
    )
    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-1042"})]
    assert api.bodies[1]["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (error_response(500), ProviderError),
        (error_response(529, "overloaded"), ProviderError),
        (error_response(429), ProviderError),
        (error_response(401), ProviderConfigError),
        (error_response(404, "model not found"), ProviderConfigError),
        (httpx2.ReadTimeout("slow"), ProviderError),
        (httpx2.ConnectError("refused"), ProviderError),
        (httpx2.Response(200, content=b"<html>not json</html>"), ProviderError),
        ({"id": "x", "type": "message"}, ProviderError),
    ],
)
async def test_failures_become_provider_errors(response: Any, error: type[Exception]) -> None:
    api = MessagesAPI().add(response)
    with pytest.raises(error):
        await api.model().generate(build_request(question="q"))


async def test_stream_failure_becomes_provider_error() -> None:
    api = MessagesAPI().add(error_response(503))
    with pytest.raises(ProviderError):
        [e async for e in api.model().stream(build_request(question="q"))]


async def test_tool_runner_failures_are_not_provider_failures() -> None:
    api = MessagesAPI().add(
        message(tool_use("lookupOrder", {"orderRef": "ORD-1042"}), stop_reason="tool_use")
    )

    async def store_down(name: str, args: dict[str, Any]) -> Any:
        raise ConnectionError("store unreachable")

    request = build_request(question="q", tools=TOOL_SPECS, tool_runner=store_down)
    with pytest.raises(ConnectionError):
        await api.model().generate(request)


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
    assert model.name == f"anthropic:{MODEL}"


async def test_streamed_answer_through_generate_with_a_deadline() -> None:
    from app.providers.chat.offline import OfflineChatModel
    from app.turn.generate import Answer, stream_answer

    api = MessagesAPI().add(sse("AUTH_302 means ", "a bad signature [1][4]."))
    items = [
        item
        async for item in stream_answer(
            question="What is AUTH_302?",
            original="What is AUTH_302?",
            passages=[AUTH_302],
            tool_results=[],
            memory_context=None,
            customer_name=None,
            confidence="strong",
            intent="troubleshooting",
            chat_model=api.model(),
            fallback_model=OfflineChatModel(),
            tuning=TUNING,
            timeout_seconds=5.0,
        )
    ]
    *deltas, answer = items
    assert isinstance(answer, Answer)
    assert "".join(str(d) for d in deltas) == answer.text == "AUTH_302 means a bad signature [1]."
    assert answer.invalid_citations == 1 and answer.fallback_reason is None
    assert answer.model == f"anthropic:{MODEL}"
