"""The eval harness's metrics, against values computed by hand."""

from __future__ import annotations

import pytest

from scripts.evaluation.baseline import first_sentences, windows
from scripts.evaluation.data import EvalCase
from scripts.evaluation.metrics import (
    accuracy,
    cosine,
    dedupe,
    f1_per_label,
    macro_f1,
    mean,
    percentile,
    precision_recall,
    recall_at_k,
    reciprocal_rank,
    token_f1,
)
from scripts.evaluation.report import build_report, calibration_sweep
from scripts.evaluation.runner import Observation


def test_dedupe_keeps_first_occurrence_order() -> None:
    assert dedupe(["a", "b", "a", "c", "b"]) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("ranked", "relevant", "expected"),
    [
        (["a", "b", "c", "d", "e", "f"], ["c"], 1.0),
        (["a", "b", "c", "d", "e", "f"], ["f"], 0.0),  # rank 6 is outside the top 5
        (["a", "b", "c", "d", "e", "f"], ["b", "f"], 0.5),
        (["x", "y"], ["x", "y", "z", "w"], 0.5),
        # two chunks of `a` count once, so `f` moves up to rank 5
        (["a", "a", "b", "c", "d", "f"], ["f"], 1.0),
        ([], ["a"], 0.0),
    ],
)
def test_recall_at_5(ranked: list[str], relevant: list[str], expected: float) -> None:
    assert recall_at_k(ranked, relevant, 5) == pytest.approx(expected)


def test_recall_without_relevant_is_undefined() -> None:
    assert recall_at_k(["a"], [], 5) is None
    assert reciprocal_rank(["a"], [], 10) is None


@pytest.mark.parametrize(
    ("ranked", "relevant", "expected"),
    [
        (["a", "b", "c"], ["a"], 1.0),
        (["a", "b", "c"], ["c"], 1 / 3),
        (["a", "b", "c"], ["b", "c"], 1 / 2),  # the first relevant one counts
        (["a", "a", "a", "b"], ["b"], 1 / 2),  # after de-duplication b is second
        ([str(i) for i in range(12)], ["10"], 0.0),  # rank 11: outside @10
        ([str(i) for i in range(12)], ["9"], 1 / 10),
    ],
)
def test_reciprocal_rank_at_10(ranked: list[str], relevant: list[str], expected: float) -> None:
    assert reciprocal_rank(ranked, relevant, 10) == pytest.approx(expected)


def test_mrr_is_the_mean_of_reciprocal_ranks() -> None:
    rr = [
        reciprocal_rank(["a", "b"], ["a"]),
        reciprocal_rank(["a", "b"], ["b"]),
        reciprocal_rank(["a", "b"], ["z"]),
    ]
    assert mean(rr) == pytest.approx((1 + 0.5 + 0) / 3)
    assert mean([]) is None
    assert mean([None, 2.0]) == 2.0


def test_accuracy_and_macro_f1_by_hand() -> None:
    gold = ["a", "a", "a", "b", "b", "c"]
    pred = ["a", "a", "b", "b", "c", "c"]
    assert accuracy(pred, gold) == pytest.approx(4 / 6)
    # a: tp 2, fp 0, fn 1 -> 4/5; b: tp 1, fp 1, fn 1 -> 2/4; c: tp 1, fp 1, fn 0 -> 2/3
    f1 = f1_per_label(pred, gold)
    assert f1 == pytest.approx({"a": 0.8, "b": 0.5, "c": 2 / 3})
    assert macro_f1(pred, gold) == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)


def test_macro_f1_averages_over_gold_labels_only() -> None:
    # "x" is never a gold label: it is a miss for "a", not a class of its own
    gold = ["a", "a", "b"]
    pred = ["a", "x", "b"]
    assert f1_per_label(pred, gold) == pytest.approx({"a": 2 / 3, "b": 1.0})
    assert macro_f1(pred, gold) == pytest.approx((2 / 3 + 1.0) / 2)
    assert macro_f1([], []) is None
    with pytest.raises(ValueError):
        accuracy(["a"], [])


def test_precision_recall_by_hand() -> None:
    pred = [True, True, True, False, False, True]
    gold = [True, False, True, True, False, True]
    # tp 3, fp 1, fn 1
    assert precision_recall(pred, gold) == pytest.approx((0.75, 0.75))
    assert precision_recall([False, False], [True, False]) == (None, 0.0)
    assert precision_recall([True], [False]) == (0.0, None)


def test_percentile_interpolates_like_numpy() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == pytest.approx(25.0)
    assert percentile(values, 95) == pytest.approx(38.5)  # 30 + 0.85 * 10
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_cosine() -> None:
    assert cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 2.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0


def _rounded(value: float) -> object:
    """Report values are rounded to 4 decimals."""
    return pytest.approx(value, abs=1e-4)


def _obs(
    case_id: str,
    *,
    answerable: bool | None,
    relevant: tuple[str, ...] | None = None,
    band: str = "none",
    score: float | None = None,
    top: str | None = None,
) -> Observation:
    case = EvalCase(id=case_id, message="q", relevant=relevant, answerable=answerable)
    return Observation(
        case=case, intent="how_to", escalated=False, confidence=band, top_score=score, top_doc=top
    )


def test_confidence_metrics_by_hand() -> None:
    observations = [
        _obs("1", answerable=True, relevant=("a",), band="strong", score=0.9, top="a"),
        _obs("2", answerable=True, relevant=("a",), band="strong", score=0.7, top="b"),
        _obs("3", answerable=True, relevant=("a",), band="weak", score=0.5, top="a"),
        _obs("4", answerable=False, band="strong", score=0.8, top="c"),
        _obs("5", answerable=False, band="none", score=0.2, top="c"),
        _obs("6", answerable=False, band="none", score=None),
        _obs("7", answerable=True, band="strong", score=0.9, top="a"),  # no relevant: not judged
    ]
    report = build_report(observations)
    conf = report["confidence"]
    assert conf["strong_precision"] == _rounded(0.5)  # cases 1 and 2; only 1 is right
    assert conf["strong_rate_answerable"] == _rounded(2 / 3)  # 1, 2 of 1-3 (7 has no relevant)
    assert conf["strong_rate_unanswerable"] == _rounded(1 / 3)
    assert conf["none_rate_unanswerable"] == _rounded(2 / 3)
    assert conf["band_counts"] == {"strong": 4, "weak": 1, "none": 2}
    assert report["cases"]["strong_answerable"] == 2
    assert report["cases"]["unanswerable"] == 3

    sweep = {row["threshold"]: row for row in calibration_sweep(observations, [0.6, 0.85])}
    assert sweep[0.6]["strong_precision"] == _rounded(0.5)
    assert sweep[0.6]["strong_rate_unanswerable"] == _rounded(1 / 3)
    assert sweep[0.85]["strong_precision"] == _rounded(1.0)  # only case 1 clears 0.85
    assert sweep[0.85]["strong_rate_unanswerable"] == _rounded(0.0)
    assert sweep[0.85]["none_rate_unanswerable"] == _rounded(1.0)


def test_retrieval_and_classification_aggregation() -> None:
    a = _obs("1", answerable=True, relevant=("d1",))
    a.ranked = {
        form: {
            stage: ["d2", "d1"]
            for stage in ("dense_chunks", "bm25_articles", "dense_tickets", "fused", "fused_rerank")
        }
        for form in ("original", "condensed")
    }
    b = Observation(
        case=EvalCase(id="2", message="m", intent="billing_question", escalate=True),
        intent="cancellation",
        escalated=True,
        confidence="none",
    )
    c = Observation(
        case=EvalCase(id="3", message="m", intent="billing_question", escalate=False),
        intent="billing_question",
        escalated=False,
        confidence="none",
    )
    report = build_report([a, b, c])
    assert report["retrieval"]["condensed"]["fused"] == {"recall@5": 1.0, "mrr@10": 0.5}
    assert report["cases"]["retrieval"] == 1
    assert report["intent"] == {"accuracy": 0.5, "macro_f1": _rounded(2 / 3)}
    assert report["escalation"]["precision"] == 1.0 and report["escalation"]["recall"] == 1.0
    assert report["cases"]["intent"] == 2 and report["cases"]["escalation"] == 2


def test_token_f1_squad_style() -> None:
    # normalised: case, punctuation, articles and citation markers do not count
    assert token_f1("The price is $9 per seat [1].", "price is 9 per seat") == 1.0
    # 2 common tokens of 4 and of 2: precision 0.5, recall 1 → F1 2/3
    assert token_f1("nine dollars each seat", "nine dollars") == pytest.approx(2 / 3)
    assert token_f1("completely different", "nine dollars") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "x") == 0.0


def test_baseline_windows_and_first_sentences() -> None:
    text = "x" * 1000
    parts = windows(text, 512, 128)
    assert [len(p) for p in parts] == [512, 512, 232]
    assert windows("short", 512, 128) == ["short"] and windows("  ", 512, 128) == []
    assert first_sentences("One. Two!  Three? Four.") == "One. Two!"


def test_followups_slice_counts_only_cases_with_history() -> None:
    stages = ("dense_chunks", "bm25_articles", "dense_tickets", "fused", "fused_rerank")

    def ranked(original: list[str], condensed: list[str]) -> dict[str, dict[str, list[str]]]:
        return {
            "original": {s: original for s in stages},
            "condensed": {s: condensed for s in stages},
        }

    first = _obs("1", answerable=True, relevant=("d1",))
    first.ranked = ranked(["d1"], ["d1"])
    followup_case = EvalCase(
        id="2", message="and there?", relevant=("d1",), history=(("user", "how do I x"),)
    )
    found = Observation(case=followup_case, intent="how_to", escalated=False, confidence="none")
    found.ranked = ranked(["d9"], ["d1"])
    missed = Observation(
        case=EvalCase(id="3", message="m", relevant=("d2",), history=(("user", "u"),)),
        intent="how_to",
        escalated=False,
        confidence="none",
    )
    missed.ranked = ranked(["d2"], ["d9"])
    report = build_report([first, found, missed])
    slice_ = report["followups"]
    assert report["cases"]["followups"] == 2
    assert slice_["retrieval"]["original"]["fused_rerank"]["recall@5"] == _rounded(0.5)
    assert slice_["retrieval"]["condensed"]["fused_rerank"]["recall@5"] == _rounded(0.5)
    assert slice_["gain"] == _rounded(0.0)
    found.ranked = ranked(["d9"], ["d1"])
    missed.ranked = ranked(["d9"], ["d2"])
    assert build_report([first, found, missed])["followups"]["gain"] == _rounded(1.0)
    assert build_report([first])["followups"]["gain"] is None


def test_reference_recall_counts_the_references_content_words() -> None:
    from scripts.evaluation.metrics import reference_recall, word_count

    reference = "Open Settings and choose Export."  # content words: open settings choose export
    assert reference_recall("Choose Export [1].", reference) == 0.5
    assert reference_recall("Open settings, then choose export.", reference) == 1.0
    assert reference_recall("Nothing relevant.", reference) == 0.0
    assert word_count("Choose Export [1].") == 2
