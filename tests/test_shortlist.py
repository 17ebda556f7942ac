"""Reserved rerank seats: a corpus with a low fusion weight can still reach the reranker."""

from __future__ import annotations

from app.search.base import Hit
from app.turn.fuse import FusedCandidate
from app.turn.rerank import select_shortlist


def cand(pid: str, score: float, **ranks: int) -> FusedCandidate:
    hit = Hit(
        passage_id=pid, kind="doc", doc_id=pid, title=pid, breadcrumb=pid, text=pid, score=score
    )
    return FusedCandidate(hit=hit, score=score, ranks=ranks)


def test_without_reserved_seats_only_the_head_is_reranked() -> None:
    fused = [cand(f"c{i}", 1 / (60 + i), dense_chunks=i) for i in range(1, 31)]
    fused.append(cand("t1", 0.5 / 61, dense_tickets=1))
    picked = select_shortlist(fused, 20, 0)
    assert [c.passage_id for _, c in picked] == [f"c{i}" for i in range(1, 21)]


def test_each_rankers_top_hits_get_a_seat_with_their_true_fused_rank() -> None:
    fused = [cand(f"c{i}", 1 / (60 + i), dense_chunks=i) for i in range(1, 31)]
    fused += [
        cand("t1", 0.5 / 61, dense_tickets=1),
        cand("t2", 0.5 / 62, dense_tickets=2),
        cand("t3", 0.5 / 63, dense_tickets=3),
        cand("t4", 0.5 / 64, dense_tickets=4),
    ]
    picked = select_shortlist(fused, 20, 3)
    ids = [c.passage_id for _, c in picked]
    assert ids[:20] == [f"c{i}" for i in range(1, 21)]
    assert ids[20:] == ["t1", "t2", "t3"]  # t4 is beyond the reserved seats
    assert [rank for rank, _ in picked][20:] == [31, 32, 33]


def test_a_hit_already_in_the_head_is_not_added_twice() -> None:
    fused = [cand("t1", 0.02, dense_tickets=1, dense_chunks=1), cand("c2", 0.01, dense_chunks=2)]
    assert [c.passage_id for _, c in select_shortlist(fused, 20, 3)] == ["t1", "c2"]
