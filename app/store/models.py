"""Domain models for every collection of DESIGN section 3.

Repositories return these; nothing outside `app/store/` sees a raw MongoDB document.
Ids are strings we generate (or natural keys such as a slug), so both backends agree on them.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Plan = str  # free | pro | enterprise, but stored as given: unknown strings fail closed later
Audience = Literal["all", "pro", "enterprise"]
ArticleStatus = Literal["draft", "published", "quarantined"]  # quarantined: flagged, not approved
TicketStatus = Literal["open", "resolved", "wont_fix", "unpublished"]  # unpublished: from /admin
TicketSource = Literal["import", "resolution"]  # resolution: written when a person resolved a case
DraftStatus = Literal["draft", "published", "discarded"]
ConversationStatus = Literal["open", "escalated", "closed"]
Role = Literal["user", "assistant", "agent"]
ChunkKind = Literal["prose", "table"]
EscalationStatus = Literal["open", "claimed", "resolved"]

AUDIENCES: tuple[str, ...] = ("all", "pro", "enterprise")


class Model(BaseModel):
    """Python side is snake_case; documents are camelCase (DESIGN 3) with `id` stored as `_id`."""

    model_config = ConfigDict(
        extra="ignore", alias_generator=to_camel, validate_by_name=True, validate_by_alias=True
    )

    def to_doc(self) -> dict[str, Any]:
        """The MongoDB document for this model (camelCase keys, `_id`)."""
        return self.model_dump(by_alias=True)

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Self:
        return cls.model_validate(doc)


class Customer(Model):
    id: str = Field(alias="_id")
    name: str
    email: str
    plan: Plan
    seats: int = 1
    locale: str = "en"
    created_at: datetime
    # Sessions carry this; a different value (record deleted and re-created, or revoked) ends
    # every session minted before. Random, so a re-created id never revives an old session.
    session_epoch: str = Field(default_factory=lambda: secrets.token_hex(8))


class Subscription(Model):
    customer_id: str
    plan: Plan
    status: Literal["active", "past_due", "canceled", "trialing"]
    seats: int
    renews_at: datetime | None = None
    price_cents: int


class OrderItem(Model):
    sku: str
    name: str
    qty: int
    unit_price_cents: int


class Order(Model):
    customer_id: str
    order_ref: str
    status: str
    items: list[OrderItem]
    total_cents: int
    placed_at: datetime
    shipped_at: datetime | None = None
    carrier: str | None = None
    tracking: str | None = None


class SearchTerms(Model):
    """An article's analysed text as stored for the lexical ranker (`app/language/analyzer.py`):
    written by `ArticleRepo.upsert`, indexed by Atlas with `lucene.whitespace`."""

    version: str = ""
    title: str = ""
    tags: str = ""
    body: str = ""


BlockKind = Literal["paragraph", "list", "table", "code", "callout", "tab"]


class Block(Model):
    """One typed block of a section (`app.ingest.sections`): a list keeps its items whole (nested
    items inside), a table its header and rows, a code block, callout or tab panel its label."""

    id: str
    kind: BlockKind
    text: str
    items: list[str] | None = None
    ordered: bool = False
    header: list[str] | None = None
    rows: list[list[str]] | None = None
    label: str | None = None


class Section(Model):
    """A heading's section: its heading path below the title, its URL fragment and its blocks."""

    id: str
    path: list[str] = Field(default_factory=list)
    anchor: str = ""
    blocks: list[Block] = Field(default_factory=list)


class Article(Model):
    id: str = Field(alias="_id")  # the slug: a natural key that survives re-ingestion
    slug: str
    title: str
    body: str
    summary: str = ""
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    audience: Audience = "all"
    locale: str = "en"
    status: ArticleStatus = "published"
    updated_at: datetime
    source_path: str | None = None
    content_hash: str = ""
    review_flags: list[str] = Field(default_factory=list)
    reviewed_by: str | None = None  # who approved the flagged content, or unpublished it
    reviewed_at: datetime | None = None
    approved_hash: str | None = None  # the content a person approved; a change needs a new look
    search_terms: SearchTerms | None = None  # as stored; None on an article not yet written
    sections: list[Section] = Field(default_factory=list)  # the section tree, built at ingest


class Chunk(Model):
    id: str = Field(alias="_id")  # f"{article_id}#{chunk_index}"
    article_id: str
    chunk_index: int
    text: str
    breadcrumb: str
    kind: ChunkKind = "prose"
    page: int | None = None  # the PDF page the chunk's text starts on (citations link to it)
    section_id: str | None = None  # the article section (`Article.sections`) it was cut from
    block_ids: list[str] = Field(default_factory=list)  # that section's blocks it carries
    embedding: list[float] = Field(default_factory=list)
    # what `embedding` was computed from (app.ingest.pipeline.embedding_version); 1, also when
    # the field is absent: the chunk text alone
    embedding_version: int = 1
    audience: Audience = "all"
    locale: str = "en"
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    status: ArticleStatus = "published"
    title: str = ""


class Ticket(Model):
    id: str = Field(alias="_id")
    subject: str
    symptom: str
    resolution: str
    product: str
    audience: Audience = "all"
    locale: str = "en"
    status: TicketStatus
    quality: float = 1.0
    resolved_at: datetime | None = None
    embedding: list[float] = Field(default_factory=list)
    source: TicketSource = "import"
    case_ref: str | None = None  # the handoff a resolution-born ticket came from
    updated_by: str | None = None  # the person who wrote, edited or unpublished it
    agent_quality: float | None = None  # the agent's choice; `quality` moves with feedback
    votes_up: int = 0  # customers' votes on answers that cited it
    votes_down: int = 0
    review_flags: list[str] = Field(default_factory=list)  # held (unpublished) until a person


# Kept beside the conversation document, not in it (see `ConversationRepo`): the conversation
# document is rewritten several times a turn and must not grow with the conversation.
MEMORY_FIELDS = frozenset({"summary", "summarized_through_seq", "facts"})


class Conversation(Model):
    id: str = Field(alias="_id")
    customer_id: str | None = None
    anonymous_id: str | None = None
    status: ConversationStatus = "open"
    summary: str = ""  # from `conversation_summaries`
    summarized_through_seq: int = 0  # from `conversation_summaries`
    facts: list[dict[str, Any]] = Field(default_factory=list)  # from `conversation_facts`
    turn_count: int = 0
    failed_turns: int = 0
    last_intent: str | None = None
    last_seq: int = 0
    escalated: bool = False  # ever handed to a person (metrics: not a deflection)
    resolved: bool | None = None  # the customer's answer to "did this resolve it?"
    read_seq: int = 0  # the last message the customer has seen in the widget (unread count)
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None


class Message(Model):
    id: str = Field(alias="_id")
    conversation_id: str
    seq: int
    role: Role
    content: str
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    expires_at: datetime | None = None


class Escalation(Model):
    case_ref: str
    conversation_id: str
    status: EscalationStatus = "open"
    reason: str
    intent: str | None = None
    asked_for: str = ""  # the problem: the first unresolved request's standalone question
    trigger: str | None = None  # the customer's message that set off the handoff, verbatim
    sentiment: str | None = None  # the trigger's sentiment
    customer: dict[str, Any] | None = None
    conversation: dict[str, Any] = Field(default_factory=dict)
    attempted: dict[str, Any] = Field(default_factory=dict)
    claimed_by: str | None = None
    created_at: datetime
    sla_due_at: datetime
    resolved_at: datetime | None = None
    customer_id: str | None = None  # from the conversation, even if the customer record is gone
    expires_at: datetime | None = None  # an anonymous conversation's case expires with it
    resolution: str | None = None  # the agent's short resolution, PII masked
    knowledge: bool | None = None  # the agent's consent: may the resolution become a ticket?
    ticket_id: str | None = None  # the resolution-born ticket, when consented


class Feedback(Model):
    id: str = Field(alias="_id")
    conversation_id: str
    message_id: str | None = None
    helpful: bool | None = None
    resolved: bool | None = None
    comment: str | None = None
    created_at: datetime
    expires_at: datetime | None = None  # anonymous feedback expires with its conversation


class Draft(Model):
    """A draft help article suggested from a gap cluster; never searchable until published."""

    id: str = Field(alias="_id")
    title: str
    markdown: str  # the whole article: YAML front matter (status: draft) + body
    audience: Audience = "all"
    locale: str = "en"
    status: DraftStatus = "draft"
    cluster_label: str = ""
    case_refs: list[str] = Field(default_factory=list)
    question_count: int = 0
    written_by: str = "extractive"  # "extractive" (offline) or the language model's name
    created_at: datetime
    updated_at: datetime
    updated_by: str | None = None
    published_slug: str | None = None
