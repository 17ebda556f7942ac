"""The rerank stage (original words, shortlist, order) and the confidence bands."""

from __future__ import annotations

import dataclasses
import math

import pytest

from app.providers.rerank import FakeReranker
from app.search.base import Hit
from app.turn.confidence import top_score_band
from app.turn.fuse import FusedCandidate
from app.turn.rerank import passage_text, rerank_candidates, rerank_query, unranked
from tuning import ConfidenceBands


def cand(pid: str, score: float, text: str = "", breadcrumb: str = "") -> FusedCandidate:
    hit = Hit(
        passage_id=pid,
        kind="doc",
        doc_id=pid.split("#")[0],
        title=pid,
        breadcrumb=breadcrumb or pid,
        text=text or pid,
        score=0.0,
    )
    return FusedCandidate(hit=hit, score=score, ranks={"dense_chunks": 1})


@pytest.mark.parametrize(
    ("original", "condensed", "expected"),
    [
        ("it still fails", "Does SSO login still fail with AUTH_302?", "it still fails"),
        ("", "Does SSO fail?", "Does SSO fail?"),
        ("   \n\t", "Does SSO fail?", "Does SSO fail?"),
    ],
)
def test_rerank_query_prefers_the_customers_own_words(
    original: str, condensed: str, expected: str
) -> None:
    assert rerank_query(original, condensed) == expected


def test_passage_text_puts_the_heading_first() -> None:
    hit = cand("a#0", 0.1, text="Body.", breadcrumb="Title › Section").hit
    assert passage_text(hit) == "Title › Section\nBody."
    bare = dataclasses.replace(hit, breadcrumb="", title="")
    assert passage_text(bare) == "Body."


async def test_only_the_shortlist_is_reranked_and_sorted_by_rerank_score() -> None:
    cands = [cand(f"p{i}#0", 1.0 / (i + 1), text=f"text {i}") for i in range(30)]
    reranker = FakeReranker({"text 7": 0.9, "text 3": 0.7}, default=0.2)
    ranked = await rerank_candidates("q", cands, reranker, shortlist=20)
    assert len(reranker.calls) == 1 and len(reranker.calls[0][1]) == 20
    assert len(ranked) == 20
    assert [p.hit.passage_id for p in ranked[:2]] == ["p7#0", "p3#0"]
    assert ranked[0].fused_rank == 8 and ranked[0].rerank_score == 0.9
    assert ranked[0].rrf_score == pytest.approx(1.0 / 8)
    # equal rerank scores keep fused order
    assert [p.fused_rank for p in ranked[2:]] == sorted(p.fused_rank for p in ranked[2:])


async def test_reranker_returning_the_wrong_number_of_scores_is_an_error() -> None:
    class Short(FakeReranker):
        async def rerank(self, query: str, texts: object) -> list[float]:
            return [0.5]

    with pytest.raises(ValueError, match="1 scores for 2"):
        await rerank_candidates("q", [cand("a#0", 0.1), cand("b#0", 0.05)], Short(), 20)


async def test_out_of_range_scores_are_clamped() -> None:
    class Wild(FakeReranker):
        async def rerank(self, query: str, texts: object) -> list[float]:
            return [1.7, -0.2, math.nan]

    ranked = await rerank_candidates(
        "q", [cand("a#0", 0.3), cand("b#0", 0.2), cand("c#0", 0.1)], Wild(), 20
    )
    assert [p.rerank_score for p in ranked] == [1.0, 0.0, 0.0]


async def test_stored_vectors_reach_a_vector_reranker() -> None:
    class Recording(FakeReranker):
        seen: tuple[object, ...] = ()

        async def rerank_with_vectors(
            self, query: str, texts: object, vectors: list[object]
        ) -> list[float]:
            self.seen = tuple(vectors)
            return [0.5 for _ in vectors]

    with_vec = cand("a#0", 0.2)
    with_vec = dataclasses.replace(
        with_vec, hit=dataclasses.replace(with_vec.hit, vector=(1.0, 0.0))
    )
    reranker = Recording()
    await rerank_candidates("q", [with_vec, cand("b#0", 0.1)], reranker, 20)
    assert reranker.seen == ((1.0, 0.0), None)
    assert reranker.calls == []  # the text-only path was not used


async def test_no_candidates_no_call() -> None:
    reranker = FakeReranker()
    assert await rerank_candidates("q", [], reranker, 20) == []
    assert reranker.calls == []


def test_unranked_keeps_fused_order_without_scores() -> None:
    out = unranked([cand("a#0", 0.3), cand("b#0", 0.2)])
    assert [(p.hit.passage_id, p.rerank_score, p.fused_rank) for p in out] == [
        ("a#0", None, 1),
        ("b#0", None, 2),
    ]


def test_passage_meta_shape() -> None:
    out = unranked([cand("a#0", 0.0123456789)])[0]
    meta = out.meta()
    assert meta == {
        "kind": "doc",
        "id": "a#0",
        "docId": "a",
        "title": "a#0",
        "breadcrumb": "a#0",
        "rrfScore": 0.012346,
        "rerankScore": None,
    }


# --- confidence ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "band"),
    [(0.95, "strong"), (0.6, "strong"), (0.5999, "weak"), (0.45, "weak"), (0.4499, "none")],
)
def test_band_thresholds_are_inclusive(score: float, band: str) -> None:
    assert top_score_band(score, ConfidenceBands(strong=0.6, weak=0.45)) == band
