"""Customers, subscriptions and orders. Every order query is keyed by the customer id."""

from __future__ import annotations

import secrets
from typing import Any

from app.store.models import Customer, Order, Subscription

MAX_RECENT_ORDERS = 10


class CustomerRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["customers"]

    async def get(self, customer_id: str) -> Customer | None:
        doc = await self._c.find_one({"_id": customer_id})
        return Customer.from_doc(doc) if doc else None

    async def upsert(self, customer: Customer) -> None:
        """Insert or update; an existing record keeps its session epoch (its sessions stay)."""
        doc = customer.to_doc()
        epoch = doc.pop("sessionEpoch")
        doc.pop("_id")
        await self._c.update_one(
            {"_id": customer.id},
            {"$set": doc, "$setOnInsert": {"sessionEpoch": epoch}},
            upsert=True,
        )

    async def revoke_sessions(self, customer_id: str) -> bool:
        """End every session of this customer (a new epoch); False if there is no such customer."""
        res = await self._c.update_one(
            {"_id": customer_id}, {"$set": {"sessionEpoch": secrets.token_hex(8)}}
        )
        return bool(res.matched_count)

    async def list(self, limit: int = 100) -> list[Customer]:
        docs = await self._c.find({}).sort("_id", 1).limit(limit).to_list()
        return [Customer.from_doc(d) for d in docs]

    async def delete(self, customer_id: str) -> int:
        res = await self._c.delete_one({"_id": customer_id})
        return int(res.deleted_count)


class SubscriptionRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["subscriptions"]

    async def for_customer(self, customer_id: str) -> Subscription | None:
        doc = await self._c.find_one({"customerId": customer_id})
        return Subscription.from_doc(doc) if doc else None

    async def upsert(self, sub: Subscription) -> None:
        await self._c.replace_one({"customerId": sub.customer_id}, sub.to_doc(), upsert=True)

    async def delete_for_customer(self, customer_id: str) -> int:
        res = await self._c.delete_many({"customerId": customer_id})
        return int(res.deleted_count)


class OrderRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["orders"]

    async def get(self, customer_id: str, order_ref: str) -> Order | None:
        """The customer's own order with this reference; another customer's is simply absent."""
        doc = await self._c.find_one({"customerId": customer_id, "orderRef": order_ref})
        return Order.from_doc(doc) if doc else None

    async def recent(self, customer_id: str, limit: int = 5) -> list[Order]:
        limit = max(1, min(limit, MAX_RECENT_ORDERS))
        cursor = self._c.find({"customerId": customer_id}).sort("placedAt", -1).limit(limit)
        return [Order.from_doc(d) for d in await cursor.to_list()]

    async def upsert(self, order: Order) -> None:
        key = {"customerId": order.customer_id, "orderRef": order.order_ref}
        await self._c.replace_one(key, order.to_doc(), upsert=True)

    async def delete_for_customer(self, customer_id: str) -> int:
        res = await self._c.delete_many({"customerId": customer_id})
        return int(res.deleted_count)
