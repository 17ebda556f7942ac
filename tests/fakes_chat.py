"""Test doubles for the chat layer: passages, tool results and a recording tool runner.

The fake Anthropic Messages API lives in `tests/fake_anthropic.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.providers.chat.base import Passage
from app.turn.tools import ToolResult

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
