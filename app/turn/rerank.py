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


def rerank_query(original: str, condensed: str) -> str:
    """The original message; the condensed question only when the original is blank."""
    return original if original.strip() else condensed


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


async def rerank_candidates(
    query: str,
    candidates: Sequence[FusedCandidate],
    reranker: Reranker,
    shortlist: int,
) -> list[RankedPassage]:
    """Score the top `shortlist` fused candidates; best first, ties kept in fused order.

    Raises whatever the reranker raises: the caller decides the fallback.
    """
    head = list(candidates[:shortlist])
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
        for i, (c, s) in enumerate(zip(head, scores, strict=True), start=1)
    ]
    ranked.sort(key=lambda p: (-(p.rerank_score or 0.0), p.fused_rank))
    return ranked
