"""The shapes of every HTTP response: the API's contract, published in the OpenAPI schema.

Top-level shapes forbid unknown keys, so a route that starts returning a field the contract does
not name fails its tests instead of drifting silently. A message's `meta` (the turn's trace) is
typed where clients read it and lets other keys through: `TurnTrace` (the typed turn trace)
replaces `MessageMeta` when it lands; the customer's and the admin's views stay separate types
so the public one can be narrowed without touching the admin's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Confidence = Literal["strong", "weak", "none"]
Role = Literal["user", "assistant", "agent"]
IsoTime = str  # ISO 8601 with offset, as stored (e.g. "2026-11-30T09:50:00+00:00")


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """A shape that also carries keys it does not name (traces, analytics rows)."""

    model_config = ConfigDict(extra="allow")


# --- messages -------------------------------------------------------------------------------


class CitationOut(Open):
    n: int = Field(description="The [n] in the text.")
    kind: Literal["doc", "ticket"] | None = None
    passageId: str | None = None
    docId: str | None = None
    title: str | None = None
    breadcrumb: str | None = None
    url: str | None = Field(default=None, description="Help page for a doc citation.")


class PassageTrace(Open):
    kind: Literal["doc", "ticket"] | None = None
    id: str | None = None
    title: str | None = None
    breadcrumb: str | None = None
    rrfScore: float | None = None
    rerankScore: float | None = None


class ToolTrace(Open):
    tool: str
    ok: bool
    found: bool


class MessageMeta(Open):
    """An assistant message's trace (DESIGN 3), or the few keys other roles carry
    (`masked` on a customer message, `agent`/`caseRef` on an agent reply, `error`)."""

    intent: str | None = None
    sentiment: str | None = None
    confidence: Confidence | None = None
    condensedQuestion: str | None = None
    topRerankScore: float | None = None
    escalated: bool | None = None
    escalationReason: str | None = None
    caseRef: str | None = None
    passageCount: int | None = None
    passages: list[PassageTrace] | None = None
    tools: list[ToolTrace] | None = None
    citations: list[CitationOut] | None = None
    invalidCitations: int | None = None
    model: str | None = None
    latencyMs: dict[str, float] | None = None
    tokens: dict[str, int] | None = None
    agent: str | None = None
    masked: bool | None = None
    error: str | None = None


class PublicMessageMeta(MessageMeta):
    """What the customer's widget receives: the admin's trace without why a provider or a search
    failed (`fallbackReason`, `retrievalReason`: exception text) or the spend-cap state
    (`app.api.views.ADMIN_ONLY_META`); `fallback` says only that a fallback happened."""

    fallback: bool | None = None


class MessageOut(Out):
    """A message as the customer sees it."""

    id: str
    seq: int = Field(ge=1)
    role: Role
    content: str
    createdAt: IsoTime
    meta: PublicMessageMeta


class AdminMessageOut(Out):
    """A message as an agent or admin sees it, with the full trace."""

    id: str
    seq: int = Field(ge=1)
    role: Role
    content: str
    createdAt: IsoTime
    meta: MessageMeta


# --- customer endpoints ---------------------------------------------------------------------


class SessionCustomer(Out):
    id: str
    name: str
    plan: str
    locale: str = Field(description="Primary language subtag; the widget's labels follow it.")


class SessionOut(Out):
    sessionToken: str
    anonymous: bool
    customer: SessionCustomer | None
    expiresAt: IsoTime


class ConversationCreated(Out):
    id: str
    status: Literal["open", "escalated", "closed"]
    createdAt: IsoTime


class ConversationOut(ConversationCreated):
    readSeq: int = Field(
        default=0, ge=0, description="The last seq the customer has seen (unread = later ones)."
    )
    messages: list[MessageOut]


class MessagesOut(Out):
    status: Literal["open", "escalated", "closed"]
    messages: list[MessageOut]


class TurnOut(Out):
    """`POST …/messages` without `Accept: text/event-stream`."""

    userMessage: MessageOut
    reply: MessageOut | None = Field(
        description="None when the conversation is with a person (the message is queued for them)."
    )


class HandoffOut(Out):
    caseRef: str
    message: MessageOut | None = Field(description="None when a case was already open.")


class Ok(Out):
    ok: Literal[True]


# --- admin endpoints ------------------------------------------------------------------------


class EscalationOut(Out):
    """A handoff packet (DESIGN 6.3); `breached` is computed when read."""

    caseRef: str
    conversationId: str
    status: Literal["open", "claimed", "resolved"]
    reason: str
    intent: str | None
    askedFor: str
    trigger: str | None = Field(description="The customer's message that set off the handoff.")
    sentiment: str | None
    customer: dict[str, Any] | None
    conversation: dict[str, Any]
    attempted: dict[str, Any]
    claimedBy: str | None
    createdAt: datetime
    slaDueAt: datetime
    resolvedAt: datetime | None
    breached: bool
    resolution: str | None = None
    knowledge: bool | None = None
    ticketId: str | None = None


class EscalationEnvelope(Out):
    escalation: EscalationOut


class EscalationDetail(Out):
    escalation: EscalationOut
    messages: list[AdminMessageOut]
    suggestedResolution: str | None = Field(
        default=None, description="The agents' replies so far: the resolve dialog's prefill."
    )


class EscalationList(Out):
    escalations: list[EscalationOut]


class AgentReplyOut(Out):
    message: AdminMessageOut


class MetricsTotals(Out):
    conversations: int
    escalated: int
    deflected: int
    resolved: int
    unconfirmedDeflections: int
    deflectionRate: float | None
    resolutionRate: float | None


class MetricsDay(Out):
    date: str
    conversations: int
    escalated: int
    deflected: int
    resolved: int


class CacheOut(Out):
    calls: int = Field(description="Language-model calls today.")
    eligibleCalls: int = Field(
        description="Calls whose cacheable prefix reached the model's minimum (given a breakpoint)."
    )
    creationInputTokens: int = Field(description="cache_creation_input_tokens today.")
    readInputTokens: int = Field(description="cache_read_input_tokens today.")
    alert: str | None = Field(description="Set when eligible calls keep reading 0 from the cache.")


class SpendOut(Out):
    usd: float
    capUsd: float
    capReached: bool
    fallbackTurnsToday: int
    cache: CacheOut


class ProviderHealthOut(Open):
    """One network provider as this worker sees it (plus provider facts, e.g. prefix tokens)."""

    provider: str
    ok: bool = Field(description="False while a configuration error (bad key, model) stands.")
    configError: str | None
    calls: int
    failures: dict[str, int] = Field(description="Failed calls by error kind.")
    lastError: str | None
    lastErrorAt: IsoTime | None


class AssistWeekOut(Out):
    week: str
    shown: int = Field(description="Suggestions shown to an agent (once per suggestion).")
    inserted: int = Field(description="Suggestions put into the reply box.")
    sentUnchanged: int = Field(description="Agent replies sent exactly as suggested.")
    sentEdited: int = Field(description="Agent replies sent after editing a suggestion.")


class MetricsOut(Out):
    from_: str = Field(alias="from")
    to: str
    totals: MetricsTotals
    perDay: list[MetricsDay]
    confidenceMix: dict[str, int]
    escalationReasons: dict[str, int]
    medianLatencyMs: float | None
    spend: SpendOut
    providers: dict[str, ProviderHealthOut] = Field(
        description="Network providers (chat, embeddings, rerank) and their errors, this worker."
    )
    knowledgeLoop: KnowledgeLoopOut | None = Field(
        default=None,
        description="Per ISO week: tickets born from resolutions and the strong answers citing "
        "them (handoffs the bot no longer needed).",
    )
    assist: list[AssistWeekOut] = Field(
        default_factory=list, description="Agent-assist use per ISO week."
    )


class GapOut(Out):
    intent: str
    count: int
    escalated: int
    avgTopScore: float | None
    examples: list[str]


class GapsOut(Out):
    gaps: list[GapOut]


class CustomerDeletedOut(Out):
    customerId: str
    deleted: dict[str, int] = Field(description="Documents deleted, by collection.")


class ArticleReviewOut(Out):
    slug: str
    title: str
    audience: str
    locale: str
    status: Literal["draft", "published", "quarantined"]  # quarantined: flagged, not approved
    reviewFlags: list[str]
    reviewedBy: str | None
    reviewedAt: IsoTime | None
    updatedAt: IsoTime


class ReviewsOut(Out):
    articles: list[ArticleReviewOut]


class ArticleEnvelope(Out):
    article: ArticleReviewOut


# --- knowledge loop -------------------------------------------------------------------------


class TicketOut(Out):
    """A resolved ticket (a resolution-born one carries `caseRef`); text is PII masked."""

    id: str
    subject: str
    symptom: str
    resolution: str
    product: str
    audience: Literal["all", "pro", "enterprise"]
    locale: str
    status: Literal["open", "resolved", "wont_fix", "unpublished"]
    quality: float = Field(description="Used by the quality bar; moves with customers' votes.")
    agentQuality: float | None = Field(description="The agent's choice when resolving.")
    votesUp: int
    votesDown: int
    reviewFlags: list[str] = Field(
        description="Instruction-like text found: held unpublished until a person publishes it."
    )
    resolvedAt: datetime | None
    source: Literal["import", "resolution"]
    caseRef: str | None
    updatedBy: str | None


class ResolveOut(Out):
    escalation: EscalationOut
    ticket: TicketOut | None = Field(
        description="The ticket the resolution became (consent given), searchable at once."
    )


class TicketList(Out):
    tickets: list[TicketOut]


class TicketEnvelope(Out):
    ticket: TicketOut


class GapWeekOut(Out):
    week: str = Field(description="ISO week, e.g. 2026-W48.")
    count: int


class GapCaseOut(Out):
    caseRef: str
    status: str | None
    resolution: str | None = Field(description="The agent's resolution, truncated.")
    ticketId: str | None


class GapClusterOut(Out):
    id: str
    label: str = Field(description="The cluster's most central question, truncated.")
    count: int
    conversations: int
    score: float = Field(description="Count weighted by recency (half-life in tuning).")
    firstSeen: datetime
    lastSeen: datetime
    audience: Literal["all", "pro", "enterprise"] = Field(
        description="Lowest plan rung among the askers (a draft's audience)."
    )
    signals: dict[str, int]
    examples: list[str] = Field(description="Representative questions, truncated, PII masked.")
    perWeek: list[GapWeekOut]
    cases: list[GapCaseOut]
    resolvedCases: int
    canDraft: bool


class GapClustersOut(Out):
    from_: str = Field(alias="from")
    to: str
    questions: int
    clusters: list[GapClusterOut]


class DraftOut(Out):
    id: str
    title: str
    markdown: str
    audience: Literal["all", "pro", "enterprise"]
    locale: str
    status: Literal["draft", "published", "discarded"]
    clusterLabel: str
    caseRefs: list[str]
    questionCount: int
    writtenBy: str
    createdAt: datetime
    updatedAt: datetime
    updatedBy: str | None
    publishedSlug: str | None


class DraftEnvelope(Out):
    draft: DraftOut


class DraftList(Out):
    drafts: list[DraftOut]


class PublishOut(Out):
    draft: DraftOut
    article: ArticleReviewOut


class LoopWeekOut(Out):
    week: str
    ticketsFromResolutions: int
    answeredByThem: int = Field(description="Strong answers citing a resolution-born ticket.")
    conversations: int


class LoopTotalsOut(Out):
    ticketsFromResolutions: int
    answeredByThem: int
    conversations: int


class KnowledgeLoopOut(Out):
    perWeek: list[LoopWeekOut]
    totals: LoopTotalsOut


# --- health and demo ------------------------------------------------------------------------


class Health(Out):
    status: Literal["ok"]


class Readiness(Out):
    store: bool
    corpus: bool
    ready: bool
    storage: dict[str, Any] = Field(description="Which store this process runs on, and where.")
    error: str | None = None
    providers: dict[str, ProviderHealthOut] = Field(
        default_factory=dict, description="Network providers' state (configuration errors)."
    )
    degraded: list[str] = Field(
        default_factory=list,
        description="Providers with a configuration error: answers fall back offline meanwhile.",
    )
    searchIndexes: dict[str, Any] | None = Field(
        default=None,
        description=(
            "Search backend: `local` (embedded LocalSearch) or `atlas`, with each search index's "
            "status, queryability and problems (missing, not queryable, definition or "
            "numDimensions differing from ours). Not ready unless every index is ok."
        ),
    )
    details: dict[str, Any] | None = Field(
        default=None,
        description=(
            "`leaks`: template or dialect syntax left in published help pages after loading "
            "(`{%`, `{{<`, `:::`, …): total markers, pages affected and the worst pages with "
            "their first excerpt. Pages with leaks are still served; the count is for watching."
        ),
    )


class DemoCustomer(Out):
    id: str
    name: str
    plan: str
    locale: str
    identityToken: str


class DemoCustomers(Out):
    customers: list[DemoCustomer]


MetricsOut.model_rebuild()


# --- agent assist ----------------------------------------------------------------------------


class SuggestionSourceOut(Out):
    n: int
    kind: Literal["doc", "ticket"]
    docId: str
    passageId: str
    title: str
    breadcrumb: str
    audience: str
    rerankScore: float | None
    cited: bool = Field(description="The draft cites it (a policy draft quotes it).")
    url: str | None = None


class SimilarCaseOut(Out):
    kind: Literal["ticket", "case"]
    id: str
    title: str
    resolution: str = Field(description="The resolution, in one line.")
    score: float = Field(description="Cosine between the problems' vectors.")
    audience: str


class SuggestionOut(Out):
    suggestionId: str
    caseRef: str
    conversationLength: int = Field(description="Messages in the conversation it was drafted at.")
    kind: Literal["answer", "policy", "none"] = Field(
        description="answer = drafted from the sources; policy = the policy quoted and the "
        "decision left to the agent; none = nothing the customer may read answers it."
    )
    problem: str
    locale: str = Field(description="The customer's language: the draft is written in it.")
    text: str = Field(description="The draft reply to the customer ('' when kind is none).")
    decide: str | None = Field(default=None, description="What the agent must decide.")
    policyQuote: str | None = None
    confidence: str
    sources: list[SuggestionSourceOut]
    similar: list[SimilarCaseOut]
    model: str
    fallbackReason: str | None = None
    spendCapReached: bool
    latencyMs: dict[str, float]
    cached: bool = Field(description="Served from the cache for this conversation length.")
    createdAt: datetime


class AssistEventOut(Out):
    recorded: bool = Field(description="False when this suggestion already had the event.")
