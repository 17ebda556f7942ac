"""A fake OpenAI-compatible Chat Completions server: real HTTP on 127.0.0.1 (aiohttp), in a thread
of its own, so the adapter's own HTTP client, SSE parsing, timeouts and retries run against it.

    python -m tests.fake_openai_server [--port 8089] [--model fake-model] [--key sk-…]
                                       [--ignore-response-format] [--no-usage]

serves until interrupted and prints the settings that point Concierge at it (the eval harness
runs against it: see the README's provider section).

What it does that real servers do:

- `POST /v1/chat/completions` and `GET /v1/models`; `Authorization: Bearer` checked when a key
  is set (401 `invalid_api_key` in OpenAI's error shape), an unknown model is a 404
  `model_not_found`, a `tool` message must answer a `tool_calls` id of the assistant message
  before it (OpenAI answers 400 otherwise);
- streams as OpenAI does: a first chunk with the role and empty content, text in several
  `delta.content` pieces, tool calls as `delta.tool_calls` fragments by `index` (the name first
  with empty arguments, then the arguments cut mid-token), the finish chunk, a usage chunk with
  empty `choices` when `stream_options.include_usage` is set, then `data: [DONE]`; with
  `: keep-alive` comment lines between events;
- failures as scripted: an HTTP error with OpenAI's error body and optional `retry-after`, an
  `{"error": …}` event in the middle of a 200 stream, a connection lost mid-stream, a request it
  accepts and never answers;
- server personalities (`Dialect`): one that ignores `response_format` (answers JSON in prose
  and a code fence, as many local servers do), one that rejects it with a 400, one that rejects
  `stream_options`, one that reports no usage at all.

Each request pops one scripted item; with the script empty the default responder answers: a
condensation for a JSON request (built from the `<latest>` message with a few keyword rules), a
`lookupOrder` call when tools are offered and the question names an order it has not looked up
yet, else the first sentence of passage 1 with `[1]` (or "not enough information").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MODEL = "fake-model"
API_KEY = "sk-test-openai-key"


# --------------------------------------------------------------------------- script items


@dataclass(frozen=True)
class Text:
    """An assistant message; `finish` as the API names it (stop, length, content_filter)."""

    text: str
    finish: str = "stop"
    split: int = 3
    refusal: str | None = None


@dataclass(frozen=True)
class Tools:
    """Tool calls `[(name, args)]`, optionally with text before them."""

    calls: Sequence[tuple[str, Any]]
    text: str = ""
    finish: str = "tool_calls"


@dataclass(frozen=True)
class Error:
    status: int
    message: str = "boom"
    type: str | None = None
    code: str | None = None
    retry_after: float | None = None
    should_retry: bool | None = None


@dataclass(frozen=True)
class StreamError:
    """A 200 stream that sends `text` and then an error event."""

    text: str = ""
    message: str = "The server had an error while processing your request."
    type: str = "server_error"


@dataclass(frozen=True)
class Drop:
    """A 200 stream that sends `text` and then loses the connection (no finish, no [DONE]);
    `clean=True` ends the response properly instead, just without finishing the completion."""

    text: str = ""
    clean: bool = False


@dataclass(frozen=True)
class Hang:
    """Accept the request and never answer."""


@dataclass(frozen=True)
class Raw:
    """This exact body (non-stream), e.g. malformed JSON."""

    body: str
    status: int = 200
    content_type: str = "application/json"


@dataclass
class Dialect:
    ignore_response_format: bool = False  # JSON requests answered with prose + fenced JSON
    reject_response_format: bool = False  # 400 for response_format json_schema
    reject_stream_options: bool = False
    usage: bool = True


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# --------------------------------------------------------------------------- the default responder

_INTENT_WORDS = (
    ("refund", "refund_request"),
    ("cancel", "cancellation"),
    ("chargeback", "billing_dispute"),
    ("delete my", "data_deletion"),
    ("lawyer", "legal"),
    ("human", "human_handoff"),
    ("person", "human_handoff"),
    ("thank", "acknowledgment"),
    ("invoice", "billing_question"),
    ("price", "billing_question"),
    ("order", "order_status"),
    ("ord-", "order_status"),
    ("error", "troubleshooting"),
    ("not working", "troubleshooting"),
)


def condensation(body: Mapping[str, Any]) -> dict[str, Any]:
    """A plausible condensation of the request's `<latest>` message (keyword rules: a fake)."""
    text = _user_text(body)
    m = re.search(r"<latest>\s*(.*?)\s*</latest>", text, re.S)
    latest = (m.group(1) if m else text).strip()
    low = latest.lower()
    intent = next((i for w, i in _INTENT_WORDS if w in low), "how_to")
    order = re.search(r"\bORD-\d+\b", latest, re.I)
    tools = ["lookupOrder"] if order else []
    return {
        "standaloneQuestion": latest,
        "intent": intent,
        "needsRetrieval": intent != "acknowledgment",
        "needsTools": tools,
        "sentiment": "frustrated" if "!" in latest else "neutral",
        "mentionedOrderId": order.group(0).upper() if order else None,
        "explicitHumanRequest": intent == "human_handoff",
    }


def default_item(body: Mapping[str, Any], dialect: Dialect) -> Any:
    if body.get("response_format") or "JSON" in _system_text(body):
        data = json.dumps(condensation(body))
        if dialect.ignore_response_format:
            return Text(
                f"Sure! Here is the JSON you asked for:\n```json\n{data}\n```\nAnything else?"
            )
        return Text(data)
    text = _user_text(body)
    order = re.search(r"\bORD-\d+\b", text)
    looked_up = any(m.get("role") == "tool" for m in body.get("messages", []))
    if body.get("tools") and order and not looked_up and body.get("tool_choice") != "none":
        return Tools([("lookupOrder", {"orderRef": order.group(0)})])
    if looked_up:
        result = next(m["content"] for m in body["messages"] if m.get("role") == "tool")
        return Text(f"Here is what I found on your account: {result[:200]}")
    m = re.search(r'<passage n="1"[^>]*>\s*(.*?)</passage>', text, re.S)
    if m:
        first = re.split(r"(?<=[.!?])\s", " ".join(m.group(1).split()), maxsplit=1)[0]
        return Text(f"{first} [1]")
    return Text("I don't have enough information to answer that. Would you like a person to help?")


def _system_text(body: Mapping[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "system"
    )


def _user_text(body: Mapping[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _pieces(text: str, n: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / max(1, n)))
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- the server


@dataclass
class FakeOpenAI:
    model: str = MODEL
    api_key: str | None = API_KEY
    dialect: Dialect = field(default_factory=Dialect)
    script: deque[Any] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    client_ports: list[int] = field(default_factory=list)
    base_url: str = ""

    def add(self, *items: Any) -> FakeOpenAI:
        self.script.extend(items)
        return self

    def reset(self) -> None:
        self.script.clear()
        self.seen.clear()
        self.client_ports.clear()
        self.dialect = Dialect()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [s.body for s in self.seen if s.path.endswith("/chat/completions")]

    # -- handlers

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        return _error(
            401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
        )

    async def models(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(Seen(request.path, dict(request.headers), {}))
        if denied := self._unauthorized(request):
            return denied
        data = [{"id": self.model, "object": "model", "owned_by": "fake"}]
        return web.json_response({"object": "list", "data": data})

    async def completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "We could not parse the JSON body of your request.")
        self.seen.append(Seen(request.path, dict(request.headers), body))
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.client_ports.append(int(peer[1]) if peer else -1)
        if denied := self._unauthorized(request):
            return denied
        if problem := _invalid(body):
            return _error(400, problem)
        if body.get("model") != self.model:
            return _error(
                404,
                f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            )
        fmt = body.get("response_format")
        if fmt and self.dialect.reject_response_format and fmt.get("type") == "json_schema":
            return _error(400, "response_format type json_schema is not supported by this server")
        if "stream_options" in body and self.dialect.reject_stream_options:
            return _error(400, "Unrecognized request argument supplied: stream_options")
        item = self.script.popleft() if self.script else default_item(body, self.dialect)
        if callable(item):
            item = item(body)
        if isinstance(item, Hang):
            await asyncio.sleep(3600)
        if isinstance(item, Error):
            headers = {}
            if item.retry_after is not None:
                headers["retry-after"] = f"{item.retry_after:g}"
            if item.should_retry is not None:
                headers["x-should-retry"] = "true" if item.should_retry else "false"
            kind = item.type
            if kind is None:
                kind = "server_error" if item.status >= 500 else "invalid_request_error"
            return _error(item.status, item.message, kind or None, item.code, headers)
        if isinstance(item, Raw):
            return web.Response(status=item.status, text=item.body, content_type=item.content_type)
        if body.get("stream"):
            return await self._stream(request, body, item)
        return web.json_response(self._completion(body, item))

    def _usage(self, body: Mapping[str, Any], output: str) -> dict[str, Any]:
        prompt = sum(tokens(json.dumps(m)) for m in body["messages"])
        prompt += tokens(json.dumps(body.get("tools", [])))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": max(1, tokens(output)),
            "total_tokens": prompt + max(1, tokens(output)),
            "prompt_tokens_details": {"cached_tokens": 0},
        }

    def _completion(self, body: Mapping[str, Any], item: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        output = ""
        if isinstance(item, Text):
            message["content"] = item.text if item.refusal is None else None
            message["refusal"] = item.refusal
            finish, output = item.finish, item.text
        else:
            assert isinstance(item, Tools), item
            message["content"] = item.text or None
            message["tool_calls"] = [
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for n, (name, args) in enumerate(item.calls)
            ]
            finish, output = item.finish, item.text + json.dumps(list(item.calls))
        out: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1764547200,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }
        if self.dialect.usage:
            out["usage"] = self._usage(body, output)
        return out

    async def _stream(
        self, request: web.Request, body: Mapping[str, Any], item: Any
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1764547200,
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        async def send(payload: object) -> None:
            await response.write(f"data: {json.dumps(payload)}\n\n".encode())
            await response.write(b": keep-alive\n\n")

        await send(chunk({"role": "assistant", "content": ""}))
        output = ""
        if isinstance(item, Drop):
            for piece in _pieces(item.text, 2):
                await send(chunk({"content": piece}))
            if item.clean:
                await response.write_eof()
            elif request.transport is not None:
                request.transport.abort()  # the connection is lost mid-answer
            return response
        if isinstance(item, StreamError):
            for piece in _pieces(item.text, 2):
                await send(chunk({"content": piece}))
            await send({"error": {"message": item.message, "type": item.type, "code": None}})
            await response.write_eof()
            return response
        if isinstance(item, Text):
            output = item.text
            for piece in _pieces(item.text, item.split):
                await send(chunk({"content": piece}))
            if item.refusal:
                await send(chunk({"refusal": item.refusal}))
            finish = item.finish
        else:
            assert isinstance(item, Tools), item
            for piece in _pieces(item.text, 2):
                await send(chunk({"content": piece}))
            for n, (name, args) in enumerate(item.calls):
                head = {"index": n, "id": f"call_{n}", "type": "function"}
                await send(
                    chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
                )
                for part in _pieces(json.dumps(args), 3):  # cut mid-token, as the API does
                    await send(
                        chunk({"tool_calls": [{"index": n, "function": {"arguments": part}}]})
                    )
            finish = item.finish
            output = item.text + json.dumps(list(item.calls))
        await send(chunk({}, finish))
        if self.dialect.usage and (body.get("stream_options") or {}).get("include_usage"):
            await send(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "model": body["model"],
                    "choices": [],
                    "usage": self._usage(body, output),
                }
            )
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    # -- running

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.completions)
        app.router.add_get("/v1/models", self.models)
        return app

    @contextmanager
    def running(self, port: int = 0) -> Iterator[FakeOpenAI]:
        """Serve on 127.0.0.1 from a thread with its own event loop (sync and async tests alike)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        holder: dict[str, Any] = {}

        async def start() -> None:
            runner = web.AppRunner(self.app(), handler_cancellation=True, shutdown_timeout=0.5)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", port)
            await site.start()
            server = site._server
            assert server is not None
            holder["runner"] = runner
            holder["port"] = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(start())
            except BaseException as exc:  # reported to the starting thread
                holder["error"] = exc
                ready.set()
                return
            ready.set()
            loop.run_forever()

        thread = threading.Thread(target=serve, name="fake-openai", daemon=True)
        thread.start()
        ready.wait(30)
        if "error" in holder:
            raise holder["error"]
        self.base_url = f"http://127.0.0.1:{holder['port']}/v1"
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            loop.close()


def _invalid(body: Mapping[str, Any]) -> str | None:
    """What OpenAI would answer 400 for in a request of ours."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    open_calls: set[str] = set()
    for n, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            return f"Invalid value for 'messages[{n}].role': {role!r}"
        if role == "assistant":
            open_calls = {c["id"] for c in m.get("tool_calls") or []}
            for c in m.get("tool_calls") or []:
                try:
                    json.loads(c["function"]["arguments"])
                except (KeyError, ValueError):
                    return f"messages[{n}].tool_calls: arguments must be a JSON string"
        elif role == "tool":
            if m.get("tool_call_id") not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'."
                )
        elif not isinstance(m.get("content"), str):
            return f"messages[{n}].content must be a string"
    for tool in body.get("tools") or []:
        if tool.get("type") != "function" or "name" not in tool.get("function", {}):
            return "tools[].type must be 'function' with a function name"
    fmt = body.get("response_format")
    if fmt is not None and fmt.get("type") not in ("text", "json_object", "json_schema"):
        return f"Invalid response_format type {fmt.get('type')!r}"
    if fmt and fmt.get("type") == "json_schema" and "schema" not in fmt.get("json_schema", {}):
        return "response_format.json_schema.schema is required"
    return None


def _error(
    status: int,
    message: str,
    kind: str | None = "invalid_request_error",
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    headers = {"x-request-id": "req_fake0123", **(headers or {})}
    return web.json_response(body, status=status, headers=headers)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_openai_server")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--key", default=API_KEY, help="required bearer key ('' = none)")
    parser.add_argument("--ignore-response-format", action="store_true")
    parser.add_argument("--no-usage", action="store_true")
    args = parser.parse_args(argv)
    fake = FakeOpenAI(
        model=args.model,
        api_key=args.key or None,
        dialect=Dialect(
            ignore_response_format=args.ignore_response_format, usage=not args.no_usage
        ),
    )
    with fake.running(args.port):
        print(
            f"fake OpenAI-compatible server on {fake.base_url}\n"
            f"  LLM=openai OPENAI_BASE_URL={fake.base_url} OPENAI_MODEL={fake.model}"
            + (f" OPENAI_API_KEY={fake.api_key}" if fake.api_key else ""),
            flush=True,
        )
        with suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
