"""Customer-data tools. The model picks which; the session decides whose.

No tool schema has a customer parameter. A `SessionTools` object is built per turn from the
verified session's customer id, which goes into every query filter; results are projected down to
what the customer may see (never the customer id itself). "Not found" is an answer, not a reason
to widen the query.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.language.identifiers import Identifiers, generic_identifiers
from app.store import Store
from app.store.models import Order
from app.text import Phrases, phrase

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "name": "lookupOrder",
        "description": (
            "Look up ONE of the signed-in customer's own orders by reference (ORD-1234): status, "
            "items, carrier and tracking. Cannot see other customers' orders; an unknown reference "
            "means the order is not on this customer's account."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"orderRef": {"type": "string", "pattern": "^ORD-[0-9]{3,6}$"}},
            "required": ["orderRef"],
            "additionalProperties": False,
        },
    },
    {
        "name": "listRecentOrders",
        "description": (
            "List the signed-in customer's own most recent orders, newest first (at most 10). "
            "Does not search, filter by product, or show anyone else's orders."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 10}},
            "additionalProperties": False,
        },
    },
    {
        "name": "lookupSubscription",
        "description": (
            "The signed-in customer's own subscription: plan, status, seats, renewal date and "
            "price. Read-only: cannot change, cancel or refund anything."
        ),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    {
        "name": "lookupCase",
        "description": (
            "Status of one of the signed-in customer's own support cases by reference "
            "(CASE-XXXXXX). Cannot list cases or see other customers' cases."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"caseRef": {"type": "string", "pattern": "^CASE-[A-Z0-9]{6}$"}},
            "required": ["caseRef"],
            "additionalProperties": False,
        },
    },
]
TOOL_NAMES = frozenset(t["name"] for t in TOOL_SPECS)


@dataclass(frozen=True)
class ToolResult:
    tool: str
    ok: bool  # the call ran (valid arguments, store answered)
    found: bool  # it found something for this customer
    data: dict[str, Any] | list[dict[str, Any]] | None = None
    message: str = ""  # what to tell the customer when not found / not ok
    ref: str | None = None  # the order / case reference looked up

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "ok": self.ok, "found": self.found}
        if self.ref:
            out["ref"] = self.ref
        return out


def _order_view(o: Order, money: Callable[[int], str]) -> dict[str, Any]:
    return {
        "orderRef": o.order_ref,
        "status": o.status,
        "items": [{"sku": i.sku, "name": i.name, "qty": i.qty} for i in o.items],
        "total": money(o.total_cents),
        "placedAt": o.placed_at.date().isoformat(),
        "shippedAt": o.shipped_at.date().isoformat() if o.shipped_at else None,
        "carrier": o.carrier,
        "tracking": o.tracking,
    }


_CURRENCY_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}


@dataclass
class SessionTools:
    """Tools bound to one verified customer (None = anonymous: every lookup says sign in)."""

    store: Store
    customer_id: str | None
    ids: Identifiers = field(default_factory=generic_identifiers)
    phrases: Phrases | None = None  # the reply language's templates (tenant data)
    currency: str | None = None  # the tenant's ISO 4217 code: how an amount is written

    def _money(self, cents: int) -> str:
        """An amount as a customer reads it: "$111.60", "111.60 CHF", or bare without a currency."""
        amount = f"{cents / 100:,.2f}"
        sign = _CURRENCY_SIGNS.get(self.currency or "")
        if sign:
            return f"{sign}{amount}"
        return f"{amount} {self.currency}" if self.currency else amount

    def _say(self, key: str, default: str, **values: Any) -> str:
        return phrase(self.phrases, key, default, **values)

    async def call(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        args = dict(args or {})
        if name not in TOOL_NAMES:
            result = ToolResult(name, ok=False, found=False, message=f"unknown tool {name!r}")
        elif self.customer_id is None:
            result = ToolResult(
                name,
                ok=True,
                found=False,
                message=self._say("sign_in", "Please sign in so I can look at your account."),
            )
        else:
            result = await getattr(self, f"_{name}")(self.customer_id, args)
        return result

    async def _lookupOrder(self, cid: str, args: dict[str, Any]) -> ToolResult:
        ref = self.ids.normalise("order", args.get("orderRef")) or ""
        if not ref:
            return ToolResult(
                "lookupOrder",
                ok=False,
                found=False,
                message=self._say(
                    "bad_order_ref",
                    "That doesn't look like an order reference ({example}).",
                    example=self.ids.example("order"),
                ),
            )
        order = await self.store.orders.get(cid, ref)
        if order is None:
            return ToolResult(
                "lookupOrder",
                ok=True,
                found=False,
                message=self._say(
                    "order_not_found", "I don't see an order {ref} on your account.", ref=ref
                ),
                ref=ref,
            )
        view = _order_view(order, self._money)
        return ToolResult("lookupOrder", ok=True, found=True, data=view, ref=ref)

    async def _listRecentOrders(self, cid: str, args: dict[str, Any]) -> ToolResult:
        try:
            limit = int(args.get("limit", 5))
        except (TypeError, ValueError):
            limit = 5
        orders = await self.store.orders.recent(cid, limit)
        if not orders:
            return ToolResult(
                "listRecentOrders",
                ok=True,
                found=False,
                message=self._say("no_orders", "I don't see any orders on your account."),
            )
        views = [_order_view(o, self._money) for o in orders]
        return ToolResult("listRecentOrders", ok=True, found=True, data=views)

    async def _lookupSubscription(self, cid: str, args: dict[str, Any]) -> ToolResult:
        sub = await self.store.subscriptions.for_customer(cid)
        if sub is None:
            return ToolResult(
                "lookupSubscription",
                ok=True,
                found=False,
                message=self._say("no_subscription", "I don't see a subscription on your account."),
            )
        data = {
            "plan": sub.plan,
            "status": sub.status,
            "seats": sub.seats,
            "renewsAt": sub.renews_at.date().isoformat() if sub.renews_at else None,
            "price": self._money(sub.price_cents),
        }
        return ToolResult("lookupSubscription", ok=True, found=True, data=data)

    async def _lookupCase(self, cid: str, args: dict[str, Any]) -> ToolResult:
        ref = self.ids.normalise("case", args.get("caseRef")) or ""
        if not ref:
            return ToolResult(
                "lookupCase",
                ok=False,
                found=False,
                message=self._say(
                    "bad_case_ref",
                    "That doesn't look like a case reference ({example}).",
                    example=self.ids.example("case"),
                ),
            )
        case = await self.store.escalations.get_for_customer(ref, cid)
        if case is None:
            return ToolResult(
                "lookupCase",
                ok=True,
                found=False,
                message=self._say(
                    "case_not_found", "I don't see a case {ref} on your account.", ref=ref
                ),
                ref=ref,
            )
        data = {
            "caseRef": case.case_ref,
            "status": case.status,
            "openedAt": case.created_at.isoformat(timespec="minutes"),
            "slaDueAt": case.sla_due_at.isoformat(timespec="minutes"),
            "reason": case.reason,
        }
        return ToolResult("lookupCase", ok=True, found=True, data=data, ref=ref)
