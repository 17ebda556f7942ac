"""Every MongoDB query lives in this package. `open_store` picks the backend from settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.safety.pii import KINDS
from app.settings import Settings
from app.store.assist import AssistRepo
from app.store.conversations import ConversationRepo, FeedbackRepo, MessageRepo
from app.store.customers import CustomerRepo, OrderRepo, SubscriptionRepo
from app.store.embedded import EmbeddedClient
from app.store.escalations import EscalationRepo
from app.store.guard import guard
from app.store.knowledge import ArticleRepo, ChunkRepo, DraftRepo, TicketRepo
from app.store.limits import RateLimitRepo, SpendRepo
from app.store.lock import StoreInUse
from app.store.sessions import RevokedSessionRepo

__all__ = ["Store", "StoreInUse", "open_store"]


@dataclass
class Store:
    """A database handle and one repository per collection.

    Every call through `db` raises `StoreUnavailable` when the database cannot be reached.
    """

    client: Any
    db: Any
    embedded: bool
    pii: tuple[str, ...] = KINDS  # what user/agent text is masked with before it is written
    customers: CustomerRepo = field(init=False)
    subscriptions: SubscriptionRepo = field(init=False)
    orders: OrderRepo = field(init=False)
    articles: ArticleRepo = field(init=False)
    chunks: ChunkRepo = field(init=False)
    tickets: TicketRepo = field(init=False)
    drafts: DraftRepo = field(init=False)
    conversations: ConversationRepo = field(init=False)
    messages: MessageRepo = field(init=False)
    feedback: FeedbackRepo = field(init=False)
    escalations: EscalationRepo = field(init=False)
    rate_limits: RateLimitRepo = field(init=False)
    spend: SpendRepo = field(init=False)
    revoked_sessions: RevokedSessionRepo = field(init=False)
    assist: AssistRepo = field(init=False)

    def __post_init__(self) -> None:
        self.db = guard(self.db)
        self.customers = CustomerRepo(self.db)
        self.subscriptions = SubscriptionRepo(self.db)
        self.orders = OrderRepo(self.db)
        self.articles = ArticleRepo(self.db)
        self.chunks = ChunkRepo(self.db)
        self.tickets = TicketRepo(self.db)
        self.drafts = DraftRepo(self.db)
        self.conversations = ConversationRepo(self.db, self.pii)
        self.messages = MessageRepo(self.db, self.pii)
        self.feedback = FeedbackRepo(self.db, self.pii)
        self.escalations = EscalationRepo(self.db, self.pii)
        self.rate_limits = RateLimitRepo(self.db)
        self.spend = SpendRepo(self.db)
        self.revoked_sessions = RevokedSessionRepo(self.db)
        self.assist = AssistRepo(self.db)

    def describe(self) -> dict[str, Any]:
        """Which kind of store this is and, for the embedded one, the process that owns it."""
        if not self.embedded:
            return {"mode": "mongodb", "database": self.db.name}
        info: dict[str, Any] = {"mode": f"embedded-{self.client.mode}"}
        if self.client.data_dir is not None:
            info["dataDir"] = str(self.client.data_dir)
            info["owner"] = self.client.owner()
        return info

    async def ping(self) -> bool:
        try:
            await self.db.command("ping")
        except Exception:
            return False
        return True

    async def delete_customer(self, customer_id: str) -> dict[str, int]:
        """Everything stored about one customer (GDPR erasure), counted by collection."""
        conv_ids = await self.conversations.delete_for_customer(customer_id)
        return {
            "conversations": len(conv_ids),
            "messages": await self.messages.delete_for_conversations(conv_ids),
            "feedback": await self.feedback.delete_for_conversations(conv_ids),
            "escalations": await self.escalations.delete_for_customer(customer_id, conv_ids),
            "assist_suggestions": await self.assist.delete_for_customer(customer_id, conv_ids),
            "orders": await self.orders.delete_for_customer(customer_id),
            "subscriptions": await self.subscriptions.delete_for_customer(customer_id),
            "customers": await self.customers.delete(customer_id),
        }

    async def close(self) -> None:
        await self.client.close()


def open_store(settings: Settings) -> Store:
    """PyMongo async against MONGODB_URI when set, else the embedded store: durable in
    `settings.data_dir` (raises `StoreInUse` when another process owns it) or memory only."""
    if settings.mongodb_uri:
        from pymongo import AsyncMongoClient

        client: Any = AsyncMongoClient(
            settings.mongodb_uri, tz_aware=True, w="majority", appname="concierge"
        )
        return Store(
            client=client,
            db=client[settings.mongodb_db],
            embedded=False,
            pii=tuple(settings.pii_mask),
        )
    data_dir = settings.data_dir if settings.embedded_store == "file" else None
    client = EmbeddedClient(data_dir)
    return Store(
        client=client, db=client[settings.mongodb_db], embedded=True, pii=tuple(settings.pii_mask)
    )
