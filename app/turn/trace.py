"""The turn's trace: one typed model for an assistant message's `meta` (DESIGN 3).

Every assistant message the service stores carries a `TurnTrace`: a normal answer, a handoff
(typed or the "talk to a person" button), an off-topic refusal, or an error. The engine builds it
once at the end of the turn; the API views, analytics and the demo inspector read the same
fields (`TurnTrace.read` accepts older documents, filling what they lack). Stored and shown in
camelCase, the contract's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Confidence = Literal["strong", "weak", "none"]


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class PassageTrace(_Camel):
    """One passage the turn retrieved, with its scores (knowledge gap vs retrieval miss)."""

    kind: str
    id: str
    doc_id: str | None = None
    title: str = ""
    breadcrumb: str = ""
    rrf_score: float | None = None
    rerank_score: float | None = None


class ToolTrace(_Camel):
    tool: str
    ok: bool
    found: bool
    ref: str | None = None  # the order / case reference looked up, when there was one


class CitationTrace(_Camel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    n: int | None = None
    passage_id: str | None = None
    doc_id: str | None = None
    kind: str | None = None
    title: str | None = None
    breadcrumb: str | None = None
    url: str | None = None


class TurnTrace(_Camel):
    """Why the bot said what it said: everything "why did it escalate that?" needs."""

    via: Literal["message", "button"] = "message"
    intent: str | None = None
    intent_score: float | None = None
    sentiment: str | None = None
    language: str | None = None  # the reply's locale (the customer's message language)
    confidence: Confidence | None = None
    condensed_question: str | None = None
    condensation: dict[str, Any] | None = None
    top_rerank_score: float | None = None
    answerability: float | None = None
    confidence_reason: str | None = None
    retrieval_locale: str | None = None
    retrieval_reason: str | None = None
    retrieval_errors: list[str] = Field(default_factory=list)
    # the tenant's synonyms the lexical (BM25) query was expanded with (app/language/synonyms.py)
    synonyms_added: list[str] = Field(default_factory=list)
    # misspelt words and the corpus words they were searched as (app/turn/retrieve.py)
    spelling_repairs: dict[str, str] = Field(default_factory=dict)
    escalated: bool = False
    escalation_reason: Literal["policy", "explicit", "frustration", "failed_turns"] | None = None
    escalation_explanation: str | None = None
    case_ref: str | None = None
    failed_turns: int | None = None
    passage_count: int = 0
    passages: list[PassageTrace] = Field(default_factory=list)
    tools: list[ToolTrace] = Field(default_factory=list)
    citations: list[CitationTrace] = Field(default_factory=list)
    invalid_citations: int = 0
    model: str = "rules"
    off_topic: bool = False
    plan_notice: str | None = None  # the article above the customer's plan the reply named
    fallback_reason: str | None = None
    stop_reason: str | None = None
    spend_cap_reached: bool = False
    error: str | None = None
    latency_ms: dict[str, float] = Field(default_factory=dict)  # condense, retrieve, ..., total
    tokens: dict[str, int] = Field(  # input, output, cacheRead, cacheWrite, calls, ...
        default_factory=lambda: {"input": 0, "output": 0, "cacheRead": 0}
    )

    def to_meta(self) -> dict[str, Any]:
        """The stored `meta` document (camelCase)."""
        return self.model_dump(by_alias=True, mode="json")

    @classmethod
    def read(cls, meta: Mapping[str, Any] | None) -> TurnTrace:
        """A stored `meta` as a trace; tolerant of documents written before a field existed."""
        return cls.model_validate(dict(meta or {}))
