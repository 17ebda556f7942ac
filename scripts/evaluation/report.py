"""Aggregate per-case observations into the JSON report of DESIGN 11, and print it as tables.

Contract keys (other tools parse them; a metric over no cases is null, never 0):

- `retrieval.<form>.<stage>.{recall@5, mrr@10}`, form ∈ {original, condensed}, stage ∈
  {dense_chunks, bm25_articles, dense_tickets, fused, fused_rerank}: mean over cases with a
  non-empty `expect.relevant`; a passage is relevant when its source doc id is in `relevant`,
  and doc ids are de-duplicated in rank order first. `fused_rerank` is the reranked shortlist
  followed by the rest of the fused list.
- `confidence` — from the full pipeline (the band the turn reported; `none` when the turn did not
  retrieve, e.g. a policy escalation):
    - `strong_precision`: among cases with `expect.answerable: true` and a non-empty
      `expect.relevant` whose turn was answered in the strong band, the share whose top passage
      (first of the turn's passages) comes from a relevant document. "When we sound sure, are we
      right?"
    - `strong_rate_answerable`: among cases with `expect.answerable: true` and a non-empty
      `expect.relevant`, the share answered in the strong band (higher is better: a hedged
      right answer still sends the customer to a person).
    - `strong_rate_unanswerable`: among cases with `expect.answerable: false`, the share answered
      in the strong band (a confident answer where none exists; lower is better).
    - `none_rate_unanswerable`: among the same cases, the share in the none band (the honest "I
      don't have enough information"; higher is better).
    - `band_counts`: {strong, weak, none} over every case the pipeline ran.
- `intent.{accuracy, macro_f1}` on cases with `expect.intent`; macro-F1 is the unweighted mean
  of per-label F1 over the gold labels present.
- `escalation.{precision, recall}` of "the turn escalated" against `expect.escalate`.
- `rewrite.mean_cosine`: embedder cosine between the condensed question and `expect.rewrite`.
- `entitlement.leaks`: passages at any stage of either form (and the turn's own passages and
  citations) whose doc id is in `expect.forbidden` or whose audience is above the customer's
  rung; each occurrence counts.
- `citations.invalid`: citations the generator had to drop plus stored ones not pointing at a
  supplied passage.
- `latency_ms.<stage>.{p50, p95}`: retrieval stages from the condensed-form retrieval (the one
  the turn runs; `retrieve` is its end-to-end time), `condense`/`generate`/`total` from the turn.
- `answer.token_f1`: SQuAD-style token F1 (`metrics.token_f1`) of the stored reply against
  `expect.reference`, mean over cases with `expect.answerable: true` and a reference;
  `answer.reference_recall` (share of the reference's content words the reply holds, mean) and
  `answer.words` (median words per reply) on the same cases, beside
  `baseline.top_window.{reference_recall, words}`: the naive dense top window whole as the reply.
- `baseline.naive_dense.{recall@5, mrr@10}`, `baseline.naive_bm25.{recall@5, mrr@10}`: the
  naive rankers of `baseline.py` (plain 512/128-character windows, last message as query) on
  the same cases as `retrieval`, same de-duplication to documents;
  `baseline.first_sentences.token_f1`: the first two sentences of the naive dense top window,
  on the same cases as `answer.token_f1`.
- `followups.retrieval.<form>.<stage>.{recall@5, mrr@10}`: the `retrieval` metrics over the
  cases with a non-empty history only (the turns a rewrite exists for);
  `followups.gain` = condensed − original `fused_rerank` recall@5 on those cases (null when none).
- `cases`: how many cases each metric counted.

Extra keys (not part of the contract): `run` (corpus, files, timings, thresholds),
`calibration` (the confidence metrics re-computed for a grid of thresholds over the same
top scores, so a calibration needs one run), `retrieval_by_tag` (condensed-form retrieval
metrics per case tag), `rewrite.baseline_mean_cosine` (the message as written against the
human rewrite), `escalation.by_reason` (escalated turns by signal, expected or not),
`entitlement.examples` and `citations.total`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from statistics import median
from typing import Any

from app.turn.retrieve import RANKED_STAGES
from scripts.evaluation.metrics import (
    accuracy,
    macro_f1,
    mean,
    percentile,
    precision_recall,
    recall_at_k,
    reciprocal_rank,
    reference_recall,
    share,
    token_f1,
    word_count,
)
from scripts.evaluation.runner import (
    FORMS,
    MAX_LEAK_EXAMPLES,
    PIPELINE_LATENCY_STAGES,
    RETRIEVAL_LATENCY_STAGES,
    Observation,
)

LATENCY_STAGES: tuple[str, ...] = (*RETRIEVAL_LATENCY_STAGES, "retrieve", *PIPELINE_LATENCY_STAGES)
BANDS: tuple[str, ...] = ("strong", "weak", "none")
CALIBRATION_GRID: tuple[float, ...] = tuple(round(0.30 + 0.05 * i, 2) for i in range(14))


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def retrieval_metrics(observations: Sequence[Observation]) -> tuple[dict[str, Any], int]:
    labelled = [o for o in observations if o.case.relevant and o.ranked]
    out: dict[str, Any] = {}
    for form in FORMS:
        out[form] = {}
        for stage in RANKED_STAGES:
            ranked = [(o.ranked[form][stage], o.case.relevant or ()) for o in labelled]
            out[form][stage] = {
                "recall@5": _r(mean(recall_at_k(r, g, 5) for r, g in ranked)),
                "mrr@10": _r(mean(reciprocal_rank(r, g, 10) for r, g in ranked)),
            }
    return out, len(labelled)


def followup_metrics(observations: Sequence[Observation]) -> tuple[dict[str, Any], int]:
    """Retrieval over the cases with history, and the condensed form's recall@5 gain."""
    followups = [o for o in observations if o.case.history]
    retrieval, n = retrieval_metrics(followups)
    if not n:
        return {"retrieval": retrieval, "gain": None}, 0
    final = {form: retrieval[form]["fused_rerank"]["recall@5"] for form in FORMS}
    return {"retrieval": retrieval, "gain": _r(final["condensed"] - final["original"])}, n


def retrieval_by_tag(observations: Sequence[Observation]) -> dict[str, Any]:
    """Condensed-form retrieval metrics per case tag (ablations such as error codes)."""
    labelled = [o for o in observations if o.case.relevant and o.ranked]
    out: dict[str, Any] = {}
    for tag in sorted({t for o in labelled for t in o.case.tags}):
        tagged = [o for o in labelled if tag in o.case.tags]
        out[tag] = {"cases": len(tagged)}
        for stage in RANKED_STAGES:
            ranked = [(o.ranked["condensed"][stage], o.case.relevant or ()) for o in tagged]
            out[tag][stage] = {
                "recall@5": _r(mean(recall_at_k(r, g, 5) for r, g in ranked)),
                "mrr@10": _r(mean(reciprocal_rank(r, g, 10) for r, g in ranked)),
            }
    return out


def baseline_metrics(observations: Sequence[Observation]) -> tuple[dict[str, Any], int]:
    """The naive baselines on the cases `retrieval_metrics` counts, and answer token F1 (ours
    and the first-sentences baseline) on answerable cases with a reference."""
    labelled = [o for o in observations if o.case.relevant and o.ranked and o.naive is not None]
    out: dict[str, Any] = {}
    for name in ("dense", "bm25"):
        ranked = [(getattr(o.naive, name), o.case.relevant or ()) for o in labelled if o.naive]
        out[f"naive_{name}"] = {
            "recall@5": _r(mean(recall_at_k(r, g, 5) for r, g in ranked)),
            "mrr@10": _r(mean(reciprocal_rank(r, g, 10) for r, g in ranked)),
        }
    scored = _with_reference(observations)
    out["first_sentences"] = {
        "token_f1": _r(
            mean(
                token_f1(o.naive.first_sentences, o.case.reference or "") for o in scored if o.naive
            )
        )
    }
    windows = [(o.naive.top_window if o.naive else "", o.case.reference or "") for o in scored]
    out["top_window"] = _recall_and_words(windows)
    return out, len(labelled)


def _recall_and_words(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Mean reference recall and median words of (reply, reference) pairs."""
    return {
        "reference_recall": _r(mean(reference_recall(a, ref) for a, ref in pairs)),
        "words": median(word_count(a) for a, _ in pairs) if pairs else None,
    }


def _with_reference(observations: Sequence[Observation]) -> list[Observation]:
    return [
        o
        for o in observations
        if o.ran and o.case.answerable is True and o.case.reference and o.naive is not None
    ]


def answer_metrics(observations: Sequence[Observation]) -> tuple[dict[str, Any], int]:
    scored = _with_reference(observations)
    f1 = mean(token_f1(o.answer or "", o.case.reference or "") for o in scored)
    pairs = [(o.answer or "", o.case.reference or "") for o in scored]
    return {"token_f1": _r(f1), **_recall_and_words(pairs)}, len(scored)


def _answerable(o: Observation) -> bool:
    return o.ran and o.case.answerable is True and bool(o.case.relevant)


def _unanswerable(o: Observation) -> bool:
    return o.ran and o.case.answerable is False


def _top_relevant(o: Observation) -> bool:
    return o.top_doc is not None and o.top_doc in set(o.case.relevant or ())


def confidence_metrics(
    observations: Sequence[Observation],
) -> tuple[dict[str, Any], dict[str, int]]:
    ran = [o for o in observations if o.ran]
    strong_answerable = [o for o in ran if _answerable(o) and o.confidence == "strong"]
    unanswerable = [o for o in ran if _unanswerable(o)]
    counts = Counter(o.confidence for o in ran)
    metrics = {
        "strong_precision": _r(share(_top_relevant(o) for o in strong_answerable)),
        "strong_rate_answerable": _r(
            share(o.confidence == "strong" for o in ran if _answerable(o))
        ),
        "strong_rate_unanswerable": _r(share(o.confidence == "strong" for o in unanswerable)),
        "none_rate_unanswerable": _r(share(o.confidence == "none" for o in unanswerable)),
        "band_counts": {band: counts.get(band, 0) for band in BANDS},
    }
    cases = {
        "answerable": sum(1 for o in ran if _answerable(o)),
        "strong_answerable": len(strong_answerable),
        "unanswerable": len(unanswerable),
        "band_counts": len(ran),
    }
    return metrics, cases


def calibration_sweep(
    observations: Sequence[Observation], grid: Iterable[float] = CALIBRATION_GRID
) -> list[dict[str, Any]]:
    """For each threshold t: what the strong band would be at `strong = t`, and the none band at
    `weak = t`, from the same top rerank scores (a turn that did not retrieve has no score and
    is `none` at every threshold)."""
    answerable = [o for o in observations if _answerable(o)]
    unanswerable = [o for o in observations if _unanswerable(o)]

    def above(o: Observation, t: float) -> bool:
        return o.top_score is not None and o.top_score >= t

    rows = []
    for t in grid:
        strong = [o for o in answerable if above(o, t)]
        rows.append(
            {
                "threshold": t,
                "strong_precision": _r(share(_top_relevant(o) for o in strong)),
                "strong_answers": len(strong),
                "strong_rate_answerable": _r(share(above(o, t) for o in answerable)),
                "strong_rate_unanswerable": _r(share(above(o, t) for o in unanswerable)),
                "none_rate_unanswerable": _r(share(not above(o, t) for o in unanswerable)),
                "none_rate_answerable": _r(share(not above(o, t) for o in answerable)),
            }
        )
    return rows


def classification_metrics(observations: Sequence[Observation]) -> dict[str, Any]:
    with_intent = [o for o in observations if o.ran and o.case.intent]
    predicted = [o.intent or "" for o in with_intent]
    gold = [o.case.intent or "" for o in with_intent]
    with_escalate = [o for o in observations if o.ran and o.case.escalate is not None]
    precision, recall = precision_recall(
        [bool(o.escalated) for o in with_escalate], [bool(o.case.escalate) for o in with_escalate]
    )
    reasons = Counter(
        f"{o.escalation_reason or 'none'}→{'expected' if o.case.escalate else 'unexpected'}"
        for o in with_escalate
        if o.escalated
    )
    return {
        "intent": {
            "accuracy": _r(accuracy(predicted, gold)),
            "macro_f1": _r(macro_f1(predicted, gold)),
        },
        "escalation": {
            "precision": _r(precision),
            "recall": _r(recall),
            "by_reason": dict(sorted(reasons.items())),
        },
        "_cases": {"intent": len(with_intent), "escalation": len(with_escalate)},
    }


def latency_metrics(observations: Sequence[Observation]) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    for stage in LATENCY_STAGES:
        samples = [o.latency[stage] for o in observations if stage in o.latency]
        out[stage] = {"p50": _r(percentile(samples, 50), 2), "p95": _r(percentile(samples, 95), 2)}
    return out, sum(1 for o in observations if o.latency)


def build_report(
    observations: Sequence[Observation],
    *,
    run: Mapping[str, Any] | None = None,
    skipped_cases: int = 0,
) -> dict[str, Any]:
    retrieval, retrieval_cases = retrieval_metrics(observations)
    confidence, confidence_cases = confidence_metrics(observations)
    classification = classification_metrics(observations)
    latency, latency_cases = latency_metrics(observations)
    baseline, baseline_cases = baseline_metrics(observations)
    answer, answer_cases = answer_metrics(observations)
    followups, followup_cases = followup_metrics(observations)
    ran = [o for o in observations if o.ran]
    rewrites = [o for o in observations if o.rewrite_cosine is not None]
    leaks = [leak for o in observations for leak in o.leaks]
    checked = [o for o in observations if o.ranked]
    return {
        "retrieval": retrieval,
        "followups": followups,
        "confidence": confidence,
        "intent": classification["intent"],
        "escalation": classification["escalation"],
        "rewrite": {
            "mean_cosine": _r(mean(o.rewrite_cosine for o in rewrites)),
            "baseline_mean_cosine": _r(mean(o.rewrite_baseline for o in rewrites)),
        },
        "entitlement": {"leaks": len(leaks), "examples": leaks[:MAX_LEAK_EXAMPLES]},
        "citations": {
            "invalid": sum(o.invalid_citations for o in ran),
            "total": sum(o.citations for o in ran),
        },
        "latency_ms": latency,
        "answer": answer,
        "baseline": baseline,
        "cases": {
            "total": len(observations) + skipped_cases,
            "skipped": skipped_cases,
            "rejected": sum(1 for o in observations if o.rejected),
            "pipeline": len(ran),
            "pipeline_errors": sum(1 for o in ran if o.error),
            "retrieval": retrieval_cases,
            "followups": followup_cases,
            **confidence_cases,
            **classification["_cases"],
            "rewrite": len(rewrites),
            "entitlement": len(checked),
            "forbidden": sum(1 for o in checked if o.case.forbidden),
            "citations": len(ran),
            "latency": latency_cases,
            "baseline": baseline_cases,
            "answer": answer_cases,
        },
        "run": dict(run or {}),
        "calibration": calibration_sweep(observations),
        "retrieval_by_tag": retrieval_by_tag(observations),
    }


# --- the printed tables ------------------------------------------------------------------------


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers], *[[_fmt(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _retrieval_table(ret: Mapping[str, Any]) -> str:
    return _table(
        ["stage", "orig R@5", "orig MRR@10", "cond R@5", "cond MRR@10"],
        [
            [
                stage,
                ret["original"][stage]["recall@5"],
                ret["original"][stage]["mrr@10"],
                ret["condensed"][stage]["recall@5"],
                ret["condensed"][stage]["mrr@10"],
            ]
            for stage in RANKED_STAGES
        ],
    )


def render(report: Mapping[str, Any]) -> str:
    """The report as plain-text tables (what `make eval` prints)."""
    cases = report["cases"]
    run = report.get("run", {})
    out: list[str] = []
    if run:
        out.append(
            f"corpus {run.get('corpus')} ({run.get('counts')}); cases {run.get('cases_files')}; "
            f"reranker {run.get('reranker')} {run.get('thresholds')}; "
            f"embedder {run.get('embedder')}"
        )
        out.append(
            f"ingest {run.get('ingest_seconds')}s (cpu {run.get('ingest_cpu_seconds')}s, "
            f"embedding cache {run.get('embedding_cache')}), "
            f"cases {run.get('cases_seconds')}s (cpu {run.get('cases_cpu_seconds')}s), "
            f"total {run.get('total_seconds')}s"
        )
    out.append(f"\nRetrieval ({cases['retrieval']} cases with expect.relevant)")
    out.append(_retrieval_table(report["retrieval"]))
    followups = report.get("followups")
    if followups and cases.get("followups"):
        out.append(
            f"\nFollow-ups ({cases['followups']} cases with history): "
            f"gain {_fmt(followups['gain'])} (condensed − original fused_rerank R@5)"
        )
        out.append(_retrieval_table(followups["retrieval"]))
    base = report.get("baseline") or {}
    if base:
        out.append(
            _table(
                ["baseline (message as written)", "R@5", "MRR@10"],
                [
                    [f"naive_{n}", base[f"naive_{n}"]["recall@5"], base[f"naive_{n}"]["mrr@10"]]
                    for n in ("dense", "bm25")
                ],
            )
        )
    conf = report["confidence"]
    out.append("\nPipeline")
    out.append(
        _table(
            ["metric", "value", "cases"],
            [
                [
                    "confidence.strong_precision",
                    conf["strong_precision"],
                    cases["strong_answerable"],
                ],
                [
                    "confidence.strong_rate_answerable",
                    conf["strong_rate_answerable"],
                    cases["answerable"],
                ],
                [
                    "confidence.strong_rate_unanswerable",
                    conf["strong_rate_unanswerable"],
                    cases["unanswerable"],
                ],
                [
                    "confidence.none_rate_unanswerable",
                    conf["none_rate_unanswerable"],
                    cases["unanswerable"],
                ],
                [
                    "confidence.band_counts",
                    " / ".join(f"{b} {conf['band_counts'][b]}" for b in BANDS),
                    cases["band_counts"],
                ],
                ["intent.accuracy", report["intent"]["accuracy"], cases["intent"]],
                ["intent.macro_f1", report["intent"]["macro_f1"], cases["intent"]],
                ["escalation.precision", report["escalation"]["precision"], cases["escalation"]],
                ["escalation.recall", report["escalation"]["recall"], cases["escalation"]],
                ["rewrite.mean_cosine", report["rewrite"]["mean_cosine"], cases["rewrite"]],
                [
                    "rewrite.baseline_mean_cosine",
                    report["rewrite"]["baseline_mean_cosine"],
                    cases["rewrite"],
                ],
                ["answer.token_f1", report["answer"]["token_f1"], cases["answer"]],
                ["answer.reference_recall", report["answer"]["reference_recall"], cases["answer"]],
                [
                    "baseline.top_window.reference_recall",
                    base.get("top_window", {}).get("reference_recall"),
                    cases["answer"],
                ],
                ["answer.words", report["answer"]["words"], cases["answer"]],
                [
                    "baseline.top_window.words",
                    base.get("top_window", {}).get("words"),
                    cases["answer"],
                ],
                [
                    "baseline.first_sentences.token_f1",
                    base.get("first_sentences", {}).get("token_f1"),
                    cases["answer"],
                ],
                ["entitlement.leaks", report["entitlement"]["leaks"], cases["entitlement"]],
                ["citations.invalid", report["citations"]["invalid"], cases["citations"]],
            ],
        )
    )
    by_reason = report["escalation"].get("by_reason")
    if by_reason:
        out.append(
            "  escalated turns by signal: " + ", ".join(f"{k} {v}" for k, v in by_reason.items())
        )
    for leak in report["entitlement"]["examples"]:
        out.append(f"  LEAK {leak}")
    out.append("\nLatency (ms)")
    lat = report["latency_ms"]
    out.append(_table(["stage", "p50", "p95"], [[s, lat[s]["p50"], lat[s]["p95"]] for s in lat]))
    out.append(
        f"\ncases: {cases['total']} total, {cases['pipeline']} ran, {cases['skipped']} skipped, "
        f"{cases['rejected']} rejected, {cases['pipeline_errors']} turn errors"
    )
    return "\n".join(out)
