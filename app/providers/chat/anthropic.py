"""Claude through the `anthropic` SDK (the only module that imports it).

- **One pooled client per process.** `Services` builds one `AnthropicChatModel`; its
  `AsyncAnthropic` keeps the HTTP connection pool for every turn and is closed on shutdown.
- **Deadlines and retries are ours.** The SDK runs with `max_retries=0`: its own loop would sleep a
  `retry-after` of any length. `app.providers.budget.call_with_retries` retries (once, by
  `tuning.provider_max_retries`) only when the failure is retryable (`x-should-retry` first, then
  408/409/429/5xx/529, connection errors, timeouts) and the wait fits the remaining budget; each
  attempt's HTTP timeout is what is left of the caller's deadline. A stream is retried only
  before its first text delta (what the customer saw cannot be taken back). Each model call of
  the tool loop runs under `GenerationRequest.round_timeout_seconds`. After a timeout,
  connection failure or 5xx/overload, calls fail fast for `tuning.provider_circuit_open_seconds`
  (`budget.CircuitBreaker`), so an outage costs one turn per window a stage budget, not all.
- **Prompt caching, only where it can engage.** The prefix the API caches is tools + system
  (in that order); everything per-turn is in the messages after it. A `cache_control` breakpoint
  is put on the system block only when that prefix reaches the model's minimum cacheable length
  (`models.py`): measured with the token-counting endpoint when `measure_prefix` has been run,
  else a deliberately low estimate. Below the minimum the API silently caches nothing, so no
  breakpoint is sent and the call is not counted as cache-eligible (`Usage.cache_eligible_calls`).
- **JSON mode** follows the model's capabilities (`models.json_mode`): a forced `record_output`
  tool whose `input_schema` is the caller's schema (never combined with thinking, which the API
  rejects); or the structured-output format; or an offered tool. The caller still clamps the
  result: a schema is not a check.
- **Stop reasons.** `pause_turn` is continued (the paused assistant turn is sent back as is, up
  to `MAX_CONTINUATIONS`); `refusal` and `max_tokens` are returned on the reply for the caller to
  handle (generate.py); in JSON mode both are errors (a cut or refused object is not an object).
- **Echoing an assistant turn** (tool loop, continuation) sends its content blocks unchanged —
  thinking and redacted-thinking blocks with their signatures included, as the API requires —
  except empty text blocks, which the API rejects.
- **Errors.** Every failure becomes `ProviderError` with the API's error type as its `kind`
  (`overloaded_error`, `rate_limit_error`, …), including error events that arrive mid-stream on an
  HTTP 200; authentication, permission and not-found (unknown model) become
  `ProviderConfigError`, recorded in `health` for /readyz. Tool-runner exceptions (e.g. the store
  is down) are not provider failures and propagate unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

import anthropic
import httpx2

from app.providers import budget
from app.providers.budget import CircuitBreaker, Retryable, RetryPolicy, retry_after_seconds
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
from app.providers.chat.models import (
    ModelCapabilities,
    capabilities_for,
    estimate_tokens,
    json_mode,
    thinking_param,
)
from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.health import ProviderHealth
from app.text import tool_result_text

JSON_TOOL = "record_output"
CACHE = {"type": "ephemeral"}
ROUND_SEPARATOR = "\n\n"
MAX_CONTINUATIONS = 2  # pause_turn continuations per answer
JSON_MAX_TOKENS = 1024
_CONFIG_ERRORS = (
    anthropic.AuthenticationError,
    anthropic.PermissionDeniedError,
    anthropic.NotFoundError,
)


def _usage(raw: Any, *, eligible: bool) -> Usage:
    def count(name: str) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else 0

    return Usage(
        input=count("input_tokens"),
        output=count("output_tokens"),
        cache_read=count("cache_read_input_tokens"),
        cache_write=count("cache_creation_input_tokens"),
        calls=1,
        cache_eligible_calls=1 if eligible else 0,
    )


def _error_type(body: object) -> str | None:
    """`error.type` of an API error body: {"type": "error", "error": {"type": …, "message": …}}."""
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping) and isinstance(inner.get("type"), str):
            return str(inner["type"])
    return None


def _error_message(body: object, fallback: str) -> str:
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return fallback


def classify(exc: BaseException) -> Retryable:
    """Our error for an SDK failure, and whether (and when) it may be retried."""
    if isinstance(exc, ProviderError):
        return Retryable(exc, False)
    if isinstance(exc, _CONFIG_ERRORS):
        kind = _error_type(exc.body) or f"http_{exc.status_code}"
        message = _error_message(exc.body, exc.message)
        return Retryable(
            ProviderConfigError(f"anthropic rejected the configuration ({kind}): {message}", kind),
            False,
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return Retryable(ProviderError("anthropic timed out", "timeout"), True)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        kind = _error_type(exc.body) or f"http_{status}"
        request_id = exc.response.headers.get("request-id") or ""
        where = "mid-stream" if status == 200 else f"HTTP {status}"
        error = ProviderError(
            f"anthropic {kind} ({where}{', ' + request_id if request_id else ''}): "
            f"{_error_message(exc.body, exc.message)}",
            kind,
        )
        hint = exc.response.headers.get("x-should-retry")
        if hint in ("true", "false"):
            retry = hint == "true"
        elif status == 200:  # an error event in the stream: the type says whether it is transient
            retry = kind in ("overloaded_error", "api_error", "rate_limit_error")
        else:
            retry = status in (408, 409, 429) or status >= 500
        return Retryable(error, retry, retry_after_seconds(exc.response.headers))
    if isinstance(exc, anthropic.APIConnectionError):
        return Retryable(ProviderError(f"could not reach anthropic: {exc}", "connection"), True)
    if isinstance(exc, TimeoutError):
        return Retryable(ProviderError("anthropic timed out", "timeout"), True)
    return Retryable(
        ProviderError(f"anthropic call failed: {type(exc).__name__}: {exc}", "bad_response"),
        False,
    )


def _blocks(message: Any) -> list[Any]:
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ProviderError("anthropic returned a message without content", "bad_response")
    return content


def _text_of(message: Any) -> str:
    return "".join(
        b.text for b in _blocks(message) if getattr(b, "type", None) == "text" and b.text
    )


def echo_blocks(message: Any) -> list[dict[str, Any]]:
    """An assistant turn's content as request blocks: unchanged, minus empty text blocks."""
    out: list[dict[str, Any]] = []
    for block in _blocks(message):
        kind = getattr(block, "type", None)
        if kind == "text":
            if block.text:
                out.append({"type": "text", "text": block.text})
        elif kind == "tool_use":
            out.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        elif kind == "thinking":
            out.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            )
        elif kind == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": block.data})
        elif hasattr(block, "model_dump"):  # a block type newer than this adapter: as received
            out.append(cast(dict[str, Any], block.model_dump(exclude_none=True)))
    return out


def _prefix_key(system: str, tools: Sequence[Mapping[str, Any]]) -> str:
    raw = json.dumps([system, list(tools)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


class AnthropicChatModel:
    """`ChatModel` over the Messages API."""

    def __init__(
        self,
        api_key: str | None,
        *,
        model: str,
        timeout_seconds: float = 30.0,
        retry: RetryPolicy | None = None,
        thinking_budget_tokens: int = 0,
        capabilities: ModelCapabilities | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not api_key:
            raise ProviderConfigError("LLM=anthropic needs ANTHROPIC_API_KEY")
        self.model = model
        self.name = f"anthropic:{model}"
        self.language_model = True
        self.capabilities = capabilities or capabilities_for(model)
        self.retry = retry or RetryPolicy(call_timeout_seconds=timeout_seconds)
        self.thinking = thinking_param(self.capabilities, thinking_budget_tokens)
        self.thinking_budget_tokens = thinking_budget_tokens if self.thinking else 0
        self.health = ProviderHealth("anthropic")
        self.breaker = CircuitBreaker(self.retry.circuit_open_seconds)
        self.health.facts["cacheMinTokens"] = self.capabilities.cache_min_tokens
        self._measured: dict[str, int] = {}
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            timeout=timeout_seconds,
            max_retries=0,  # retries are ours: bounded by the caller's remaining budget
            http_client=http_client,
        )

    async def aclose(self) -> None:
        await self._client.close()

    # ------------------------------------------------------------------ caching

    def prefix_tokens(self, system: str, tools: Sequence[Mapping[str, Any]] = ()) -> int:
        """Tokens in the cacheable prefix (tools + system): measured if known, else estimated."""
        measured = self._measured.get(_prefix_key(system, tools))
        if measured is not None:
            return measured
        return estimate_tokens(len(system) + len(json.dumps(list(tools), ensure_ascii=False)))

    async def measure_prefix(self, system: str, tools: Sequence[Mapping[str, Any]] = ()) -> int:
        """Count the prefix with the token-counting endpoint (free; also proves the key works).

        The count includes a one-character user message the endpoint requires; the difference
        is a few tokens and only makes the cache decision more conservative."""
        params: dict[str, Any] = {
            "model": self.model,
            "system": [{"type": "text", "text": system}],
            "messages": [{"role": "user", "content": "."}],
        }
        if tools:
            params["tools"] = [dict(t) for t in tools]

        async def attempt(seconds: float) -> int:
            result = await self._client.messages.count_tokens(**params, timeout=seconds)
            return int(result.input_tokens)

        count = int(await self._call(attempt))
        self._measured[_prefix_key(system, tools)] = count
        return count

    def _json_tools(self, schema: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tools part of a JSON-mode request (the `record_output` tool, unless the model
        takes the schema as an output format instead)."""
        if json_mode(self.capabilities, thinking=False) == "output_format":
            return []
        tool = {
            "name": JSON_TOOL,
            "description": "Record the result. Call this exactly once with the complete object.",
            "input_schema": dict(schema),
        }
        return [tool]

    async def measure_json_prefix(self, system: str, schema: Mapping[str, Any]) -> int:
        """`measure_prefix` for the prefix `complete_json` sends with this schema."""
        return await self.measure_prefix(system, self._json_tools(schema))

    def _system(self, system: str, tools: Sequence[Mapping[str, Any]]) -> tuple[list[Any], bool]:
        eligible = self.prefix_tokens(system, tools) >= self.capabilities.cache_min_tokens
        block: dict[str, Any] = {"type": "text", "text": system}
        if eligible:
            block["cache_control"] = CACHE
        return [block], eligible

    # ------------------------------------------------------------------ calls

    def _failed(self, error: ProviderError) -> None:
        budget.note_failure(self.breaker, self.health, error)

    def _succeeded(self) -> None:
        budget.note_success(self.breaker, self.health)

    async def _call(self, attempt: budget.Attempt[Any]) -> Any:
        return await budget.guarded_call(
            attempt, classify, self.retry, self.breaker, self.health, provider="anthropic"
        )

    async def _create(self, params: dict[str, Any]) -> Any:
        async def attempt(seconds: float) -> Any:
            message = await self._client.messages.create(**params, timeout=seconds)
            _blocks(message)  # a reply without content is a failed call (counted in health)
            return message

        return await self._call(attempt)

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        mode = json_mode(self.capabilities, thinking=False)  # condensing never needs thinking
        tools = self._json_tools(schema)
        blocks, eligible = self._system(system, tools)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": JSON_MAX_TOKENS,
            "system": blocks,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if mode == "forced_tool":
            params.update(tools=tools, tool_choice={"type": "tool", "name": JSON_TOOL})
        elif mode == "auto_tool":
            params.update(tools=tools, tool_choice={"type": "auto"})
        else:
            params["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
        message = await self._create(params)
        usage = _usage(getattr(message, "usage", None), eligible=eligible)
        stop = getattr(message, "stop_reason", None)
        if stop in ("refusal", "max_tokens"):
            raise ProviderError(f"anthropic structured output stopped by {stop}", stop)
        for block in _blocks(message):
            if (
                getattr(block, "type", None) == "tool_use"
                and getattr(block, "name", "") == JSON_TOOL
            ):
                data = getattr(block, "input", None)
                if not isinstance(data, dict):
                    raise ProviderError(
                        "anthropic's structured output is not an object", "bad_response"
                    )
                return JsonReply(data=data, usage=usage, model=self.name)
        if mode != "forced_tool":
            try:
                data = json.loads(_text_of(message))
            except ValueError:
                data = None
            if isinstance(data, dict):
                return JsonReply(data=data, usage=usage, model=self.name)
        raise ProviderError("anthropic returned no structured output", "bad_response")

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        return await drain(self._run(request, streaming=False))

    def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        return self._run(request, streaming=True)

    async def _stream_round(
        self, params: dict[str, Any], sink: list[Any], round_seconds: float | None
    ) -> AsyncIterator[str]:
        """One streamed API call: yields text deltas, appends the final message to `sink`.

        Retried like `_create` while nothing has been yielded; each wait for the next event is
        bounded by the round's deadline (never by a timeout spanning our `yield`s)."""
        try:
            self.breaker.check("anthropic")
        except ProviderError as exc:
            self._failed(exc)
            raise
        loop = asyncio.get_running_loop()
        left = budget.remaining()
        limits = [
            x for x in (left, round_seconds, self.retry.call_timeout_seconds) if x is not None
        ]
        end = loop.time() + min(limits)
        tries = 0
        while True:
            yielded = False
            try:
                async with asyncio.timeout_at(end):
                    manager = self._client.messages.stream(
                        **params, timeout=max(0.001, end - loop.time())
                    )
                    stream = await manager.__aenter__()
                try:
                    iterator = aiter(stream)
                    while True:
                        try:
                            async with asyncio.timeout_at(end):
                                event = await anext(iterator)
                        except StopAsyncIteration:
                            break
                        if (
                            event.type == "content_block_delta"
                            and event.delta.type == "text_delta"
                            and event.delta.text
                        ):
                            yielded = True
                            yield event.delta.text
                    async with asyncio.timeout_at(end):
                        sink.append(await stream.get_final_message())
                finally:
                    await manager.__aexit__(None, None, None)
                self._succeeded()
                return
            except ProviderConfigError as exc:
                self._failed(exc)
                raise
            except Exception as exc:
                if isinstance(exc, TimeoutError):
                    advice = Retryable(
                        ProviderError("anthropic stream timed out", "timeout"), False
                    )
                else:
                    advice = classify(exc)
                retry = advice.retry and not yielded and tries < self.retry.max_retries
                delay = (
                    advice.after
                    if advice.after is not None
                    else min(self.retry.base_delay * (2**tries), self.retry.max_delay)
                )
                fits = end - loop.time() >= delay + self.retry.min_attempt_seconds
                if not (retry and fits):
                    self._failed(advice.error)
                    raise advice.error from exc
                tries += 1
                await asyncio.sleep(delay)

    def _round_params(
        self,
        request: GenerationRequest,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        force_text: bool,
    ) -> tuple[dict[str, Any], bool]:
        blocks, eligible = self._system(request.system, tools)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens + self.thinking_budget_tokens,
            "system": blocks,
            "messages": list(messages),
        }
        if tools:
            params["tools"] = tools
            if force_text:
                params["tool_choice"] = {"type": "none"}  # accepted with thinking (auto/none)
        if self.thinking is not None:
            params["thinking"] = self.thinking
        return params, eligible

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
        rounds = continuations = 0
        continuing = False  # a pause_turn continuation carries on the same text
        while True:
            params, eligible = self._round_params(
                request, messages, tools, rounds >= request.max_tool_rounds
            )
            separate = bool(text) and not continuing
            continuing = False
            if streaming:
                sink: list[Any] = []
                async for piece in self._stream_round(params, sink, request.round_timeout_seconds):
                    if separate:
                        separate = False
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(piece)
                    yield TextDelta(piece)
                if not sink:
                    raise ProviderError("anthropic stream ended without a message", "bad_response")
                message = sink[0]
            else:
                with budget.deadline(request.round_timeout_seconds):
                    message = await self._create(params)
                piece = _text_of(message)
                if piece:
                    if separate:
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(piece)
                    yield TextDelta(piece)
            usage = usage + _usage(getattr(message, "usage", None), eligible=eligible)
            stop = getattr(message, "stop_reason", None)
            if stop == "pause_turn" and continuations < MAX_CONTINUATIONS:
                continuations += 1
                continuing = True
                messages.append({"role": "assistant", "content": echo_blocks(message)})
                continue
            uses = [b for b in _blocks(message) if getattr(b, "type", None) == "tool_use"]
            if stop != "tool_use" or not uses or request.tool_runner is None:
                break
            if rounds >= request.max_tool_rounds:
                break
            rounds += 1
            messages.append({"role": "assistant", "content": echo_blocks(message)})
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
