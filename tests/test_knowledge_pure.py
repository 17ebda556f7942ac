"""The knowledge loop's pure policy: resolution tickets, gap signals, clustering, drafts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
import yaml

from app.knowledge.drafts import distinct_sentences, extractive_draft
from app.knowledge.gaps import (
    GapQuestion,
    adjusted_rand_index,
    build_clusters,
    cluster_labels,
    gap_signals,
    merge_clusters,
    purity,
)
from app.knowledge.resolution import (
    audience_for_plan,
    key_facts,
    product_of,
    resolution_ticket,
    suggested_resolution,
)
from app.store.models import Escalation, Message
from app.tenant import Product
from tuning import TUNING

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _case(**kw: object) -> Escalation:
    base: dict[str, object] = {
        "case_ref": "CASE-ABC234",
        "conversation_id": "c1",
        "reason": "explicit",
        "asked_for": "the wall display flickers after the 4.2 update, contact ann@example.com",
        "customer": {"id": "cus_x", "plan": "pro", "locale": "de-AT", "email": "ann@example.com"},
        "conversation": {
            "facts": [
                {"kind": "error_code", "value": "E-42", "seq": 1},
                {"kind": "order", "value": "ORD-9", "seq": 1},
                {"kind": "case", "value": "CASE-X", "seq": 2},
            ]
        },
        "created_at": NOW,
        "sla_due_at": NOW,
    }
    base.update(kw)
    return Escalation.model_validate(base)


@pytest.mark.parametrize(
    ("plan", "audience"),
    [
        ("free", "all"),
        ("pro", "pro"),
        ("Enterprise ", "enterprise"),
        (None, "all"),
        ("gold", "all"),
    ],
)
def test_ticket_audience_is_the_plan_rung_failing_closed(plan: str | None, audience: str) -> None:
    assert audience_for_plan(plan, TUNING) == audience


def test_resolution_ticket_masks_pii_keeps_problem_and_drops_account_facts() -> None:
    ticket = resolution_ticket(
        _case(),
        "Roll back to 4.1, then call +44 20 7946 0958. Card 4111 1111 1111 1111 was not charged.",
        quality=0.9,
        now=NOW,
        tuning=TUNING,
        products=[Product(name="Wall Display", aliases=("wall display",))],
    )
    assert ticket.id == "res-case-abc234" and ticket.case_ref == "CASE-ABC234"
    assert ticket.source == "resolution" and ticket.status == "resolved"
    assert ticket.audience == "pro" and ticket.locale == "de" and ticket.quality == 0.9
    assert ticket.product == "wall-display"
    assert "flickers after the 4.2 update" in ticket.symptom
    assert "error code: E-42" in ticket.symptom
    assert "ORD-9" not in ticket.symptom and "CASE-X" not in ticket.symptom
    for text in (ticket.subject, ticket.symptom, ticket.resolution):
        assert "ann@example.com" not in text
    assert "7946 0958" not in ticket.resolution and "4111 1111 1111 1111" not in ticket.resolution
    assert ticket.resolved_at == NOW


def test_agent_can_narrow_the_audience_but_never_widen_it() -> None:
    wider = resolution_ticket(_case(), "fix", quality=0.8, now=NOW, tuning=TUNING, audience="all")
    assert wider.audience == "pro"  # the pro customer's rung: a free visitor never sees it
    narrower = resolution_ticket(
        _case(), "fix", quality=0.8, now=NOW, tuning=TUNING, audience="enterprise"
    )
    assert narrower.audience == "enterprise"


def test_key_facts_and_product_detection() -> None:
    assert key_facts(
        [{"kind": "sku", "value": "HX-1"}, "junk", {"kind": "order", "value": "1"}]
    ) == ["sku: HX-1"]
    products = [Product(name="Desk Tag", sku="DT-2", aliases=("desk tags",))]
    assert product_of("our desk tags are blank", products) == "desk-tag"
    assert product_of("part DT-2 rattles", products) == "desk-tag"
    assert product_of("deskTagging", products) == ""


def test_suggested_resolution_is_the_agents_replies_in_order() -> None:
    def msg(seq: int, role: str, content: str) -> Message:
        return Message.model_validate(
            {
                "_id": f"m{seq}",
                "conversation_id": "c",
                "seq": seq,
                "role": role,
                "content": content,
                "created_at": NOW,
            }
        )

    msgs = [
        msg(1, "user", "help"),
        msg(2, "agent", "Try  a restart."),
        msg(3, "agent", "Then reset."),
    ]
    assert suggested_resolution(msgs) == "Try a restart.\n\nThen reset."
    assert suggested_resolution([msg(1, "agent", "x" * 50)], limit=10) == "x" * 9 + "…"


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"confidence": "weak"}, ("weak",)),
        ({"confidence": "none"}, ("none",)),
        ({"confidence": "strong"}, ()),
        ({"confidence": "none", "tool_found": True}, ()),  # a successful tool answer
        ({"confidence": "none", "escalation_reason": "policy"}, ()),  # never the bot's call
        ({"confidence": "strong", "thumbs_down": True}, ("thumbs_down",)),
        ({"confidence": "strong", "not_solved": True}, ("not_solved",)),
        ({"confidence": "none", "escalation_reason": "explicit"}, ("none", "handoff")),
        ({"confidence": "weak", "off_topic": True}, ()),
    ],
)
def test_gap_signals(kw: dict[str, object], expected: tuple[str, ...]) -> None:
    args: dict[str, object] = {
        "confidence": None,
        "escalation_reason": None,
        "tool_found": False,
        "thumbs_down": False,
        "not_solved": False,
    }
    args.update(kw)
    assert gap_signals(**args) == expected  # type: ignore[arg-type]


def _blobs(k: int, per: int, dim: int = 32, noise: float = 0.3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, dim))
    return np.vstack([c + rng.normal(scale=noise, size=(per, dim)) for c in centers])


def test_clustering_recovers_separated_groups_exact_and_two_stage() -> None:
    x = _blobs(6, 40)
    truth = [str(i // 40) for i in range(len(x))]
    exact = cluster_labels(x, 0.5)
    staged = cluster_labels(x, 0.5, exact_limit=50)  # sample, assign, merge
    for labels in (exact, staged):
        assert adjusted_rand_index(labels, truth) == pytest.approx(1.0)
        assert purity(labels, truth) == 1.0
    # a threshold no pair reaches keeps everything apart
    assert len(set(cluster_labels(x[:10], 0.999).tolist())) == 10


def test_merging_clusters_is_average_linkage_through_their_means() -> None:
    v = np.asarray([[1, 0], [0.96, 0.28], [0, 1], [0.28, 0.96]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    singletons = np.arange(4, dtype=np.intp)
    merged = merge_clusters(v, singletons, 0.9)
    assert merged[0] == merged[1] and merged[2] == merged[3] and merged[0] != merged[2]
    # mean cosine between {0,1} and {2,3} is 0.275: a threshold below it joins everything
    assert len(set(merge_clusters(v, singletons, 0.27).tolist())) == 1
    assert len(set(merge_clusters(v, singletons, 0.28).tolist())) == 2


def test_ari_and_purity_known_values() -> None:
    assert adjusted_rand_index([0, 0, 1, 1], ["a", "a", "b", "b"]) == pytest.approx(1.0)
    assert adjusted_rand_index([0, 1, 0, 1], ["a", "a", "b", "b"]) == pytest.approx(-0.5)
    assert purity([0, 0, 0, 1], ["a", "a", "b", "b"]) == pytest.approx(0.75)


def test_clusters_ranked_by_recent_volume_with_truncated_masked_examples() -> None:
    x = _blobs(2, 6)
    old = NOW - timedelta(days=60)
    qs = [
        GapQuestion(
            key=f"m{i}",
            conversation_id=f"c{i}",
            question=("why " + "long " * 80) if i == 0 else f"question {i}",
            at=old if i < 6 else NOW - timedelta(hours=i),
            signals=("none",),
            audience="enterprise" if i != 7 else "pro",
            case_ref="CASE-1" if i == 8 else None,
            case_status="resolved" if i == 8 else None,
            resolution="do this" if i == 8 else None,
        )
        for i in range(12)
    ]
    clusters = build_clusters(qs, x, now=NOW, threshold=0.5, half_life_days=14)
    assert [c.count for c in clusters] == [6, 6]
    recent, stale = clusters
    assert {m.key for m in recent.members} == {f"m{i}" for i in range(6, 12)}
    assert recent.score > stale.score
    assert recent.audience == "pro"  # the lowest rung among the askers
    assert [m.case_ref for m in recent.cases] == ["CASE-1"]
    assert all(len(e) <= 160 for e in stale.examples) and len(stale.examples) == 5
    assert sum(n for _, n in recent.per_week) == 6
    assert recent.id.startswith("gc-") and recent.id != stale.id


def test_extractive_draft_is_a_valid_draft_article_without_repeats() -> None:
    title, md = extractive_draft(
        label="why does the panel reboot at night?",
        questions=["why does the panel reboot at night?", "panel restarts every night"],
        resolutions=[
            "Disable nightly maintenance in Settings. Then reboot once.",
            "Disable the nightly maintenance in Settings.",
        ],
        audience="pro",
        locale="en",
        case_refs=["CASE-1", "CASE-2"],
        suffix="ab12",
        now=NOW,
    )
    assert title == "Why does the panel reboot at night"
    head, body = md.split("---\n", 2)[1:]
    meta = yaml.safe_load(head)
    assert meta["status"] == "draft" and meta["audience"] == "pro"
    assert meta["slug"] == "why-does-the-panel-reboot-at-night-ab12"
    assert meta["sources"] == ["CASE-1", "CASE-2"]
    assert body.count("nightly maintenance") == 1 and "1. Disable" in body
    assert "2. Then reboot once." in body


def test_distinct_sentences_keeps_order() -> None:
    assert distinct_sentences(["A b c. D e f.", "a B c."]) == ["A b c.", "D e f."]


def test_bench_section_reports_cost_and_structure() -> None:
    from scripts.benchmarks import gap_clusters

    result = gap_clusters.run((300,))
    row = result["sizes"]["300"]
    assert row["clusters"] >= 1 and row["topics"] >= 2 and row["wall_s"] >= 0
    assert -1.0 <= row["ari_vs_topics"] <= 1.0
    assert any("Clustering gap questions" in line for line in gap_clusters.render(result))


def test_votes_move_quality_asymmetrically_within_bounds() -> None:
    from app.knowledge.resolution import voted_quality

    assert voted_quality(0.85, 0, 0, TUNING) == 0.85
    assert voted_quality(0.85, 0, 2, TUNING) < TUNING.ticket_min_quality  # two downs drop it
    assert voted_quality(0.85, 1, 0, TUNING) > 0.85
    assert voted_quality(0.95, 10, 0, TUNING) == 1.0 and voted_quality(0.1, 0, 5, TUNING) == 0.0


def test_zero_and_non_finite_vectors_cluster_alone() -> None:
    v = np.asarray([[1, 0], [0.99, 0.1], [0, 0], [np.nan, 1]], dtype=np.float32)
    labels = cluster_labels(v, 0.5)
    assert labels[0] == labels[1]
    assert len(set(labels.tolist())) == 3
