"""Weighted RRF and ticket recency decay, against hand-computed numbers (DESIGN 5.4)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from app.search.base import Hit
from app.turn.fuse import fuse, recency_decay, weighted_rrf
from tuning import TUNING

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def doc(pid: str) -> Hit:
    return Hit(
        passage_id=pid,
        kind="doc",
        doc_id=pid.split("#")[0],
        title=pid,
        breadcrumb=pid,
        text=pid,
        score=0.0,
    )


def ticket(pid: str, age_days: float | None) -> Hit:
    return Hit(
        passage_id=pid,
        kind="ticket",
        doc_id=pid,
        title=pid,
        breadcrumb="Resolved ticket",
        text=pid,
        score=0.0,
        resolved_at=None if age_days is None else NOW - timedelta(days=age_days),
    )


def decay(resolved_at: datetime | None, now: datetime = NOW) -> float:
    return recency_decay(resolved_at, now, half_life_days=180.0, unknown_age_decay=0.5)


@pytest.mark.parametrize(
    ("age_days", "expected"),
    [
        (0, 1.0),  # resolved right now
        (180, 0.5),  # one half-life
        (360, 0.25),
        (90, 0.5**0.5),
        (-30, 1.0),  # in the future: never a bonus above 1
    ],
)
def test_recency_decay(age_days: float, expected: float) -> None:
    assert decay(NOW - timedelta(days=age_days)) == pytest.approx(expected)


def test_unknown_age_decays_like_one_half_life() -> None:
    assert decay(None) == 0.5


def test_naive_datetimes_are_treated_as_utc() -> None:
    naive = (NOW - timedelta(days=180)).replace(tzinfo=None)
    assert decay(naive) == pytest.approx(0.5)
    assert decay(NOW - timedelta(days=180), now=NOW.replace(tzinfo=None)) == pytest.approx(0.5)


def test_fuse_hand_computed_with_design_weights() -> None:
    a, b, c = doc("a#0"), doc("b#0"), doc("c#1")
    t_old, t_unknown = ticket("T-1", 180), ticket("T-2", None)
    fused = fuse([a, b], [b, c], [t_old, t_unknown], TUNING, now=NOW)
    scores = {f.passage_id: f.score for f in fused}
    assert scores["b#0"] == pytest.approx(1.0 / 62 + 0.7 / 61)  # dense #2 + bm25 #1
    assert scores["a#0"] == pytest.approx(1.0 / 61)
    assert scores["c#1"] == pytest.approx(0.7 / 62)
    assert scores["T-1"] == pytest.approx(0.5 * 0.5 / 61)
    assert scores["T-2"] == pytest.approx(0.5 * 0.5 / 62)
    assert [f.passage_id for f in fused] == ["b#0", "a#0", "c#1", "T-1", "T-2"]
    b_fused = fused[0]
    assert b_fused.ranks == {"dense_chunks": 2, "bm25_articles": 1}
    assert b_fused.decay == 1.0
    assert fused[3].decay == pytest.approx(0.5)


def test_article_hit_and_dense_hit_on_the_same_chunk_add_up() -> None:
    dense_hit = doc("sso#1")
    bm25_hit = dataclasses.replace(doc("sso#1"), score=12.5)  # BM25 article mapped to sso#1
    fused = fuse([dense_hit], [bm25_hit], [], TUNING, now=NOW)
    assert len(fused) == 1
    assert fused[0].score == pytest.approx(1.0 / 61 + 0.7 / 61)


def test_fresh_ticket_beats_identical_old_ticket() -> None:
    fused = fuse([], [], [ticket("old", 720), ticket("new", 1)], TUNING, now=NOW)
    # new is ranked 2nd but barely decayed: 0.5·0.996/62 > 0.5·0.0625/61
    assert [f.passage_id for f in fused] == ["new", "old"]


def test_tuning_values_are_used() -> None:
    tuning = dataclasses.replace(TUNING, rrf_k=10, weight_bm25_articles=2.0)
    fused = fuse([doc("a#0")], [doc("b#0")], [], tuning, now=NOW)
    assert [(f.passage_id, round(f.score, 6)) for f in fused] == [
        ("b#0", round(2.0 / 11, 6)),
        ("a#0", round(1.0 / 11, 6)),
    ]


def test_tie_broken_by_ranker_order_of_the_best_rank() -> None:
    """Equal weights, equal ranks: dense_chunks comes before bm25_articles."""
    tuning = dataclasses.replace(TUNING, weight_bm25_articles=1.0)
    fused = fuse([doc("z#0")], [doc("a#0")], [], tuning, now=NOW)
    assert [f.passage_id for f in fused] == ["z#0", "a#0"]
    assert fused[0].score == fused[1].score


def test_tie_with_float_summation_in_different_orders_is_still_a_tie() -> None:
    """1/61 + 1/62 summed in two orders; then the better best rank (both 1) and ranker order."""
    tuning = dataclasses.replace(TUNING, weight_bm25_articles=1.0)
    x, y = doc("x#0"), doc("y#0")
    fused = fuse([x, y], [y, x], [], tuning, now=NOW)
    assert fused[0].score == pytest.approx(fused[1].score)
    assert [f.passage_id for f in fused] == ["x#0", "y#0"]  # x's best rank is in dense_chunks


def test_full_tie_falls_back_to_passage_id() -> None:
    fused = weighted_rrf(
        {"r1": [doc("b#0")], "r2": [doc("a#0")]},
        {"r1": 1.0, "r2": 1.0},
        k=60,
        now=NOW,
        half_life_days=180.0,
        unknown_age_decay=0.5,
    )
    assert [f.passage_id for f in fused] == ["a#0", "b#0"]


def test_ties_are_deterministic_whatever_the_input_order() -> None:
    lists = [doc(f"p{i}#0") for i in range(6)]
    first = fuse(lists[:3], lists[3:], [], dataclasses.replace(TUNING, weight_bm25_articles=1.0))
    second = fuse(lists[:3], lists[3:], [], dataclasses.replace(TUNING, weight_bm25_articles=1.0))
    assert [f.passage_id for f in first] == [f.passage_id for f in second]
    assert [f.passage_id for f in first] == ["p0#0", "p3#0", "p1#0", "p4#0", "p2#0", "p5#0"]


def test_duplicate_in_one_ranker_counts_once_at_its_better_rank() -> None:
    fused = fuse([doc("a#0"), doc("b#0"), doc("a#0")], [], [], TUNING, now=NOW)
    scores = {f.passage_id: f.score for f in fused}
    assert scores == pytest.approx({"a#0": 1.0 / 61, "b#0": 1.0 / 62})
    assert fused[0].ranks == {"dense_chunks": 1}


def test_ranker_without_weight_contributes_nothing() -> None:
    fused = weighted_rrf(
        {"dense_chunks": [doc("a#0")], "mystery": [doc("a#0")]},
        {"dense_chunks": 1.0},
        k=60,
        now=NOW,
        half_life_days=180.0,
        unknown_age_decay=0.5,
    )
    assert fused[0].score == pytest.approx(1.0 / 61)
    assert fused[0].ranks == {"dense_chunks": 1, "mystery": 1}


def test_empty_inputs() -> None:
    assert fuse([], [], [], TUNING, now=NOW) == []


def test_decay_applies_to_tickets_only() -> None:
    old_doc = dataclasses.replace(doc("a#0"), resolved_at=NOW - timedelta(days=999))
    fused = fuse([old_doc], [], [], TUNING, now=NOW)
    assert fused[0].score == pytest.approx(1.0 / 61)
