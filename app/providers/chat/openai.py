"""Any server that speaks OpenAI's Chat Completions protocol: OpenAI itself, vLLM, Ollama,
llama.cpp's server, LM Studio, gateways. Plain HTTP (`httpx2`, one pooled client per process),
no vendor SDK, so what is sent is exactly the documented wire format and nothing else.

- **Deadlines, retries, outages: the shared ones.** Each attempt's timeout is what is left of
  the caller's budget (`app.providers.budget`); one bounded retry (`tuning.provider_max_retries`)
  for retryable failures — `x-should-retry` when the server sends it, else 408/409/429/5xx,
  connection errors and timeouts — only when the wait (`retry-after-ms`/`retry-after` when sent)
  still fits; a stream is retried only before its first text. After an outage-like failure
  the shared `CircuitBreaker` makes calls fail fast for `tuning.provider_circuit_open_seconds`.
- **Streaming** reads Server-Sent Events: `data:` lines (joined when one event spans several),
  comments and keep-alives ignored, `[DONE]` ends it; text from `delta.content`; tool calls from
  `delta.tool_calls` fragments merged by `index` (name first, `arguments` split anywhere, even
  mid-token); a `{"error": …}` event inside an HTTP 200 stream is a `ProviderError` of its type.
  Usage comes from the final chunk (`stream_options.include_usage`).
- **Tools** are the session tools translated to `{"type": "function", "function": {name,
  description, parameters}}` — the same schemas, none with a customer parameter; the session's
  runner decides whose data is read. After `max_tool_rounds`, `tool_choice: "none"` asks for text.
- **JSON output** (condense/classify): `response_format` `json_schema` (strict when the schema
  allows it), else `json_object`, else instructions only. A server that rejects the field with a
  400 is asked again without it (once per process: the mode learnt is kept and shown in
  `/readyz`); one that ignores it and answers prose or fenced JSON is parsed leniently (fences
  stripped, the first whole `{…}` taken) and checked for the schema's required keys; if that
  fails, one corrective call, then a `ProviderError` (the caller falls back offline; the caller
  also clamps every field: a schema is not a check).
- **Other dialect differences** learnt the same way, from the server's 400: `stream_options`
  dropped when unknown, `max_tokens` renamed `max_completion_tokens` when the model wants that,
  `temperature: 0` (JSON calls) dropped for models that take only the default.
- **Usage**: `prompt_tokens` (minus `prompt_tokens_details.cached_tokens`, counted as cache
  reads), `completion_tokens`. A server that reports none is billed an estimate (3 characters a
  token, on the high side for a spend cap) and the estimate is counted in `/readyz`. No cache
  breakpoints exist in this protocol, so no call is counted as cache-eligible.
- **Stop reasons** in the interface's terms: `stop` → `end_turn`, `length` → `max_tokens`,
  `tool_calls` → `tool_use`, `content_filter` or a `refusal` field → `refusal`.
- **Errors**: 401/403, 404 (unknown model or wrong base URL), a `model_not_found` code and a 429
  `insufficient_quota` (retrying cannot help) are `ProviderConfigError`s, recorded in `health`
  for /readyz; `probe()` calls `GET /models` at start so a bad key shows before a customer asks.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

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
from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.health import ProviderHealth
from app.text import tool_result_text

JsonMode = Literal["json_schema", "json_object", "prompt"]
JSON_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "prompt")
JSON_MAX_TOKENS = 1024
ROUND_SEPARATOR = "\n\n"
CHARS_PER_TOKEN_ESTIMATE = 3.0  # high for English: an estimated bill errs towards the cap
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
JSON_INSTRUCTION = (
    "\n\nReply with one JSON object only, no prose and no code fence, matching this JSON "
    "schema:\n{schema}"
)
JSON_CORRECTION = (
    "That was not a JSON object matching the schema. Reply again with only the JSON object."
)


class StatusError(Exception):
    """A non-2xx answer (or an error event in a 200 stream), before classification."""

    def __init__(
        self,
        status: int,
        body: object,
        headers: Mapping[str, str],
        *,
        in_stream: bool = False,
        where: str | None = None,
    ) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.headers = headers
        self.in_stream = in_stream  # the server gave up on the request after a 200
        self.where = where or ("mid-stream" if in_stream else f"HTTP {status}")


def _error_fields(body: object) -> tuple[str, str | None, str | None]:
    """(message, type, code) from the error shapes these servers send: OpenAI's
    `{"error": {"message", "type", "code"}}`, vLLM's `{"object": "error", "message", "type"}`,
    Ollama's `{"error": "text"}`."""
    if isinstance(body, Mapping):
        inner: object = body.get("error", body)
        if isinstance(inner, str):
            return inner, None, None
        if isinstance(inner, Mapping):
            message = inner.get("message") or inner.get("detail") or json.dumps(inner)[:300]
            kind = inner.get("type")
            code = inner.get("code")
            return (
                str(message),
                kind if isinstance(kind, str) and kind else None,
                code if isinstance(code, str) and code and not code.isdigit() else None,
            )
    if isinstance(body, str) and body.strip():
        return body.strip()[:300], None, None
    return "no error message", None, None


def classify(exc: BaseException) -> Retryable:
    """Our error for an HTTP failure, and whether (and when) it may be retried."""
    if isinstance(exc, ProviderError):
        return Retryable(exc, False)
    if isinstance(exc, StatusError):
        message, kind, code = _error_fields(exc.body)
        status = exc.status
        name = code or kind or f"http_{status}"  # OpenAI's code is the more precise of the two
        where = exc.where
        request_id = exc.headers.get("x-request-id")
        if request_id:
            where += f", {request_id}"
        text = f"openai-compatible server {name} ({where}): {message}"
        if status == 404 or code == "model_not_found":
            return Retryable(
                ProviderConfigError(f"{text} (check OPENAI_MODEL and OPENAI_BASE_URL)", name),
                False,
            )
        if status in (401, 403) or code == "invalid_api_key":
            return Retryable(ProviderConfigError(text, name), False)
        if status == 429 and code == "insufficient_quota":
            return Retryable(ProviderConfigError(text, code), False)
        if status == 429 and name == "http_429":
            name = "rate_limit_error"
        if status >= 500 and name == f"http_{status}":
            name = "unavailable"
        error = ProviderError(text, name)
        hint = exc.headers.get("x-should-retry")
        if hint in ("true", "false"):
            retry = hint == "true"
        elif exc.in_stream:
            retry = True  # an error event: the server gave up on this request, not on us
        else:
            retry = status in (408, 409, 429) or status >= 500
        return Retryable(error, retry, retry_after_seconds(exc.headers))
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return Retryable(ProviderError("openai-compatible server timed out", "timeout"), True)
    if isinstance(exc, httpx2.TransportError):
        return Retryable(
            ProviderError(f"could not reach the openai-compatible server: {exc!r}", "connection"),
            True,
        )
    return Retryable(
        ProviderError(
            f"openai-compatible call failed: {type(exc).__name__}: {exc}", "bad_response"
        ),
        False,
    )


# --------------------------------------------------------------------------- wire format


def function_tools(specs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Our tool specs (name, description, input_schema) as Chat Completions function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec["name"],
                "description": spec.get("description", ""),
                "parameters": dict(spec.get("input_schema") or {"type": "object"}),
            },
        }
        for spec in specs
    ]


def strict_compatible(schema: object) -> bool:
    """OpenAI's strict structured outputs need every object closed (`additionalProperties:
    false`) with every property required; sent strict only then."""
    if isinstance(schema, Mapping):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            if schema.get("additionalProperties") is not False:
                return False
            if set(schema.get("required") or ()) != set(props):
                return False
        return all(strict_compatible(v) for v in schema.values())
    if isinstance(schema, list):
        return all(strict_compatible(v) for v in schema)
    return True


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a reply that may wrap it in prose or a code fence, else None."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _missing_required(data: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    return [k for k in schema.get("required") or () if k not in data]


def _count(raw: object, *path: str) -> int:
    value: object = raw
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, int) and value >= 0 else 0


def usage_from(raw: object) -> Usage | None:
    """Our `Usage` from a response's `usage`; None when the server reported none."""
    if not isinstance(raw, Mapping) or "prompt_tokens" not in raw:
        return None
    prompt = _count(raw, "prompt_tokens")
    cached = min(prompt, _count(raw, "prompt_tokens_details", "cached_tokens"))
    return Usage(
        input=prompt - cached,
        output=_count(raw, "completion_tokens"),
        cache_read=cached,
        calls=1,
    )


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE) if text else 0


def _prompt_text(params: Mapping[str, Any]) -> str:
    parts = [json.dumps(params.get("tools", []), ensure_ascii=False)]
    for message in params.get("messages", []):
        parts.append(json.dumps(message, ensure_ascii=False))
    return "".join(parts)


def redact_url(url: str) -> str:
    """A base URL safe to show in /readyz (no user:password@)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass
class ThinkStripper:
    """Drops a leading `<think>…</think>` block from streamed text: reasoning models served by
    Ollama, llama.cpp or vLLM without a reasoning parser put their thinking in `content`, and a
    customer must never see it. Text is held back only while it could still be that block."""

    state: Literal["start", "inside", "after", "pass"] = "start"
    held: str = ""

    def feed(self, piece: str) -> str:
        if self.state == "pass":
            return piece
        if self.state == "after":  # the blank lines between the block and the answer
            piece = piece.lstrip()
            if piece:
                self.state = "pass"
            return piece
        self.held += piece
        if self.state == "start":
            lead = self.held.lstrip()
            if lead.startswith(THINK_OPEN):
                self.state = "inside"
            elif THINK_OPEN.startswith(lead):
                return ""  # still possibly the opening tag
            else:
                self.state = "pass"
                out, self.held = self.held, ""
                return out
        end = self.held.find(THINK_CLOSE)
        if end < 0:
            return ""
        rest, self.held = self.held[end + len(THINK_CLOSE) :], ""
        self.state = "after"
        return self.feed(rest)

    def finish(self) -> str:
        """What is still held at the end: text that only looked like a tag's start; an
        unclosed thinking block is dropped whole."""
        out = self.held if self.state == "start" else ""
        self.held = ""
        return out


def strip_thinking(text: str) -> str:
    stripper = ThinkStripper()
    return stripper.feed(text) + stripper.finish()


@dataclass
class _Round:
    """What one API call produced, streamed or not."""

    text: str = ""
    refusal: str = ""
    finish: str | None = None
    usage: Usage | None = None
    calls: dict[int, dict[str, str]] = field(default_factory=dict)  # index → id, name, arguments
    thinking: ThinkStripper = field(default_factory=ThinkStripper)
    done: bool = False  # the stream's `[DONE]` arrived

    def feed(self, piece: str) -> str:
        """Add streamed content; returns what may be shown (never a thinking block)."""
        shown = self.thinking.feed(piece)
        self.text += shown
        return shown

    def flush(self) -> str:
        shown = self.thinking.finish()
        self.text += shown
        return shown

    def add_tool_fragment(self, position: int, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        slot = self.calls.setdefault(
            index if isinstance(index, int) else position, {"id": "", "name": "", "arguments": ""}
        )
        if isinstance(fragment.get("id"), str) and fragment["id"]:
            slot["id"] = fragment["id"]
        function = fragment.get("function")
        if isinstance(function, Mapping):
            if isinstance(function.get("name"), str) and function["name"]:
                slot["name"] = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                slot["arguments"] += arguments
            elif isinstance(arguments, Mapping):  # some servers send an object, not its text
                slot["arguments"] += json.dumps(arguments)

    def tool_calls(self) -> list[dict[str, str]]:
        out = []
        for n, index in enumerate(sorted(self.calls)):
            call = dict(self.calls[index])
            if not call["name"]:
                continue
            call["id"] = call["id"] or f"call_{n}"
            out.append(call)
        return out

    @property
    def stop_reason(self) -> str | None:
        if self.refusal:
            return "refusal"
        if self.tool_calls():
            return "tool_use"  # some servers end a tool-call turn with "stop"
        if self.finish is None:
            return None
        return STOP_REASONS.get(self.finish, self.finish)


def _message_round(payload: object) -> _Round:
    """A non-streamed completion as a `_Round`."""
    if not isinstance(payload, Mapping):
        raise ProviderError("openai-compatible server returned a non-object", "bad_response")
    if "error" in payload and not payload.get("choices"):
        raise StatusError(200, payload, {}, in_stream=True, where="an error in a 200 body")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ProviderError("openai-compatible server returned no choices", "bad_response")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise ProviderError("openai-compatible server returned no message", "bad_response")
    out = _Round(usage=usage_from(payload.get("usage")))
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    if isinstance(content, str):
        out.text = strip_thinking(content)
    if isinstance(message.get("refusal"), str):
        out.refusal = message["refusal"]
    for position, call in enumerate(message.get("tool_calls") or []):
        if isinstance(call, Mapping):
            out.add_tool_fragment(position, call)
    finish = choice.get("finish_reason")
    out.finish = finish if isinstance(finish, str) else None
    return out


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) per Server-Sent Event; comments and empty events skipped."""
    event, data = "", list[str]()
    async for line in lines:
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):  # a comment: keep-alives, gateways' "PROCESSING"
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield event or "message", "\n".join(data)


# --------------------------------------------------------------------------- the adapter


class OpenAIChatModel:
    """`ChatModel` over `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_seconds: float = 30.0,
        retry: RetryPolicy | None = None,
        json_mode: JsonMode = "json_schema",
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise ProviderConfigError("LLM=openai needs OPENAI_MODEL")
        self.model = model
        self.name = f"openai:{model}"
        self.language_model = True
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy(call_timeout_seconds=timeout_seconds)
        self.json_mode: JsonMode = json_mode
        self.health = ProviderHealth("openai")
        self.breaker = CircuitBreaker(self.retry.circuit_open_seconds)
        # request dialect, adjusted when the server rejects a field (see `_adapt`)
        self.stream_usage = True
        self.max_tokens_field = "max_tokens"
        self.send_temperature = True  # 0 for JSON; some reasoning models accept only the default
        self.estimated_usage_calls = 0
        self._facts()
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
            url = urlsplit(self.base_url)
            if url.scheme == "http" and url.hostname not in ("localhost", "127.0.0.1", "::1"):
                self.health.facts["transportWarning"] = (
                    f"OPENAI_API_KEY is sent unencrypted to {url.hostname} (http, not https)"
                )
        self._client = http_client or httpx2.AsyncClient(timeout=timeout_seconds)
        self._headers = headers

    def _facts(self) -> None:
        self.health.facts.update(
            baseUrl=redact_url(self.base_url),
            model=self.model,
            jsonMode=self.json_mode,
            streamUsage=self.stream_usage,
            maxTokensField=self.max_tokens_field,
            temperature=self.send_temperature,
            estimatedUsageCalls=self.estimated_usage_calls,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    # ------------------------------------------------------------------ plumbing

    def _failed(self, error: ProviderError) -> None:
        budget.note_failure(self.breaker, self.health, error)

    def _succeeded(self) -> None:
        budget.note_success(self.breaker, self.health)

    async def _call(self, attempt: budget.Attempt[Any]) -> Any:
        return await budget.guarded_call(
            attempt, classify, self.retry, self.breaker, self.health, provider="openai"
        )

    def _url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    async def _post(self, params: dict[str, Any], seconds: float) -> Any:
        response = await self._client.post(
            self._url("chat/completions"), json=params, headers=self._headers, timeout=seconds
        )
        body = _json_or_text(response.content)
        if response.status_code >= 400:
            raise StatusError(response.status_code, body, response.headers)
        return body

    def _adapt(self, exc: BaseException, params: dict[str, Any]) -> bool:
        """Adjust the request to what this server accepts, after it rejected a field (400/422).

        True when the request was changed and may be sent again at once."""
        if not isinstance(exc, StatusError) or exc.status not in (400, 422):
            return False
        message, _, _ = _error_fields(exc.body)
        said = message.lower()
        if "response_format" in params and any(
            w in said for w in ("response_format", "json_schema", "json_object", "structured")
        ):
            current = self.json_mode
            later = JSON_MODES[JSON_MODES.index(current) + 1 :]
            if not later:
                return False
            self.json_mode = later[0]
            self._facts()
            return True
        if "stream_options" in params and "stream_options" in said:
            self.stream_usage = False
            params.pop("stream_options")
            self._facts()
            return True
        if "temperature" in params and "temperature" in said:  # reasoning models: default only
            self.send_temperature = False
            params.pop("temperature")
            self._facts()
            return True
        if "max_tokens" in params and "max_completion_tokens" in said:
            self.max_tokens_field = "max_completion_tokens"
            params["max_completion_tokens"] = params.pop("max_tokens")
            self._facts()
            return True
        return False

    def _usage(self, got: Usage | None, params: Mapping[str, Any], output: str) -> Usage:
        if got is not None:
            return got
        self.estimated_usage_calls += 1
        self._facts()
        return Usage(
            input=estimate_tokens(_prompt_text(params)),
            output=estimate_tokens(output),
            calls=1,
        )

    async def _create(self, build: Any) -> tuple[_Round, dict[str, Any]]:
        """One non-streamed completion; `build()` makes the params (rebuilt after `_adapt`)."""
        for _ in range(4):  # at most one adjustment per dialect field, then a real answer
            params = build()

            async def attempt(seconds: float, params: dict[str, Any] = params) -> Any:
                return await self._post(params, seconds)

            try:
                self.breaker.check("openai")
                payload = await budget.call_with_retries(
                    attempt, _keep_status(classify), self.retry, provider="openai"
                )
                result = _message_round(payload)
            except _RejectedError as rejected:
                if self._adapt(rejected.cause, params):
                    continue
                error = classify(rejected.cause).error
                self._failed(error)
                raise error from rejected.cause
            except StatusError as exc:  # an error object in a 200 body
                error = classify(exc).error
                self._failed(error)
                raise error from exc
            except ProviderError as exc:
                self._failed(exc)
                raise
            self._succeeded()
            return result, params
        raise ProviderError("openai-compatible server kept rejecting the request", "bad_request")

    # ------------------------------------------------------------------ probe

    async def probe(self) -> None:
        """`GET /models` at start: proves the key (401 → a configuration error in /readyz) and
        says whether the server lists OPENAI_MODEL (some serve one model under any name, so an
        unlisted model is a warning in /readyz, not an error)."""

        async def attempt(seconds: float) -> Any:
            response = await self._client.get(
                self._url("models"), headers=self._headers, timeout=seconds
            )
            body = _json_or_text(response.content)
            if response.status_code == 404:
                return None  # no model list on this server: nothing to check
            if response.status_code >= 400:
                raise StatusError(response.status_code, body, response.headers)
            return body

        body = await self._call(attempt)
        if not isinstance(body, Mapping) or not isinstance(body.get("data"), list):
            self.health.facts["modelListed"] = None
            return
        ids = [str(m.get("id")) for m in body["data"] if isinstance(m, Mapping)]
        listed = self.model in ids
        self.health.facts["modelListed"] = listed
        if ids and not listed:
            self.health.facts["warning"] = (
                f"OPENAI_MODEL={self.model} is not among the {len(ids)} models the server lists "
                f"({', '.join(ids[:5])}{'…' if len(ids) > 5 else ''})"
            )

    # ------------------------------------------------------------------ JSON

    def _json_params(
        self,
        system: str,
        messages: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any],
    ) -> dict[str, Any]:
        mode = self.json_mode
        if mode == "prompt":
            system += JSON_INSTRUCTION.format(schema=json.dumps(dict(schema), ensure_ascii=False))
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *messages],
            self.max_tokens_field: JSON_MAX_TOKENS,
        }
        if self.send_temperature:
            params["temperature"] = 0
        if mode == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "output",
                    "schema": dict(schema),
                    "strict": strict_compatible(schema),
                },
            }
        elif mode == "json_object":  # JSON mode needs the word "JSON" in the prompt
            params["messages"][0]["content"] += JSON_INSTRUCTION.format(
                schema=json.dumps(dict(schema), ensure_ascii=False)
            )
            params["response_format"] = {"type": "json_object"}
        return params

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        convo: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in messages]
        usage = Usage()
        problem = ""
        for corrective in (False, True):
            result, params = await self._create(partial(self._json_params, system, convo, schema))
            usage = usage + self._usage(result.usage, params, result.text)
            if result.stop_reason in ("refusal", "max_tokens"):
                raise ProviderError(
                    f"openai-compatible structured output stopped by {result.stop_reason}",
                    str(result.stop_reason),
                )
            data = parse_json_object(result.text)
            if data is not None and not (missing := _missing_required(data, schema)):
                if corrective:
                    self.health.facts["jsonCorrections"] = (
                        int(self.health.facts.get("jsonCorrections", 0)) + 1
                    )
                return JsonReply(data=data, usage=usage, model=self.name)
            problem = (
                "no JSON object in the reply"
                if data is None
                else f"the object lacks required keys {missing}"
            )
            left = budget.remaining()
            if corrective or (left is not None and left < self.retry.min_attempt_seconds):
                break
            convo = [
                *convo,
                {"role": "assistant", "content": result.text[:2000]},
                {"role": "user", "content": JSON_CORRECTION},
            ]
        error = ProviderError(f"openai-compatible server: {problem}", "invalid_json")
        self.health.failed(error)  # a misbehaving server, not an outage: the circuit stays shut
        raise error

    # ------------------------------------------------------------------ generation

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        return await drain(self._run(request, streaming=False))

    def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        return self._run(request, streaming=True)

    def _round_params(
        self,
        request: GenerationRequest,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        force_text: bool,
        streaming: bool,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": request.system}, *messages],
            self.max_tokens_field: request.max_tokens,
        }
        if tools:
            params["tools"] = tools
            if force_text:
                params["tool_choice"] = "none"
        if streaming:
            params["stream"] = True
            if self.stream_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    async def _stream_round(
        self, build: Any, sink: list[tuple[_Round, dict[str, Any]]], round_seconds: float | None
    ) -> AsyncIterator[str]:
        """One streamed call: yields text, appends the round to `sink`. Retried (or re-sent
        with an adjusted dialect) only while nothing has been yielded; every wait for the next
        line is bounded by the round's deadline."""
        try:
            self.breaker.check("openai")
        except ProviderError as exc:
            self._failed(exc)
            raise
        loop = asyncio.get_running_loop()
        limits = [
            x
            for x in (budget.remaining(), round_seconds, self.retry.call_timeout_seconds)
            if x is not None
        ]
        end = loop.time() + min(limits)
        tries = adjustments = 0
        while True:
            params = build()
            state = _Round()
            yielded = False
            try:
                async with asyncio.timeout_at(end):
                    request = self._client.build_request(
                        "POST",
                        self._url("chat/completions"),
                        json=params,
                        headers={**self._headers, "Accept": "text/event-stream"},
                        timeout=max(0.001, end - loop.time()),
                    )
                    response = await self._client.send(request, stream=True)
                try:
                    if response.status_code >= 400:
                        async with asyncio.timeout_at(end):
                            body = _json_or_text(await response.aread())
                        raise StatusError(response.status_code, body, response.headers)
                    if "json" in response.headers.get("content-type", ""):
                        # a server that ignores `stream` and answers one JSON completion
                        async with asyncio.timeout_at(end):
                            whole = _message_round(_json_or_text(await response.aread()))
                        if whole.text:
                            yielded = True
                            yield whole.text
                        state = whole
                    else:
                        events = aiter(sse_events(response.aiter_lines()))
                        while True:
                            try:
                                async with asyncio.timeout_at(end):
                                    _, data = await anext(events)
                            except StopAsyncIteration:
                                break
                            if data.strip() == "[DONE]":
                                state.done = True
                                break
                            for piece in _apply_chunk(state, data, response.headers):
                                yielded = True
                                yield piece
                        if rest := state.flush():
                            yielded = True
                            yield rest
                finally:
                    await response.aclose()
                if state.finish is None and not state.done:
                    raise ProviderError(  # cut off: what was shown may be half a sentence
                        "openai-compatible stream ended before the completion finished",
                        "bad_response",
                    )
                self._succeeded()
                sink.append((state, params))
                return
            except ProviderConfigError as exc:
                self._failed(exc)
                raise
            except Exception as exc:
                if not yielded and adjustments < 3 and self._adapt(exc, params):
                    adjustments += 1
                    continue
                if isinstance(exc, TimeoutError):
                    advice = Retryable(
                        ProviderError(
                            f"openai-compatible stream timed out after {min(limits):.1f}s",
                            "timeout",
                        ),
                        False,
                    )
                else:
                    advice = classify(exc)
                if isinstance(advice.error, ProviderConfigError):
                    self._failed(advice.error)
                    raise advice.error from exc
                retry = advice.retry and not yielded and tries < self.retry.max_retries
                delay = (
                    advice.after
                    if advice.after is not None
                    else min(self.retry.base_delay * (2**tries), self.retry.max_delay)
                )
                fits = end - loop.time() >= delay + self.retry.min_attempt_seconds
                if not retry:
                    self._failed(advice.error)
                    raise advice.error from exc
                if not fits:
                    error = ProviderError(
                        f"{advice.error} (a retry after {delay:.1f}s does not fit the "
                        f"{max(0.0, end - loop.time()):.1f}s left)",
                        advice.error.kind,
                    )
                    self._failed(error)
                    raise error from exc
                tries += 1
                await asyncio.sleep(delay)

    async def _run(
        self, request: GenerationRequest, *, streaming: bool
    ) -> AsyncIterator[StreamEvent]:
        messages: list[dict[str, Any]] = [
            {"role": m.role, "content": m.content} for m in request.messages
        ]
        tools = function_tools(request.tools) if request.tool_runner is not None else []
        usage = Usage()
        calls: list[ToolCall] = []
        text: list[str] = []
        stop: str | None = None
        rounds = 0
        while True:
            force_text = rounds >= request.max_tool_rounds

            def build(force_text: bool = force_text) -> dict[str, Any]:
                return self._round_params(request, messages, tools, force_text, streaming)

            separate = bool(text)
            if streaming:
                sink: list[tuple[_Round, dict[str, Any]]] = []
                async for piece in self._stream_round(build, sink, request.round_timeout_seconds):
                    if separate:
                        separate = False
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(piece)
                    yield TextDelta(piece)
                result, params = sink[0]
            else:
                with budget.deadline(request.round_timeout_seconds):
                    result, params = await self._create(build)
                if result.text and not result.refusal:
                    if separate:
                        text.append(ROUND_SEPARATOR)
                        yield TextDelta(ROUND_SEPARATOR)
                    text.append(result.text)
                    yield TextDelta(result.text)
            usage = usage + self._usage(result.usage, params, result.text)
            stop = result.stop_reason
            wanted = result.tool_calls()
            if stop != "tool_use" or not wanted or request.tool_runner is None or force_text:
                break
            rounds += 1
            messages.append(
                {
                    "role": "assistant",
                    "content": result.text or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"] or "{}"},
                        }
                        for c in wanted
                    ],
                }
            )
            for call in wanted:
                args = _arguments(call["arguments"])
                outcome = await request.tool_runner(call["name"], dict(args))
                calls.append(ToolCall(call["name"], dict(args), outcome))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": tool_result_text(outcome),
                    }
                )
        yield StreamDone(
            GenerationReply(
                text="".join(text),
                usage=usage,
                model=self.name,
                tool_calls=tuple(calls),
                stop_reason=stop,
            )
        )


def _keep_status(inner: Any) -> Any:
    """`classify`, except that a 400/422 leaves the retry loop as `_RejectedError`, so the
    caller can adjust the request's dialect and send it again."""

    def wrapped(exc: BaseException) -> Retryable:
        if isinstance(exc, StatusError) and exc.status in (400, 422) and not exc.in_stream:
            return Retryable(_RejectedError(exc), False)
        result: Retryable = inner(exc)
        return result

    return wrapped


class _RejectedError(ProviderError):
    """Carries a 400/422 through `call_with_retries` (which raises `advice.error`)."""

    def __init__(self, cause: StatusError) -> None:
        super().__init__(str(cause), "invalid_request_error")
        self.cause = cause


def _apply_chunk(state: _Round, data: str, headers: Mapping[str, str]) -> Iterator[str]:
    """Fold one `data:` payload into `state`; yields its text."""
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise ProviderError(
            f"openai-compatible stream sent a non-JSON event: {data[:80]!r}", "bad_response"
        ) from exc
    if not isinstance(chunk, Mapping):
        return
    if chunk.get("error"):
        raise StatusError(200, chunk, headers, in_stream=True)
    got = usage_from(chunk.get("usage"))
    if got is not None:
        state.usage = got
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta") or {}
        if isinstance(delta, Mapping):
            piece = delta.get("content")
            if isinstance(piece, str) and piece and (shown := state.feed(piece)):
                yield shown
            if isinstance(delta.get("refusal"), str):
                state.refusal += delta["refusal"]
            for position, fragment in enumerate(delta.get("tool_calls") or []):
                if isinstance(fragment, Mapping):
                    state.add_tool_fragment(position, fragment)
        finish = choice.get("finish_reason")
        if isinstance(finish, str):
            state.finish = finish


def _arguments(raw: str) -> dict[str, Any]:
    """A tool call's arguments; malformed JSON becomes `{}` (the tool then reports bad input)."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _json_or_text(content: bytes) -> object:
    try:
        return json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")[:2000]
