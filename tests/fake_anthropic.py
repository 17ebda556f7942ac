"""A fake Anthropic Messages API that speaks the wire format, behind `httpx2.MockTransport`.

What it does that the real API does, so the adapter meets it before production does:

- checks the headers every request carries (the key — `x-api-key`, or `Authorization: Bearer`
  as SDK 2.x sends it —, a dated `anthropic-version`, a JSON body) and answers 401/400 as the
  API does when one is missing;
- answers `POST /v1/messages` from a queue of scripted replies, as JSON or as an SSE stream, and
  `POST /v1/messages/count_tokens` with a token count;
- streams like the API: `message_start` (with usage), `ping` events, text in several
  `text_delta`s, tool input as `input_json_delta` chunks of which the *first is empty*, thinking
  blocks as `thinking_delta`s plus a `signature_delta`, `message_delta` with the stop reason
  (`end_turn`, `tool_use`, `max_tokens`, `refusal`, `pause_turn`), `message_stop`; or an
  `error` event in the middle of an HTTP 200 stream;
- errors as the API sends them: `{"type": "error", "error": {"type", "message"}, "request_id"}`
  with a `request-id` header, 529 as `overloaded_error`, `retry-after` on 429, and
  `x-should-retry` where the API sets it;
- usage computed from the request, cache counts included: a `cache_control` breakpoint creates a
  cache entry only when the prefix up to it (tools, then system blocks) reaches the model's
  minimum cacheable length, and a later call *reads* it only when its prefix is byte-for-byte
  the same (same model, same tools serialised in the same order, same system blocks): one
  character of per-turn content in the prefix and every call writes, none reads. Below the
  minimum both cache counts are 0, as the real API reports.

Token counts use `fake_tokens`: 3.5 characters a token (Claude's rough ratio for English prose;
its tokenizer gives more tokens per character on JSON and non-English text, so real counts of
our prefixes are, if anything, higher). `POST /v1/messages/count_tokens` answers with the shape
the real endpoint has (`{"input_tokens": N}` for a body of model, system, tools and messages),
counted the same way; it is deliberately not the adapter's own estimate (4 characters a token).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from app.providers.budget import RetryPolicy
from app.providers.chat.anthropic import AnthropicChatModel
from tuning import TUNING

MODEL = "claude-sonnet-4-6"
API_KEY = "sk-ant-test-key"
# Minimum cacheable prefix per model, as Anthropic documents it (Sonnet 4.6: the observed 2,048).
CACHE_MINIMUM = {
    "claude-sonnet-4-6": 2048,
    "claude-sonnet-4-5": 1024,
    "claude-sonnet-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4-6": 4096,
    "claude-haiku-4-5": 4096,
}


def fake_tokens(text: str) -> int:
    return math.ceil(len(text) / 3.5)


# --------------------------------------------------------------------------- content blocks


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(name: str, args: Any, id: str = "toolu_01") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": args}


def thinking_block(thinking: str, signature: str = "sig-EqQBCgIYAhIM") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


def redacted_thinking(data: str = "EmwKAhgBEgy3va3pzix") -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


@dataclass(frozen=True)
class Hang:
    """The API accepts the request and never answers."""


@dataclass(frozen=True)
class Reply:
    """One scripted assistant message; `stream` says how the fake sends it."""

    blocks: tuple[dict[str, Any], ...]
    stop_reason: str = "end_turn"
    stream: bool = False
    error_after: dict[str, Any] | None = None  # stream only: an error event after the blocks
    split: int = 3  # stream only: how many deltas each text block is cut into


def message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> Reply:
    return Reply(tuple(blocks), stop_reason)


def sse(
    *texts: str,
    tool: dict[str, Any] | None = None,
    thinking: str | None = None,
    stop_reason: str | None = None,
    error: str | None = None,
) -> Reply:
    """A streamed reply: optional thinking, one text block per `texts` item, optional tool use;
    `error="overloaded_error"` ends the stream with an error event instead of a stop."""
    blocks: list[dict[str, Any]] = []
    if thinking is not None:
        blocks.append(thinking_block(thinking))
    blocks.extend(text_block(t) for t in texts)
    if tool is not None:
        blocks.append(tool)
    stop = stop_reason or ("tool_use" if tool is not None else "end_turn")
    err = {"type": error, "message": error.replace("_", " ")} if error else None
    return Reply(tuple(blocks), stop, stream=True, error_after=err)


def error_response(
    status: int,
    message: str = "boom",
    *,
    kind: str | None = None,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> httpx2.Response:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
    body = {
        "type": "error",
        "error": {"type": kind or kinds.get(status, "api_error"), "message": message},
        "request_id": "req_011CTestError",
    }
    headers = {"request-id": "req_011CTestError"}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    return httpx2.Response(status, json=body, headers=headers)


# --------------------------------------------------------------------------- the fake API


def _prefix_text(body: dict[str, Any], upto_breakpoint: bool) -> tuple[str, bool]:
    """Text of tools + system (the cacheable prefix) and whether a breakpoint marks it."""
    parts = [json.dumps(body.get("tools", []), sort_keys=True)]
    marked = False
    for block in _system_blocks(body):
        parts.append(block.get("text", ""))
        if "cache_control" in block:
            marked = True
            if upto_breakpoint:
                break
    return "".join(parts), marked


def _system_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    system = body.get("system", [])
    return [{"type": "text", "text": system}] if isinstance(system, str) else list(system)


def cache_key(body: dict[str, Any]) -> str:
    """What a cache entry is looked up by: the model and the exact prefix bytes up to the last
    breakpoint (tools as sent, in order; system blocks as sent)."""
    blocks = _system_blocks(body)
    marks = [i for i, b in enumerate(blocks) if "cache_control" in b]
    upto = blocks[: marks[-1] + 1] if marks else blocks
    return json.dumps([body["model"], body.get("tools", []), upto], ensure_ascii=False)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, sort_keys=True)


@dataclass
class MessagesAPI:
    """Queued replies for POST /v1/messages; keeps every request (headers and body)."""

    responses: deque[Any] = field(default_factory=deque)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    cached_prefixes: set[str] = field(default_factory=set)
    counted: list[dict[str, Any]] = field(default_factory=list)

    def add(self, *items: Any) -> MessagesAPI:
        """`Reply` → JSON or SSE; `httpx2.Response` as is; an exception → raised by the
        transport; a callable → called with the request body, its result used as above."""
        self.responses.extend(items)
        return self

    # -- usage

    def usage_for(self, body: dict[str, Any], output_text: str) -> dict[str, int]:
        prefix, marked = _prefix_text(body, upto_breakpoint=True)
        prefix_tokens = fake_tokens(prefix)
        rest = sum(fake_tokens(_content_text(m.get("content"))) for m in body["messages"])
        minimum = CACHE_MINIMUM.get(body["model"], 4096)
        read = write = 0
        if marked and prefix_tokens >= minimum:
            key = cache_key(body)
            if key in self.cached_prefixes:
                read = prefix_tokens
            else:
                write = prefix_tokens
                self.cached_prefixes.add(key)
        else:
            rest += prefix_tokens
        return {
            "input_tokens": rest,
            "output_tokens": max(1, fake_tokens(output_text)),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }

    # -- transport

    def handler(self, request: httpx2.Request) -> Any:
        assert request.method == "POST"
        headers = {k.lower(): v for k, v in request.headers.items()}
        keyed = headers.get("x-api-key") == API_KEY or headers.get("authorization") == (
            f"Bearer {API_KEY}"
        )
        if not keyed:  # what the API answers a request without a valid key
            return error_response(401, "invalid x-api-key")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", headers.get("anthropic-version", "")):
            return error_response(400, "anthropic-version: header is required")
        if not headers.get("content-type", "").startswith("application/json"):
            return error_response(400, "content-type must be application/json")
        body = json.loads(request.content)
        if request.url.path == "/v1/messages/count_tokens":
            self.counted.append(body)
            prefix, _ = _prefix_text(body, upto_breakpoint=False)
            messages = sum(fake_tokens(_content_text(m["content"])) for m in body["messages"])
            return self._ok({"input_tokens": fake_tokens(prefix) + messages})
        assert request.url.path == "/v1/messages", request.url
        self.bodies.append(body)
        self.headers.append(headers)
        if not self.responses:
            raise AssertionError("fake Messages API: no scripted reply left")
        item = self.responses.popleft()
        if callable(item) and not isinstance(item, Reply):
            item = item(body)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Hang):
            return _never()
        if isinstance(item, httpx2.Response):
            return item
        if isinstance(item, dict):  # a raw JSON body (malformed replies)
            return self._ok(item)
        assert isinstance(item, Reply)
        if body.get("stream"):
            return self._stream(body, item)
        assert not item.stream, "scripted a stream for a non-streaming request"
        return self._ok(self._message(body, item))

    def _ok(self, payload: dict[str, Any]) -> httpx2.Response:
        return httpx2.Response(200, json=payload, headers={"request-id": "req_011CTestOk"})

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        out = "".join(_content_text(b.get("text") or b.get("input") or "") for b in reply.blocks)
        return {
            "id": "msg_01Test",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": list(reply.blocks),
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": self.usage_for(body, out),
        }

    def _stream(self, body: dict[str, Any], reply: Reply) -> httpx2.Response:
        full = self._message(body, reply)
        start = {**full, "content": [], "stop_reason": None}
        start["usage"] = {**full["usage"], "output_tokens": 1}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for i, block in enumerate(reply.blocks):
            events.extend(_block_events(i, block, reply.split))
            if i == 0:
                events.append(("ping", {"type": "ping"}))
        if reply.error_after is not None:
            events.append(("error", {"type": "error", "error": reply.error_after}))
        else:
            events.append(
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                        "usage": {"output_tokens": full["usage"]["output_tokens"]},
                    },
                )
            )
            events.append(("message_stop", {"type": "message_stop"}))
        text = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "request-id": "req_011CTestStream"},
            content=text.encode(),
        )

    def model(self, api_key: str = API_KEY, **kwargs: Any) -> AnthropicChatModel:
        """The adapter as production builds it (its retry policy from tuning.py)."""
        kwargs.setdefault("retry", RetryPolicy.from_tuning(TUNING))
        kwargs.setdefault("model", MODEL)
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
        return AnthropicChatModel(api_key, http_client=client, **kwargs)


async def _never() -> httpx2.Response:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable: the caller's deadline cancels this")


def _pieces(text: str, n: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / max(1, n)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(
    index: int, block: dict[str, Any], split: int
) -> list[tuple[str, dict[str, Any]]]:
    def delta(d: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})

    kind = block["type"]
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [delta({"type": "text_delta", "text": p}) for p in _pieces(block["text"], split)]
    elif kind == "tool_use":
        start = {**block, "input": {}}
        raw = json.dumps(block["input"])
        # the API's first input_json_delta is usually empty; the rest split mid-token
        chunks = ["", *_pieces(raw, split)]
        deltas = [delta({"type": "input_json_delta", "partial_json": c}) for c in chunks]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            delta({"type": "thinking_delta", "thinking": p})
            for p in _pieces(block["thinking"], split)
        ]
        deltas.append(delta({"type": "signature_delta", "signature": block["signature"]}))
    else:  # redacted_thinking arrives whole in its start event
        start, deltas = dict(block), []
    return [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        ),
        *deltas,
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


Responder = Callable[[dict[str, Any]], Any]
