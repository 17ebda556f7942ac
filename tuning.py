"""Every answer-quality knob in one frozen object.

Secrets, URIs and provider choices live in `app.settings`; the numbers that decide what a customer
sees live here, each with the reason it has the value it has. Stages take these values as arguments,
so a test can pass `dataclasses.replace(TUNING, ...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class AnswerabilityModel:
    """A logistic model of "the answer is in these passages" (app/turn/confidence.py):
    p = sigmoid(intercept + Σ weights[f] · feature f); fitted by
    scripts/evaluation/fit_confidence.py.
    """

    version: str
    intercept: float
    weights: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class ConfidenceBands:
    """One reranker's thresholds. With a `model`, `strong`/`weak` apply to its answerability
    probability and a strong answer also needs the best passage's rerank score ≥ `passage_floor`;
    without one they apply to the top rerank score itself."""

    strong: float
    weak: float
    passage_floor: float = 0.0
    model: AnswerabilityModel | None = None


@dataclass(frozen=True)
class Tuning:
    # --- fusion (DESIGN 5.4) ---
    rrf_k: int = 60  # standard RRF constant: flattens the head so no single ranker dominates
    weight_dense_chunks: float = 1.0  # semantic match on passages is the most reliable signal
    weight_bm25_articles: float = 0.7  # exact codes/SKUs; weaker on paraphrases
    weight_dense_tickets: float = 0.5  # tickets are anecdotal: help, but never outrank docs
    ticket_half_life_days: float = 180.0  # a fix from six months ago counts half as much
    ticket_unknown_age_decay: float = 0.5  # unknown age is treated like one half-life
    ticket_min_quality: float = 0.7  # low-quality resolutions are worse than no resolution

    # --- rankers (DESIGN 5.3) ---
    vector_num_candidates: int = 200  # ANN breadth: ~5x limit keeps HNSW recall near exact
    vector_limit: int = 40  # dense chunks fed to fusion
    keyword_limit: int = 30  # BM25 articles fed to fusion
    ticket_limit: int = 20  # tickets fed to fusion
    bm25_title_boost: float = 3.0  # titles name the task; matching one is strong evidence
    bm25_tags_boost: float = 2.0  # tags carry error codes and product names verbatim

    # --- rerank (DESIGN 5.5) ---
    rerank_shortlist: int = 20  # cross-attention is costly: rerank only the fused head
    top_passages: int = 5  # what the prompt can hold without diluting the answer
    # Each ranker's top N also get reranked even when fusion ranks them below the shortlist:
    # with the weights above a rank-1 ticket (0.5/61) sorts below the 40th dense chunk (1/100),
    # so without this no ticket could ever be shown (measured: ticket recall@5 0.000).
    rerank_reserved_per_ranker: int = 3
    rerank_with_condensed: bool = False  # rerank against message + condensed question
    # Thresholds per reranker (app/turn/confidence.py). A reranker missing here is not
    # calibrated: its top passages are re-scored by `confidence_fallback` for the band, and the
    # band's reason says so (cross-encoder and voyage: no weights / no API key offline to fit on).
    confidence: Mapping[str, ConfidenceBands] = field(
        default_factory=lambda: MappingProxyType(
            {
                "offline": ConfidenceBands(strong=0.70, weak=0.55),
            }
        )
    )
    confidence_fallback: str = "offline"  # the calibrated reranker that scores for the others

    # --- escalation (DESIGN 6) ---
    max_failed_turns: int = 2  # a third miss in a row means the bot is not going to get there
    always_escalate_intents: frozenset[str] = frozenset(
        {
            "billing_dispute",
            "cancellation",
            "refund_request",
            "data_deletion",
            "legal",
            "human_handoff",
        }
    )  # authority boundaries: a bot must not decide these, whatever it could retrieve
    sla_hours: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"enterprise": 4, "pro": 24, "free": 72})
    )  # contractual first-response times per plan

    # --- memory (DESIGN 8) ---
    verbatim_turns: int = 6  # recent turns carry pronouns and corrections word for word
    summarize_every_turns: int = 6  # older turns fold into the summary at this cadence
    anonymous_session_ttl_days: int = 30  # an anonymous session is a cache, not a record
    memory_budget_chars: int = 6000  # summary + facts + verbatim turns stay under this

    # --- ingestion ---
    max_chunk_size: int = 1200  # characters; ~250 tokens fits MiniLM's 256-token window
    chunk_overlap: int = 150  # characters carried into the next chunk so no sentence is orphaned
    max_document_bytes: int = 1_000_000  # larger files are rejected, not truncated silently
    embed_batch_size: int = 32  # MiniLM on 2 CPU cores: large enough to amortise, small enough

    # --- entitlement (DESIGN 5.2) ---
    audience_ladder: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType(
            {
                "free": ("all",),
                "pro": ("all", "pro"),
                "enterprise": ("all", "pro", "enterprise"),
            }
        )
    )  # unknown or missing plan falls to the free rung (fail closed)

    # --- abuse controls ---
    rate_limit_session_per_minute: int = 20  # a fast human types ~6 messages a minute
    rate_limit_address_per_minute: int = 60  # several people behind one NAT
    max_message_chars: int = 4000  # longer is a paste of logs; we truncate retrieval input
    max_body_bytes: int = 64_000  # request bodies beyond this are 413
    daily_spend_cap_usd: float = 20.0  # past this, turns fall back to the offline provider


TUNING = Tuning()
