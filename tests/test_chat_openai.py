"""The OpenAI-compatible adapter against a fake server speaking Chat Completions over real HTTP
on 127.0.0.1 (tests/fake_openai_server.py), with the retry settings production uses: what it
sends, streams and tool-call round trips, JSON output from servers that honour, reject or ignore
`response_format`, usage, and how failures and deadlines come out."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.providers import budget
from app.providers.budget import RetryPolicy
from app.providers.chat import build_chat_model
from app.providers.chat.base import ChatMessage, StreamDone, TextDelta
from app.providers.chat.openai import (
    OpenAIChatModel,
    ThinkStripper,
    function_tools,
    parse_json_object,
    strict_compatible,
    strip_thinking,
)
from app.providers.chat.pricing import UNKNOWN_PRICE
from app.providers.errors import ProviderConfigError, ProviderError
from app.settings import Settings
from app.spend import usage_cost_usd
from app.turn.condense import CONDENSE_SCHEMA
from app.turn.prompt import SYSTEM_PROMPT, build_request
from app.turn.tools import TOOL_SPECS
from tests.fake_openai_server import (
    API_KEY,
    MODEL,
    Drop,
    Error,
    FakeOpenAI,
    Hang,
    Raw,
    StreamError,
    Text,
    Tools,
)
from tests.fakes_chat import AUTH_302, NO_ORDER, ORDER, RecordingTools
from tuning import TUNING


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI().running() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server


def adapter(fake: FakeOpenAI, **kwargs: Any) -> OpenAIChatModel:
    """The adapter as production builds it (its retry policy from tuning.py)."""
    kwargs.setdefault("retry", RetryPolicy.from_tuning(TUNING))
    kwargs.setdefault("api_key", API_KEY)
    return OpenAIChatModel(base_url=fake.base_url, model=MODEL, **kwargs)


def signed_in(question: str = "where is ORD-1042", **kw: Any) -> Any:
    tools = kw.pop("tools", RecordingTools({"lookupOrder": ORDER}))
    return build_request(question=question, tools=TOOL_SPECS, tool_runner=tools, **kw)


def condense_messages(text: str = "where's ORD-1042?") -> list[ChatMessage]:
    return [ChatMessage("user", f"<conversation>\n</conversation>\n<latest>\n{text}\n</latest>")]


# --------------------------------------------------------------------------- generation


async def test_generate_sends_the_prompt_and_counts_usage(fake: FakeOpenAI) -> None:
    fake.add(Text("AUTH_302 means the signature failed [1]."))
    model = adapter(fake)
    request = build_request(question="What is AUTH_302?", passages=[AUTH_302])
    reply = await model.generate(request)
    await model.aclose()
    assert reply.text == "AUTH_302 means the signature failed [1]."
    assert reply.model == f"openai:{MODEL}" and reply.stop_reason == "end_turn"
    (body,) = fake.bodies
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert body["messages"][1] == {"role": "user", "content": request.messages[0].content}
    assert "tools" not in body and "stream" not in body
    assert fake.seen[0].headers["Authorization"] == f"Bearer {API_KEY}"
    # the fake's usage (4 characters a token over the messages) is what is counted
    prompt = sum(-(-len(json.dumps(m)) // 4) for m in body["messages"]) + 1  # "[]" tools
    assert reply.usage.input == prompt and reply.usage.output == -(-len(reply.text) // 4)
    assert reply.usage.calls == 1 and reply.usage.cache_eligible_calls == 0


async def test_stream_yields_split_deltas_then_the_final_reply(fake: FakeOpenAI) -> None:
    fake.add(Text("AUTH_302 means the signature failed [1].", split=4))
    model = adapter(fake)
    events = [e async for e in model.stream(build_request(question="q", passages=[AUTH_302]))]
    await model.aclose()
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 4  # the role chunk's empty content and the keep-alives yield nothing
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert "".join(deltas) == done.reply.text == "AUTH_302 means the signature failed [1]."
    assert done.reply.stop_reason == "end_turn"
    (body,) = fake.bodies
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert done.reply.usage.output == -(-len(done.reply.text) // 4)  # from the usage chunk


async def test_tool_call_round_trip_streamed_with_split_arguments(fake: FakeOpenAI) -> None:
    """The arguments arrive cut mid-token over several fragments; the tool runs through the
    session runner; the second request carries the assistant's tool_calls and the result."""
    fake.add(
        Tools([("lookupOrder", {"orderRef": "ORD-1042"})]),
        Text("ORD-1042 shipped with UPS on 2026-07-03."),
    )
    tools = RecordingTools({"lookupOrder": ORDER})
    model = adapter(fake)
    events = [e async for e in model.stream(signed_in(tools=tools))]
    await model.aclose()
    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-1042"})]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.reply.text == "ORD-1042 shipped with UPS on 2026-07-03."
    assert [c.trace() for c in done.reply.tool_calls] == [
        {"tool": "lookupOrder", "ok": True, "found": True}
    ]
    assert done.reply.usage.calls == 2
    first, second = fake.bodies
    assert [t["function"]["name"] for t in first["tools"]] == [t["name"] for t in TOOL_SPECS]
    assert "tool_choice" not in first
    assistant, result = second["messages"][-2:]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "lookupOrder",
        "arguments": '{"orderRef": "ORD-1042"}',
    }
    assert result["role"] == "tool" and result["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert json.loads(result["content"])["data"]["tracking"] == "1Z999AA10123456784"


async def test_tool_call_round_trip_without_streaming(fake: FakeOpenAI) -> None:
    fake.add(
        Tools([("lookupOrder", {"orderRef": "ORD-9999"})], text="Checking."),
        Text("I don't see ORD-9999 on your account."),
    )
    tools = RecordingTools({"lookupOrder": NO_ORDER})
    model = adapter(fake)
    reply = await model.generate(signed_in("where is ORD-9999", tools=tools))
    await model.aclose()
    assert tools.calls == [("lookupOrder", {"orderRef": "ORD-9999"})]
    assert reply.text == "Checking.\n\nI don't see ORD-9999 on your account."
    assert reply.tool_calls[0].trace() == {"tool": "lookupOrder", "ok": True, "found": False}
    assert fake.bodies[1]["messages"][-2]["content"] == "Checking."


def test_tool_schemas_are_translated_with_no_customer_parameter() -> None:
    translated = function_tools(TOOL_SPECS)
    for spec, tool in zip(TOOL_SPECS, translated, strict=True):
        assert tool["type"] == "function"
        assert tool["function"]["name"] == spec["name"]
        assert tool["function"]["parameters"] == spec["input_schema"]
    text = json.dumps(translated).lower()
    assert "customer" not in json.dumps([t["function"]["parameters"] for t in translated]).lower()
    assert "customerid" not in text


async def test_tool_rounds_are_capped_then_text_is_asked_for(fake: FakeOpenAI) -> None:
    fake.add(Tools([("listRecentOrders", {"limit": 3})]), Text("Here are your orders."))
    tools = RecordingTools()  # knows no tools: an ok=False result
    request = dataclasses.replace(signed_in("orders?", tools=tools), max_tool_rounds=1)
    model = adapter(fake)
    reply = await model.generate(request)
    await model.aclose()
    assert len(tools.calls) == 1 and reply.text == "Here are your orders."
    assert fake.bodies[1]["tool_choice"] == "none"


@pytest.mark.parametrize(
    ("item", "stop"),
    [
        (Text("Half an answer and then", finish="length"), "max_tokens"),
        (Text("", finish="content_filter"), "refusal"),
        (Text("", refusal="I can't help with that."), "refusal"),
    ],
)
async def test_stop_reasons_reach_the_caller(fake: FakeOpenAI, item: Any, stop: str) -> None:
    fake.add(item, item)
    model = adapter(fake)
    streamed = [e async for e in model.stream(build_request(question="q"))][-1]
    plain = await model.generate(build_request(question="q"))
    await model.aclose()
    assert isinstance(streamed, StreamDone)
    assert streamed.reply.stop_reason == plain.stop_reason == stop


async def test_a_leading_thinking_block_is_never_shown(fake: FakeOpenAI) -> None:
    """Reasoning models behind servers without a reasoning parser think inside `content`."""
    thought = "<think>The customer wants the AUTH_302 fix; passage 1 has it.</think>\n\n"
    fake.add(Text(thought + "Upload the new certificate [1].", split=7))
    fake.add(Text(thought + "Upload the new certificate [1]."))
    model = adapter(fake)
    events = [e async for e in model.stream(build_request(question="q", passages=[AUTH_302]))]
    plain = await model.generate(build_request(question="q", passages=[AUTH_302]))
    await model.aclose()
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == plain.text == "Upload the new certificate [1]."


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<think>a</think>b", "b"),
        ("  <think>\nplan\n</think>\n\nAnswer.", "Answer."),
        ("<b>Bold</b> answer", "<b>Bold</b> answer"),
        ("<thin", "<thin"),  # only looked like the tag's start
        ("<think>never closed", ""),
        ("Answer. <think>not leading</think>", "Answer. <think>not leading</think>"),
    ],
)
def test_only_a_leading_thinking_block_is_stripped(text: str, shown: str) -> None:
    assert strip_thinking(text) == shown
    stripper = ThinkStripper()  # the same, one character at a time
    assert "".join(stripper.feed(c) for c in text) + stripper.finish() == shown


async def test_tool_runner_failures_are_not_provider_failures(fake: FakeOpenAI) -> None:
    fake.add(Tools([("lookupOrder", {"orderRef": "ORD-1042"})]))

    async def store_down(name: str, args: dict[str, Any]) -> Any:
        raise ConnectionError("store unreachable")

    model = adapter(fake)
    with pytest.raises(ConnectionError):
        await model.generate(signed_in(tools=store_down))
    await model.aclose()
    assert not model.health.failures


# --------------------------------------------------------------------------- JSON output


async def test_complete_json_asks_for_the_schema_strictly(fake: FakeOpenAI) -> None:
    model = adapter(fake)
    reply = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    await model.aclose()
    assert reply.data["mentionedOrderId"] == "ORD-1042" and reply.usage.calls == 1
    (body,) = fake.bodies
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == CONDENSE_SCHEMA
    assert fmt["json_schema"]["strict"] is True  # the condense schema is closed and all-required


async def test_a_server_that_ignores_response_format_is_parsed_leniently(
    fake: FakeOpenAI,
) -> None:
    """Prose around a fenced JSON object, as many local servers answer."""
    fake.dialect.ignore_response_format = True
    model = adapter(fake)
    reply = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    await model.aclose()
    assert reply.data["standaloneQuestion"] == "where's ORD-1042?"
    assert reply.data["intent"] == "order_status" and len(fake.bodies) == 1


async def test_prose_without_json_gets_one_corrective_call(fake: FakeOpenAI) -> None:
    data = {k: None for k in CONDENSE_SCHEMA["required"]}
    fake.add(Text("Your order is probably on its way!"), Text(json.dumps(data)))
    model = adapter(fake)
    reply = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    await model.aclose()
    assert reply.data == data and reply.usage.calls == 2
    second = fake.bodies[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Your order is probably on its way!"}
    assert "only the JSON object" in second[-1]["content"]


@pytest.mark.parametrize(
    "replies",
    [
        [Text("no json here"), Text("still none")],
        [Text('{"intent": "how_to"}'), Text('{"intent": "how_to"}')],  # required keys missing
        [Text("[1, 2]"), Text("```json\n[3]\n```")],
    ],
)
async def test_json_that_stays_unusable_is_a_provider_error(
    fake: FakeOpenAI, replies: list[Any]
) -> None:
    fake.add(*replies)
    model = adapter(fake)
    with pytest.raises(ProviderError) as caught:
        await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    await model.aclose()
    assert caught.value.kind == "invalid_json" and len(fake.bodies) == 2
    assert model.health.failures["invalid_json"] == 1


async def test_a_server_that_rejects_json_schema_is_asked_with_json_object(
    fake: FakeOpenAI,
) -> None:
    fake.dialect.reject_response_format = True
    model = adapter(fake)
    first = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    second = await model.complete_json("condense", condense_messages("thanks!"), CONDENSE_SCHEMA)
    await model.aclose()
    assert first.data["intent"] == "order_status" and second.data["intent"] == "acknowledgment"
    kinds = [b["response_format"]["type"] for b in fake.bodies]
    assert kinds == ["json_schema", "json_object", "json_object"]  # learnt once per process
    assert "JSON" in fake.bodies[1]["messages"][0]["content"]  # json_object needs the word
    assert model.health.facts["jsonMode"] == "json_object"


def test_json_parsing_and_strictness_helpers() -> None:
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('Sure:\n```json\n{"a": {"b": 2}}\n```') == {"a": {"b": 2}}
    assert parse_json_object('The answer is {"a": 1} and {"b": 2}.') == {"a": 1}
    assert parse_json_object("no object { here") is None
    assert parse_json_object("[1, 2]") is None
    assert strict_compatible(CONDENSE_SCHEMA)
    loose = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
    assert not strict_compatible(loose)


# --------------------------------------------------------------------------- dialects, usage


async def test_a_server_that_rejects_stream_options_streams_without_them(
    fake: FakeOpenAI,
) -> None:
    fake.dialect.reject_stream_options = True
    fake.dialect.usage = False
    model = adapter(fake)
    reply = [e async for e in model.stream(build_request(question="q"))][-1]
    await model.aclose()
    assert isinstance(reply, StreamDone) and reply.reply.text
    first, second = fake.bodies
    assert "stream_options" in first and "stream_options" not in second
    # no usage reported: an estimate is billed, and /readyz counts how often
    assert reply.reply.usage.input > 0 and reply.reply.usage.output > 0
    assert model.health.facts["estimatedUsageCalls"] == 1 and not model.stream_usage


async def test_a_server_that_ignores_stream_and_answers_json_is_read_whole(
    fake: FakeOpenAI,
) -> None:
    completion = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Whole."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    }
    fake.add(Raw(json.dumps(completion)))
    model = adapter(fake)
    events = [e async for e in model.stream(build_request(question="q"))]
    await model.aclose()
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Whole."]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.reply.usage.input == 7


async def test_max_tokens_is_renamed_when_the_model_wants_max_completion_tokens(
    fake: FakeOpenAI,
) -> None:
    msg = "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
    fake.add(Error(400, msg + "'max_completion_tokens' instead."), Text("ok"))
    model = adapter(fake)
    reply = await model.generate(build_request(question="q"))
    await model.aclose()
    assert reply.text == "ok"
    assert "max_tokens" in fake.bodies[0] and "max_completion_tokens" in fake.bodies[1]


async def test_a_model_that_takes_only_the_default_temperature_gets_none(
    fake: FakeOpenAI,
) -> None:
    msg = "Unsupported value: 'temperature' does not support 0 with this model."
    fake.add(Error(400, msg, code="unsupported_value"))
    model = adapter(fake)
    reply = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    again = await model.complete_json("condense", condense_messages(), CONDENSE_SCHEMA)
    await model.aclose()
    assert reply.data["intent"] == again.data["intent"] == "order_status"
    assert [("temperature" in b) for b in fake.bodies] == [True, False, False]


async def test_one_pooled_connection_serves_consecutive_calls(fake: FakeOpenAI) -> None:
    fake.add(Text("one"), Text("two"))
    model = adapter(fake)
    await model.generate(build_request(question="q1"))
    await model.generate(build_request(question="q2"))
    await model.aclose()
    assert len(set(fake.client_ports)) == 1


def test_cost_uses_the_configured_prices_and_says_when_unknown() -> None:
    from app.providers.chat.base import Usage

    base: dict[str, Any] = {
        "_env_file": None,
        "llm": "openai",
        "openai_model": "m",
        "openai_base_url": "http://127.0.0.1:9/v1",
    }
    priced = Settings(
        **base,
        openai_price_input_per_mtok_usd=2.0,
        openai_price_output_per_mtok_usd=8.0,
        openai_price_cached_input_per_mtok_usd=0.5,
    )
    usage = Usage(input=1_000_000, output=500_000, cache_read=2_000_000, calls=1)
    assert usage_cost_usd(usage, priced) == pytest.approx(2.0 + 4.0 + 1.0)
    unknown = Settings(**base)
    assert usage_cost_usd(usage, unknown) == 0.0
    model = build_chat_model(unknown)
    assert isinstance(model, OpenAIChatModel)
    assert model.health.facts["pricing"] == UNKNOWN_PRICE


# --------------------------------------------------------------------------- failures, retries


@pytest.mark.parametrize(
    ("items", "error", "kind", "requests"),
    [
        ([Error(500)] * 2, ProviderError, "server_error", 2),
        ([Error(503, type="")] * 2, ProviderError, "unavailable", 2),
        ([Error(500, should_retry=False)], ProviderError, "server_error", 1),
        ([Error(400, "bad things")], ProviderError, "invalid_request_error", 1),
        ([Error(401, code="invalid_api_key")], ProviderConfigError, "invalid_api_key", 1),
        ([Error(403, type="permission_error")], ProviderConfigError, "permission_error", 1),
        ([Error(429, code="insufficient_quota")], ProviderConfigError, "insufficient_quota", 1),
        # Ollama's and vLLM's error bodies for an unknown model
        (
            [Raw('{"error": "model \'llama9\' not found, try pulling it first"}', status=404)],
            ProviderConfigError,
            "http_404",
            1,
        ),
        (
            [
                Raw(
                    '{"object": "error", "message": "The model `x` does not exist.", '
                    '"type": "NotFoundError", "param": null, "code": 404}',
                    status=404,
                )
            ],
            ProviderConfigError,
            "NotFoundError",
            1,
        ),
        ([Raw("<html>not json</html>", content_type="text/html")], ProviderError, None, 1),
        ([Raw('{"id": "x", "choices": []}')], ProviderError, "bad_response", 1),
        (  # an error object in a 200 body: the server's type, and not called "mid-stream"
            [Raw('{"error": {"message": "overloaded", "type": "server_error"}}')],
            ProviderError,
            "server_error",
            1,
        ),
    ],
)
async def test_failures_become_typed_provider_errors_after_production_retries(
    fake: FakeOpenAI, items: list[Any], error: type[Exception], kind: str | None, requests: int
) -> None:
    fake.add(*items)
    model = adapter(fake)
    with budget.deadline(30), pytest.raises(error) as caught:
        await model.generate(build_request(question="q"))
    await model.aclose()
    if kind is not None:
        assert caught.value.kind == kind  # type: ignore[attr-defined]
    if isinstance(items[0], Error):
        assert "req_fake0123" in str(caught.value)  # the server's request id, for its logs
    assert "mid-stream" not in str(caught.value)
    assert len(fake.bodies) == requests
    assert model.health.failures


async def test_429_with_a_retry_after_that_fits_is_retried(fake: FakeOpenAI) -> None:
    fake.add(Error(429, "Rate limit reached", retry_after=0.2), Text("ok"))
    model = adapter(fake)
    with budget.deadline(30):
        reply = await model.generate(build_request(question="q"))
    await model.aclose()
    assert reply.text == "ok" and len(fake.bodies) == 2


async def test_a_retry_after_longer_than_the_budget_falls_back_at_once(fake: FakeOpenAI) -> None:
    fake.add(Error(429, "Rate limit reached", code="rate_limit_exceeded", retry_after=45))
    model = adapter(fake)
    with budget.deadline(30), pytest.raises(ProviderError) as caught:
        await model.generate(build_request(question="q"))
    await model.aclose()
    assert caught.value.kind == "rate_limit_exceeded"
    assert "does not fit" in str(caught.value) and len(fake.bodies) == 1


async def test_a_stream_that_fails_before_any_text_is_retried(fake: FakeOpenAI) -> None:
    fake.add(Error(500), Text("Fine now."))
    model = adapter(fake)
    with budget.deadline(30):
        events = [e async for e in model.stream(build_request(question="q"))]
    await model.aclose()
    assert isinstance(events[-1], StreamDone) and events[-1].reply.text == "Fine now."
    assert len(fake.bodies) == 2


async def test_an_error_event_mid_stream_is_reported_by_its_type(fake: FakeOpenAI) -> None:
    fake.add(StreamError("The answer starts here"))
    model = adapter(fake)
    shown: list[Any] = []
    with pytest.raises(ProviderError) as caught:
        async for e in model.stream(build_request(question="q")):
            shown.append(e)
    await model.aclose()
    assert caught.value.kind == "server_error" and "mid-stream" in str(caught.value)
    assert shown and len(fake.bodies) == 1  # text was shown: not retried


@pytest.mark.parametrize(("clean", "kind"), [(False, "connection"), (True, "bad_response")])
async def test_a_stream_cut_off_mid_answer_is_an_error(
    fake: FakeOpenAI, clean: bool, kind: str
) -> None:
    """Lost connection, or a response that ends without `finish_reason` or `[DONE]`: what was
    shown is half an answer, and the caller must know (it falls back and says so)."""
    fake.add(Drop("The first half of an answer", clean=clean))
    model = adapter(fake)
    shown: list[Any] = []
    with budget.deadline(30), pytest.raises(ProviderError) as caught:
        async for e in model.stream(build_request(question="q")):
            shown.append(e)
    await model.aclose()
    assert caught.value.kind == kind, caught.value
    assert "".join(e.text for e in shown) == "The first half of an answer"
    assert len(fake.bodies) == 1  # text was shown: not retried


async def test_a_hung_server_ends_at_the_deadline(fake: FakeOpenAI) -> None:
    fake.add(Hang())
    model = adapter(fake)
    with budget.deadline(1.5), pytest.raises(ProviderError) as caught:
        await model.generate(build_request(question="q"))
    assert caught.value.kind == "timeout" and len(fake.bodies) == 1
    # the circuit is open now: the next call fails at once without reaching the server
    with pytest.raises(ProviderError) as skipped:
        await model.generate(build_request(question="q"))
    await model.aclose()
    assert skipped.value.kind == "circuit_open" and len(fake.bodies) == 1


async def test_a_hung_stream_round_ends_at_its_round_budget(fake: FakeOpenAI) -> None:
    fake.add(Hang())
    request = dataclasses.replace(build_request(question="q"), round_timeout_seconds=1.2)
    model = adapter(fake)
    with pytest.raises(ProviderError) as caught:
        async for _ in model.stream(request):
            pass
    await model.aclose()
    assert caught.value.kind == "timeout" and "1.2s" in str(caught.value)


async def test_a_bad_key_is_a_configuration_error_in_health_and_probe(fake: FakeOpenAI) -> None:
    model = adapter(fake, api_key="sk-wrong")
    with pytest.raises(ProviderConfigError):
        await model.probe()
    assert model.health.view()["ok"] is False
    assert model.health.config_error and "Incorrect API key" in model.health.config_error
    await model.aclose()
    good = adapter(fake)
    await good.probe()
    await good.aclose()
    assert good.health.config_error is None and good.health.facts["modelListed"] is True


async def test_an_unknown_model_is_a_configuration_error(fake: FakeOpenAI) -> None:
    model = OpenAIChatModel(base_url=fake.base_url, model="gpt-nope", api_key=API_KEY)
    with pytest.raises(ProviderConfigError) as caught:
        await model.generate(build_request(question="q"))
    await model.probe()  # the list answers, without the model: a warning, not an error
    await model.aclose()
    assert "OPENAI_MODEL" in str(caught.value)
    assert "gpt-nope" in model.health.facts["warning"]


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({}, "OPENAI_MODEL"),
        ({"openai_model": "m", "openai_base_url": "localhost:11434"}, "not an http(s) URL"),
        (
            {"openai_model": "m", "openai_base_url": "http://h:8000/v1/chat/completions"},
            "use 'http://h:8000/v1'",
        ),
        ({"openai_model": "gpt-4.1-mini"}, "OPENAI_API_KEY is required for api.openai.com"),
        ({"openai_model": "m", "openai_base_url": "http://u:p@h/v1"}, "credentials"),
    ],
)
def test_misconfiguration_is_refused_with_a_sentence(
    overrides: dict[str, Any], problem: str
) -> None:
    from app.errors import Misconfigured
    from app.main import create_app

    settings = Settings(_env_file=None, llm="openai", demo=True, **overrides)  # type: ignore[arg-type]
    assert any(problem in p for p in settings.llm_problems())
    with pytest.raises(Misconfigured, match="refusing to start"):
        create_app(settings)
    with pytest.raises(ProviderConfigError):
        build_chat_model(settings)


def test_a_self_hosted_server_needs_no_key() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        llm="openai",
        openai_model="llama3.2",
        openai_base_url="http://localhost:11434/v1/",
    )
    assert settings.llm_problems() == []
    model = build_chat_model(settings)
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "http://localhost:11434/v1" and model.name == "openai:llama3.2"
    assert "transportWarning" not in model.health.facts
    remote = OpenAIChatModel(base_url="http://gpu-box:8000/v1", model="m", api_key="k")
    assert "unencrypted to gpu-box" in remote.health.facts["transportWarning"]
