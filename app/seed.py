"""Load the demo corpus in `seed/` into a store. Idempotent: every write is an upsert by key.

Dates in the seed files are relative (`placedDaysAgo`, `resolvedDaysAgo`, ...), so the demo looks
the same whenever it is started: an order placed "3 days ago" is always 3 days old.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.providers.embeddings.base import Embedder
from app.store import Store
from app.store.models import Customer, Order, OrderItem, Subscription, Ticket
from tuning import TUNING, Tuning

log = logging.getLogger(__name__)


@dataclass
class SeedReport:
    customers: int = 0
    subscriptions: int = 0
    orders: int = 0
    tickets: int = 0
    articles: str = ""
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"customers={self.customers} subscriptions={self.subscriptions} "
            f"orders={self.orders} tickets={self.tickets}; {self.articles}"
        )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: invalid JSON ({exc.msg})") from exc
    return rows


def _ago(now: datetime, days: int | float | None) -> datetime | None:
    return None if days is None else now - timedelta(days=float(days))


def load_customers(seed_dir: Path, now: datetime) -> list[Customer]:
    return [
        Customer(
            id=r["_id"],
            name=r["name"],
            email=r["email"],
            plan=r["plan"],
            seats=int(r.get("seats", 1)),
            locale=r.get("locale", "en"),
            created_at=_ago(now, r.get("createdDaysAgo", 0)) or now,
        )
        for r in _read_jsonl(seed_dir / "customers.jsonl")
    ]


def load_subscriptions(seed_dir: Path, now: datetime) -> list[Subscription]:
    return [
        Subscription(
            customer_id=r["customerId"],
            plan=r["plan"],
            status=r["status"],
            seats=int(r["seats"]),
            renews_at=None
            if r.get("renewsInDays") is None
            else now + timedelta(days=r["renewsInDays"]),
            price_cents=int(r["priceCents"]),
        )
        for r in _read_jsonl(seed_dir / "subscriptions.jsonl")
    ]


def load_orders(seed_dir: Path, now: datetime) -> list[Order]:
    out = []
    for r in _read_jsonl(seed_dir / "orders.jsonl"):
        items = [
            OrderItem(
                sku=i["sku"],
                name=i["name"],
                qty=int(i["qty"]),
                unit_price_cents=int(i["unitPriceCents"]),
            )
            for i in r["items"]
        ]
        out.append(
            Order(
                customer_id=r["customerId"],
                order_ref=r["orderRef"],
                status=r["status"],
                items=items,
                total_cents=int(r["totalCents"]),
                placed_at=_ago(now, r["placedDaysAgo"]) or now,
                shipped_at=_ago(now, r.get("shippedDaysAgo")),
                carrier=r.get("carrier"),
                tracking=r.get("tracking"),
            )
        )
    return out


def load_tickets(seed_dir: Path, now: datetime) -> list[Ticket]:
    return [
        Ticket(
            id=r["id"],
            subject=r["subject"],
            symptom=r["symptom"],
            resolution=r["resolution"],
            product=r.get("product", "workspace"),
            audience=r.get("audience", "all"),
            locale=r.get("locale", "en"),
            status=r["status"],
            quality=float(r.get("quality", 1.0)),
            resolved_at=_ago(now, r.get("resolvedDaysAgo")),
        )
        for r in _read_jsonl(seed_dir / "tickets.jsonl")
    ]


async def seed_store(
    store: Store,
    embedder: Embedder,
    seed_dir: Path,
    *,
    tuning: Tuning = TUNING,
    now: datetime | None = None,
    quarantine: bool = True,
) -> SeedReport:
    """Customers, subscriptions, orders, tickets and articles (chunked + embedded)."""
    from app.ingest.pipeline import ingest_corpus, ingest_tickets

    now = now or datetime.now(UTC)
    report = SeedReport()
    for c in load_customers(seed_dir, now):
        await store.customers.upsert(c)
        report.customers += 1
    for s in load_subscriptions(seed_dir, now):
        await store.subscriptions.upsert(s)
        report.subscriptions += 1
    for o in load_orders(seed_dir, now):
        await store.orders.upsert(o)
        report.orders += 1
    tickets = load_tickets(seed_dir, now)
    ticket_report = await ingest_tickets(store, embedder, tickets, tuning=tuning)
    report.tickets = ticket_report.tickets_seen
    articles = await ingest_corpus(
        store, embedder, seed_dir / "articles", tuning=tuning, quarantine=quarantine
    )
    report.articles = articles.summary()
    report.errors = [f"{e.path}: {e.reason}" for e in articles.bad]
    log.info("seeded", extra={"seed": report.summary()})
    return report
