"""Rerank the fused shortlist against the customer's own words (DESIGN 5.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.providers.rerank.base import Reranker, VectorReranker, clamp01
from app.search.base import Hit
from app.turn.fuse import FusedCandidate


@dataclass(frozen=True, slots=True)
class RankedPassage:
    """A passage as the prompt and the message meta see it."""

    hit: Hit
    rrf_score: float
    rerank_score: float | None  # None when the reranker could not run
    fused_rank: int  # 1-based position after fusion

    def meta(self) -> dict[str, object]:
        """The `passages[]` entry of an assistant message's meta (DESIGN 3)."""
        return {
            "kind": self.hit.kind,
            "id": self.hit.passage_id,
            "docId": self.hit.doc_id,
            "title": self.hit.title,
            "breadcrumb": self.hit.breadcrumb,
            "rrfScore": round(self.rrf_score, 6),
            "rerankScore": None if self.rerank_score is None else round(self.rerank_score, 4),
        }


def rerank_query(original: str, condensed: str, with_condensed: bool = False) -> str:
    """The original message; the condensed question only when the original is blank.

    `with_condensed` (tuning.rerank_with_condensed) appends the condensed question when it
    differs: a follow-up such as "and on the mobile app?" names nothing on its own, so the
    customer's words are read together with what they refer to.
    """
    if not original.strip():
        return condensed
    if with_condensed and condensed.strip() and condensed.strip() != original.strip():
        return f"{original}\n{condensed}"
    return original


def passage_text(hit: Hit) -> str:
    """Heading line (breadcrumb, or the title) then the body: the `Reranker` text format."""
    heading = hit.breadcrumb or hit.title
    return f"{heading}\n{hit.text}" if heading else hit.text


def unranked(candidates: Sequence[FusedCandidate]) -> list[RankedPassage]:
    """Fused order without rerank scores (the fallback when the reranker fails)."""
    return [
        RankedPassage(hit=c.hit, rrf_score=c.score, rerank_score=None, fused_rank=i)
        for i, c in enumerate(candidates, start=1)
    ]


def select_shortlist(
    candidates: Sequence[FusedCandidate], shortlist: int, reserved_per_ranker: int = 0
) -> list[tuple[int, FusedCandidate]]:
    """(fused rank, candidate) pairs to rerank: the top `shortlist` fused candidates, plus each
    ranker's top `reserved_per_ranker` hits that fusion pushed below the cut.

    With the design's weights a rank-1 ticket fuses to 0.5/61 ≈ 0.0082, below the 40th dense
    chunk (1/100), so without reserved seats no ticket would ever reach the reranker — and a
    symptom only a past ticket describes could never be answered. The reranker, which reads the
    customer's own words, decides whether those extra candidates deserve a place.
    """
    head = [(i, c) for i, c in enumerate(candidates[:shortlist], start=1)]
    if reserved_per_ranker <= 0:
        return head
    chosen = {c.passage_id for _, c in head}
    for i, c in enumerate(candidates[shortlist:], start=shortlist + 1):
        if c.passage_id not in chosen and any(r <= reserved_per_ranker for r in c.ranks.values()):
            head.append((i, c))
            chosen.add(c.passage_id)
    return head


async def rerank_candidates(
    query: str,
    candidates: Sequence[FusedCandidate],
    reranker: Reranker,
    shortlist: int,
    reserved_per_ranker: int = 0,
) -> list[RankedPassage]:
    """Score the shortlist (see `select_shortlist`); best first, ties kept in fused order.

    Raises whatever the reranker raises: the caller decides the fallback.
    """
    selected = select_shortlist(candidates, shortlist, reserved_per_ranker)
    head = [c for _, c in selected]
    if not head:
        return []
    texts = [passage_text(c.hit) for c in head]
    if isinstance(reranker, VectorReranker):
        scores = await reranker.rerank_with_vectors(query, texts, [c.hit.vector for c in head])
    else:
        scores = await reranker.rerank(query, texts)
    if len(scores) != len(head):
        raise ValueError(f"reranker {reranker.name} returned {len(scores)} scores for {len(head)}")
    ranked = [
        RankedPassage(hit=c.hit, rrf_score=c.score, rerank_score=clamp01(float(s)), fused_rank=i)
        for (i, c), s in zip(selected, scores, strict=True)
    ]
    ranked.sort(key=lambda p: (-(p.rerank_score or 0.0), p.fused_rank))
    return ranked
