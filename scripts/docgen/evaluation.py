"""docs/evaluation.md's tables and the README's headline, read from the reports in docs/eval/."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scripts.evaluation import report as report_module

STAGES = ("dense_chunks", "bm25_articles", "dense_tickets", "fused", "fused_rerank")


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _get(data: Mapping[str, Any], path: str) -> Any:
    node: Any = data
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def load_reports(eval_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """(name, report) for every docs/eval/*.json, the seed first, then by name."""
    paths = sorted(eval_dir.glob("*.json"), key=lambda p: (p.stem != "seed", p.stem))
    return [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def _provenance(name: str, report: Mapping[str, Any]) -> str:
    run = report.get("run", {})
    command = run.get("command") or "python -m scripts.eval"
    when = run.get("date", "unknown date")
    commit = run.get("commit")
    at = f" at `{commit}`" if commit else ""
    return f"`docs/eval/{name}.json`, measured {when}{at} by `{command}`"


def _fraction(report: Mapping[str, Any], rate: str, cases: str) -> str:
    value, count = _get(report, f"confidence.{rate}"), _get(report, f"cases.{cases}")
    if value is None:
        return "—"
    return f"{value:.3f} (of {count})" if count is not None else f"{value:.3f}"


def headline_table(eval_dir: Path) -> str:
    """One row per committed report: the numbers a reader asks first."""
    rows = []
    for name, r in load_reports(eval_dir):
        rows.append(
            [
                f"`{name}` ({_get(r, 'cases.total')} cases)",
                _get(r, "retrieval.condensed.fused_rerank.recall@5"),
                _get(r, "baseline.naive_dense.recall@5"),
                _get(r, "confidence.strong_precision"),
                _fraction(r, "strong_rate_answerable", "answerable"),
                _fraction(r, "strong_rate_unanswerable", "unanswerable"),
                _get(r, "escalation.recall"),
                _get(r, "entitlement.leaks"),
            ]
        )
    if not rows:
        return "No report committed under `docs/eval/` yet."
    headers = [
        "report",
        "recall@5 (pipeline)",
        "naive dense recall@5",
        "strong precision",
        "strong on answerable",
        "strong on unanswerable",
        "escalation recall",
        "leaks",
    ]
    notes = "\n".join(f"- {_provenance(n, r)}" for n, r in load_reports(eval_dir))
    return _table(headers, rows) + "\n\n" + notes


def _retrieval(r: Mapping[str, Any]) -> str:
    rows = [
        [stage]
        + [
            _get(r, f"retrieval.{form}.{stage}.{m}")
            for form in ("original", "condensed")
            for m in ("recall@5", "mrr@10")
        ]
        for stage in STAGES
    ]
    for base in ("naive_dense", "naive_bm25"):
        rows.append(
            [
                f"baseline {base}",
                _get(r, f"baseline.{base}.recall@5"),
                _get(r, f"baseline.{base}.mrr@10"),
                None,
                None,
            ]
        )
    return _table(["stage", "as written R@5", "MRR@10", "condensed R@5", "MRR@10"], rows)


PIPELINE = (
    ("confidence.strong_precision", "cases.strong_answerable"),
    ("confidence.strong_rate_answerable", "cases.answerable"),
    ("confidence.strong_rate_unanswerable", "cases.unanswerable"),
    ("confidence.none_rate_unanswerable", "cases.unanswerable"),
    ("intent.accuracy", "cases.intent"),
    ("intent.macro_f1", "cases.intent"),
    ("escalation.precision", "cases.escalation"),
    ("escalation.recall", "cases.escalation"),
    ("rewrite.mean_cosine", "cases.rewrite"),
    ("rewrite.baseline_mean_cosine", "cases.rewrite"),
    ("answer.token_f1", "cases.answer"),
    ("baseline.first_sentences.token_f1", "cases.answer"),
    ("entitlement.leaks", "cases.entitlement"),
    ("citations.invalid", "cases.citations"),
)


def _pipeline(r: Mapping[str, Any]) -> str:
    rows = [[f"`{key}`", _get(r, key), _get(r, cases)] for key, cases in PIPELINE]
    bands = _get(r, "confidence.band_counts") or {}
    rows.append(
        [
            "`confidence.band_counts`",
            " / ".join(f"{k} {v}" for k, v in bands.items()),
            _get(r, "cases.band_counts"),
        ]
    )
    return _table(["metric", "value", "cases"], rows)


def eval_tables(eval_dir: Path) -> str:
    """Every committed report as tables, each with the command that produced it."""
    parts: list[str] = []
    for name, r in load_reports(eval_dir):
        parts += [
            f"### `{name}`",
            "",
            _provenance(name, r) + ".",
            "",
            _retrieval(r),
            "",
            _pipeline(r),
            "",
        ]
    return "\n".join(parts) if parts else "No report committed under `docs/eval/` yet."


def metrics_meaning() -> str:
    """What each number means: the report module's own definition of its keys."""
    doc = report_module.__doc__ or ""
    body = doc.split("\n\n", 1)[1] if "\n\n" in doc else doc
    return body.strip()
