"""Weighted Reciprocal Rank Fusion with ticket recency decay (DESIGN 5.4). Pure.

    score(p) = Σ_r  w_r · d_r(p) / (k + rank_r(p))        ranks from 1, k = tuning.rrf_k

`d` is 1 for help-article passages; for tickets it is `0.5 ** (ageDays / halfLife)`, 0.5 when
the resolution date is unknown, and 1 when it is today or in the future (clock skew, bad data:
never a bonus above 1). Fusion is keyed by passage id, so a BM25 article hit represented by
chunk X and a dense hit on chunk X add up into one candidate.

Choices where the design is silent:
- A passage listed twice by one ranker counts once, at its better rank (the ranks of the
  passages after it are kept as the ranker gave them).
- Ties are broken deterministically: higher score, then the better best rank in any ranker,
  then the ranker order dense_chunks → bm25_articles → dense_tickets of that best rank,
  then passage id. Scores are compared rounded to 12 decimals, so float summation order
  cannot decide a tie.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.search.base import Hit
from tuning import Tuning

DENSE_CHUNKS = "dense_chunks"
BM25_ARTICLES = "bm25_articles"
DENSE_TICKETS = "dense_tickets"
RANKERS: tuple[str, ...] = (DENSE_CHUNKS, BM25_ARTICLES, DENSE_TICKETS)


@dataclass(frozen=True, slots=True)
class FusedCandidate:
    """A passage after fusion: its representative hit, fused score and where it came from."""

    hit: Hit
    score: float
    ranks: Mapping[str, int] = field(default_factory=dict)  # ranker -> rank (from 1)
    decay: float = 1.0

    @property
    def passage_id(self) -> str:
        return self.hit.passage_id


def recency_decay(
    resolved_at: datetime | None,
    now: datetime,
    *,
    half_life_days: float,
    unknown_age_decay: float,
) -> float:
    """`0.5 ** (ageDays / halfLife)`; unknown → `unknown_age_decay`; zero or future age → 1."""
    if resolved_at is None:
        return unknown_age_decay
    if resolved_at.tzinfo is None:
        resolved_at = resolved_at.replace(tzinfo=UTC)  # stored naive datetimes are UTC
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    age_days = (now - resolved_at).total_seconds() / 86_400.0
    if age_days <= 0:
        return 1.0
    return float(0.5 ** (age_days / half_life_days))


def weighted_rrf(
    rankings: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float],
    *,
    k: int,
    now: datetime,
    half_life_days: float,
    unknown_age_decay: float,
) -> list[FusedCandidate]:
    """Fuse ranked lists by passage id; rankers without a weight contribute nothing."""
    order = {name: i for i, name in enumerate(RANKERS)}
    hits: dict[str, Hit] = {}
    ranks: dict[str, dict[str, int]] = {}
    for ranker, ranked in rankings.items():
        for position, hit in enumerate(ranked, start=1):
            seen = ranks.setdefault(hit.passage_id, {})
            if ranker in seen:
                continue  # listed twice by one ranker: the better rank counts
            seen[ranker] = position
            hits.setdefault(hit.passage_id, hit)

    fused: list[FusedCandidate] = []
    for pid, by_ranker in ranks.items():
        hit = hits[pid]
        decay = (
            recency_decay(
                hit.resolved_at,
                now,
                half_life_days=half_life_days,
                unknown_age_decay=unknown_age_decay,
            )
            if hit.kind == "ticket"
            else 1.0
        )
        score = sum(weights.get(r, 0.0) * decay / (k + rank) for r, rank in by_ranker.items())
        fused.append(FusedCandidate(hit=hit, score=score, ranks=dict(by_ranker), decay=decay))

    def sort_key(c: FusedCandidate) -> tuple[float, int, int, str]:
        best_ranker, best_rank = min(
            c.ranks.items(), key=lambda kv: (kv[1], order.get(kv[0], len(order)))
        )
        return (-round(c.score, 12), best_rank, order.get(best_ranker, len(order)), c.passage_id)

    fused.sort(key=sort_key)
    return fused


def fuse(
    dense_chunks: Sequence[Hit],
    bm25_articles: Sequence[Hit],
    dense_tickets: Sequence[Hit],
    tuning: Tuning,
    now: datetime | None = None,
) -> list[FusedCandidate]:
    """The three rankers of DESIGN 5.3 fused with the weights and decay from tuning."""
    return weighted_rrf(
        {DENSE_CHUNKS: dense_chunks, BM25_ARTICLES: bm25_articles, DENSE_TICKETS: dense_tickets},
        {
            DENSE_CHUNKS: tuning.weight_dense_chunks,
            BM25_ARTICLES: tuning.weight_bm25_articles,
            DENSE_TICKETS: tuning.weight_dense_tickets,
        },
        k=tuning.rrf_k,
        now=now or datetime.now(UTC),
        half_life_days=tuning.ticket_half_life_days,
        unknown_age_decay=tuning.ticket_unknown_age_decay,
    )
