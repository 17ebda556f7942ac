"""Claude through the `anthropic` SDK (the only module that imports it).

- **Prompt caching.** The system prompt is sent as one text block marked
  `cache_control: {"type": "ephemeral"}`. The cached prefix is tools + system (the API orders
  them so), both static; everything per-turn is in the user message after the breakpoint. Usage
  records `cache_read_input_tokens` and `cache_creation_input_tokens` separately from `input`.
  (Caching engages only above the model's minimum cacheable length, ~1–4k tokens depending on
  the model; below it the API simply reports zero cache tokens.)
- **JSON mode: a forced tool.** `complete_json` offers one tool, `record_output`, whose
  `input_schema` is the caller's schema, with `tool_choice` forcing it; the reply is the tool
  call's parsed `input`. Chosen over assistant prefill (not accepted by every current model and
  still free text to parse) and over `output_config.format` (stricter schema subset than the
  condenser's schema needs). The result is still clamped by the caller: a schema is not a check.
- **Tools.** `TOOL_SPECS` are passed as they are (no customer parameter exists to pass); each
  `tool_use` is run through the request's `tool_runner` (bound to the verified session) and
  answered with a `tool_result` block; at most `max_tool_rounds` rounds, then one last call with
  `tool_choice: none` forces a text answer. Tool-runner exceptions (e.g. the store is down) are
  not provider failures and propagate unchanged.
- **Errors.** Every SDK or response-shape failure becomes `ProviderError`; authentication,
  permission and unknown-model errors become `ProviderConfigError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

import anthropic
import httpx2

from app.providers.chat.base import (
    ChatMessage,
    GenerationReply,
    GenerationRequest,
    JsonReply,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
    drain,
)
from app.providers.errors import ProviderConfigError, ProviderError
from app.text import tool_result_text

JSON_TOOL = "record_output"
CACHE = {"type": "ephemeral"}
ROUND_SEPARATOR = "\n\n"


def _usage(raw: Any) -> Usage:
    def count(name: str) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else 0

    return Usage(
        input=count("input_tokens"),
        output=count("output_tokens"),
        cache_read=count("cache_read_input_tokens"),
        cache_write=count("cache_creation_input_tokens"),
    )


def _translate(exc: Exception) -> ProviderError:
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(
        exc,
        anthropic.AuthenticationError | anthropic.PermissionDeniedError | anthropic.NotFoundError,
    ):
        return ProviderConfigError(f"anthropic rejected the configuration: {exc}")
    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderError("anthropic timed out")
    if isinstance(exc, anthropic.APIStatusError):
        return ProviderError(f"anthropic returned HTTP {exc.status_code}: {exc.message}")
    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderError(f"could not reach anthropic: {exc}")
    return ProviderError(f"anthropic call failed: {type(exc).__name__}: {exc}")


def _blocks(message: Any) -> list[Any]:
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ProviderError("anthropic returned a message without content")
    return content


def _text_of(message: Any) -> str:
    return "".join(
        b.text for b in _blocks(message) if getattr(b, "type", None) == "text" and b.text
    )


def _as_param(block: Any) -> dict[str, Any] | None:
    """An assistant content block echoed back in the next request (text and tool_use only)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return None


class AnthropicChatModel:
    """`ChatModel` over the Messages API."""

    def __init__(
        self,
        api_key: str | None,
        *,
        model: str,
        timeout_seconds: float = 30.0,
        max_retries: int = 1,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not api_key:
            raise ProviderConfigError("LLM=anthropic needs ANTHROPIC_API_KEY")
        self.model = model
        self.name = f"anthropic:{model}"
        self.language_model = True
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            timeout=timeout_seconds,
            max_retries=max_retries,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _params(
        self, system: str, messages: Sequence[Any], max_tokens: int, **extra: Any
    ) -> dict[str, Any]:
        return {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": CACHE}],
            "messages": list(messages),
            **extra,
        }

    async def _create(self, params: dict[str, Any]) -> Any:
        try:
            return await self._client.messages.create(**params)
        except Exception as exc:
            raise _translate(exc) from exc

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        tool = {
            "name": JSON_TOOL,
            "description": "Record the result. Call this exactly once with the complete object.",
            "input_schema": dict(schema),
        }
        params = self._params(
            system,
            [{"role": m.role, "content": m.content} for m in messages],
            1024,
            tools=[tool],
            tool_choice={"type": "tool", "name": JSON_TOOL},
        )
        message = await self._create(params)
        for block in _blocks(message):
            if (
                getattr(block, "type", None) != "tool_use"
                or getattr(block, "name", "") != JSON_TOOL
            ):
                continue
            data = getattr(block, "input", None)
            if not isinstance(data, dict):
                raise ProviderError("anthropic's structured output is not an object")
            return JsonReply(data=data, usage=_usage(message.usage), model=self.name)
        raise ProviderError("anthropic returned no structured output")

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        return await drain(self._run(request, streaming=False))

    def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        return self._run(request, streaming=True)

    async def _stream_round(self, params: dict[str, Any], sink: list[Any]) -> AsyncIterator[str]:
        """One streamed API call: yields text deltas, appends the final message to `sink`."""
        try:
            async with self._client.messages.stream(**params) as stream:
                async for event in stream:
                    if (
                        event.type == "content_block_delta"
                        and event.delta.type == "text_delta"
                        and event.delta.text
                    ):
                        yield event.delta.text
                sink.append(await stream.get_final_message())
        except Exception as exc:
            raise _translate(exc) from exc

    async def _run(
        self, request: GenerationRequest, *, streaming: bool
    ) -> AsyncIterator[StreamEvent]:
        messages: list[dict[str, Any]] = [
            {"role": m.role, "content": m.content} for m in request.messages
        ]
        tools = [dict(t) for t in request.tools] if request.tool_runner is not None else []
        usage = Usage()
        calls: list[ToolCall] = []
        text: list[str] = []
        stop: str | None = None
        rounds = 0
        while True:
            extra: dict[str, Any] = {}
            if tools:
                extra["tools"] = tools
                if rounds >= request.max_tool_rounds:
                    extra["tool_choice"] = {"type": "none"}
            params = self._params(request.system, messages, request.max_tokens, **extra)
            separate = bool(text)
            if streaming:
                sink: list[Any] = []
                async for piece in self._stream_round(params, sink):
                    if separate:
                        separate = False
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(piece)
                    yield TextDelta(piece)
                if not sink:
                    raise ProviderError("anthropic stream ended without a message")
                message = sink[0]
            else:
                message = await self._create(params)
                piece = _text_of(message)
                if piece:
                    if separate:
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(piece)
                    yield TextDelta(piece)
            usage = usage + _usage(getattr(message, "usage", None))
            stop = getattr(message, "stop_reason", None)
            uses = [b for b in _blocks(message) if getattr(b, "type", None) == "tool_use"]
            if stop != "tool_use" or not uses or request.tool_runner is None:
                break
            if rounds >= request.max_tool_rounds:
                break
            rounds += 1
            echoed = [p for p in (_as_param(b) for b in _blocks(message)) if p is not None]
            messages.append({"role": "assistant", "content": echoed})
            results: list[dict[str, Any]] = []
            for use in uses:
                args = use.input if isinstance(use.input, dict) else {}
                outcome = await request.tool_runner(str(use.name), dict(args))
                calls.append(ToolCall(str(use.name), dict(args), outcome))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.id,
                        "content": tool_result_text(outcome),
                        "is_error": not outcome.ok,
                    }
                )
            messages.append({"role": "user", "content": results})
        reply = GenerationReply(
            text="".join(text),
            usage=usage,
            model=self.name,
            tool_calls=tuple(calls),
            stop_reason=cast(str | None, stop),
        )
        yield StreamDone(reply)
