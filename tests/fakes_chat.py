"""Test doubles for the chat layer: passages, a recording tool runner, a fake Messages API.

`MessagesAPI` is the Anthropic HTTP boundary faked with `httpx2.MockTransport`: it answers
`POST /v1/messages` from a queue of canned JSON messages or SSE streams and keeps every request
body, so tests assert on what was *sent* (system blocks, tools, tool results), not on mocks.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import httpx2

from app.providers.chat.anthropic import AnthropicChatModel
from app.providers.chat.base import Passage
from app.turn.tools import ToolResult

MODEL = "claude-sonnet-4-6"  # settings' default (claude-sonnet-4-5) is deprecated in this SDK

WEBHOOKS = Passage(
    id="webhooks#2",
    doc_id="webhooks",
    kind="doc",
    title="Webhooks",
    breadcrumb="Webhooks › Verifying signatures",
    text=(
        "Every request has an `X-Harborline-Signature` header. To verify it:\n\n"
        "1. Take the raw request body exactly as received.\n"
        "2. Compute HMAC-SHA256 with your signing secret.\n"
        "3. Reject requests whose timestamp is more than 5 minutes old.\n"
    ),
)
AUTH_302 = Passage(
    id="saml-signature-errors-auth-302#0",
    doc_id="saml-signature-errors-auth-302",
    kind="doc",
    title="SAML signature errors (AUTH_302)",
    breadcrumb="SAML signature errors (AUTH_302)",
    text=(
        "The error code `AUTH_302` means that the SAML assertion signature did not verify. "
        "It usually happens after your identity provider rotated its signing certificate. "
        "Upload the new certificate under Admin Console → Security → Single sign-on."
    ),
)
TICKET = Passage(
    id="t-1042",
    doc_id="t-1042",
    kind="ticket",
    title="Room Panel stuck on pairing screen",
    breadcrumb="Room Panel stuck on pairing screen",
    text="Hold the power button for ten seconds to reset the Room Panel, then pair it again.",
)

ORDER = ToolResult(
    "lookupOrder",
    ok=True,
    found=True,
    data={
        "orderRef": "ORD-1042",
        "status": "shipped",
        "items": [{"sku": "HL-RP10", "name": "Room Panel", "qty": 2}],
        "total": "598.00",
        "placedAt": "2026-07-01",
        "shippedAt": "2026-07-03",
        "carrier": "UPS",
        "tracking": "1Z999AA10123456784",
    },
)
NO_ORDER = ToolResult(
    "lookupOrder", ok=True, found=False, message="I don't see an order ORD-9999 on your account."
)
SUBSCRIPTION = ToolResult(
    "lookupSubscription",
    ok=True,
    found=True,
    data={
        "plan": "pro",
        "status": "active",
        "seats": 25,
        "renewsAt": "2026-10-01",
        "price": "225.00",
    },
)


@dataclass
class RecordingTools:
    """A `ToolRunner` answering from a dict by tool name, recording every call."""

    results: dict[str, ToolResult] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def __call__(self, name: str, args: dict[str, Any]) -> ToolResult:
        self.calls.append((name, dict(args)))
        return self.results.get(
            name, ToolResult(name, ok=False, found=False, message=f"unknown tool {name!r}")
        )


# --------------------------------------------------------------------------- Messages API fake


def usage(
    input: int = 50, output: int = 20, cache_read: int = 0, cache_write: int = 0
) -> dict[str, int]:
    return {
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }


def message(
    *blocks: dict[str, Any], stop_reason: str = "end_turn", **usage_counts: int
) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage(**usage_counts),
    }


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(name: str, args: dict[str, Any], id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": args}


def sse(
    *texts: str, tool: dict[str, Any] | None = None, stop_reason: str = "end_turn", **counts: int
) -> str:
    """A Messages API event stream: text deltas (and optionally one tool_use), then the stop."""
    start = message(**counts)
    start["content"], start["stop_reason"] = [], None
    start["usage"]["output_tokens"] = 1
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    index = 0
    if texts:
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": text_block("")},
            )
        )
        for t in texts:
            delta = {"type": "text_delta", "text": t}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    if tool is not None:
        block = {**tool, "input": {}}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool["input"])}
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": counts.get("output", 20)},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)


@dataclass
class MessagesAPI:
    """Queued responses for POST /v1/messages; every request body is kept in `bodies`."""

    responses: deque[Any] = field(default_factory=deque)
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def add(self, *items: Any) -> MessagesAPI:
        """dict → JSON message; str → SSE stream; httpx2.Response; Exception → raised."""
        self.responses.extend(items)
        return self

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages", request.url
        self.bodies.append(json.loads(request.content))
        item = self.responses.popleft()
        if isinstance(item, Exception):
            raise item
        if isinstance(item, httpx2.Response):
            return item
        if isinstance(item, str):
            return httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=item.encode()
            )
        return httpx2.Response(200, json=item)

    def model(self, **kwargs: Any) -> AnthropicChatModel:
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
        return AnthropicChatModel(
            "test-key", model=MODEL, max_retries=0, http_client=client, **kwargs
        )


def error_response(status: int, message: str = "boom") -> httpx2.Response:
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
    body = {"type": "error", "error": {"type": kind.get(status, "api_error"), "message": message}}
    return httpx2.Response(status, json=body)
