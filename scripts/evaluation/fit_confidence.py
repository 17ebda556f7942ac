"""Fit the answerability model (app/turn/confidence.py) on labelled cases' features.

    python -m scripts.evaluation.fit_confidence FEATURES.jsonl [--max-unanswerable-strong 0.07]
        [--passage-floor 0.55] [--version NAME] [--use top,sentence] [--fit-on tune]

FEATURES.jsonl comes from `python -m scripts.evaluation.sweep ... --split tune --features F`:
one line per case with `features` (the retrieval's confidence features) and `answerable`; or
pass the sweep's --out file with `--sweep-row N` to fit on the features of its N-th configuration.

The model is an L2-regularised logistic regression (Newton's method, no dependencies beyond
numpy) of `answerable` on the features of `confidence.FEATURES`. The thresholds are chosen on
the same part:
- strong: the lowest probability at which at most `--max-unanswerable-strong` of the
  unanswerable cases would be strong (with the passage floor applied too) — kept below the
  0.10 target so the report part has room;
- weak: the probability that best separates the two labels (Youden's J: answerable kept minus
  unanswerable kept), below strong.
It prints the rates on the fitted part; `--write` stores the bands and the model in
app/fitted/confidence.json, which tuning.py loads (`make fit` runs this with the recorded options).
`--weak-at sentence=0.639` sets weak to the probability of a case whose only feature has that
value, instead of Youden's J: a weak cut kept fixed in feature terms across refits.

With a sweep `--dump` file (one line per case with `split` and `domain`) it also reports on data
the model did not see: `--fit-on tune` fits on the tune part and prints the report part's rates
at the thresholds chosen on tune; and, always, leave-one-domain-out (fit on every other domain,
report on the held-out one) — the hidden re-measurement uses other collections, so a feature
whose weight or threshold only works in one domain shows up there.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.turn.confidence import FEATURES
from tuning import FITTED_DIR

CONFIDENCE_FILE = FITTED_DIR / "confidence.json"

Array = npt.NDArray[np.float64]


def fit_logistic(x: Array, y: Array, l2: float = 1.0, steps: int = 50) -> tuple[float, Array]:
    """(intercept, weights) maximising the L2-penalised log-likelihood (intercept unpenalised)."""
    xb = np.hstack([np.ones((x.shape[0], 1)), x])
    beta = np.zeros(xb.shape[1])
    penalty = np.full(xb.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ beta, -60, 60)))
        grad = xb.T @ (y - p) - penalty * beta
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta += step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return float(beta[0]), beta[1:]


def rates(
    prob: Array, top: Array, y: Array, strong: float, weak: float, floor: float
) -> dict[str, float]:
    is_strong = (prob >= strong) & (top >= floor)
    is_none = prob < weak
    ans, unans = y == 1, y == 0
    return {
        "strong_rate_answerable": float(is_strong[ans].mean()) if ans.any() else float("nan"),
        "strong_rate_unanswerable": float(is_strong[unans].mean()) if unans.any() else float("nan"),
        "none_rate_unanswerable": float(is_none[unans].mean()) if unans.any() else float("nan"),
        "none_rate_answerable": float(is_none[ans].mean()) if ans.any() else float("nan"),
    }


def choose_thresholds(
    prob: Array, top: Array, y: Array, max_unanswerable_strong: float, floor: float
) -> tuple[float, float]:
    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    strong = 0.95
    for t in grid:
        if (
            rates(prob, top, y, t, 0.0, floor)["strong_rate_unanswerable"]
            <= max_unanswerable_strong
        ):
            strong = float(t)
            break
    best, weak = -1.0, min(0.3, strong)
    for t in grid[grid < strong]:
        kept_ans = float((prob[y == 1] >= t).mean())
        kept_unans = float((prob[y == 0] >= t).mean())
        if kept_ans - kept_unans > best:
            best, weak = kept_ans - kept_unans, float(t)
    return strong, weak


def rank_auc(prob: Array, y: Array) -> float:
    """How often an answerable case outscores an unanswerable one (ties count half)."""
    pos, neg = prob[y == 1], prob[y == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / max(len(pos) * len(neg), 1))


def held_out(rows: list[dict[str, Any]], names: tuple[str, ...], args: argparse.Namespace) -> None:
    """Fit on one part, choose thresholds there, print the rates on the other part: tune →
    report, and each domain held out in turn (rows need `split` / `domain`)."""
    x = np.array([[float(r["features"].get(f, 0.0)) for f in names] for r in rows])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    top = np.array([float(r["features"]["top"]) for r in rows])
    protocols: list[tuple[str, Array, Array]] = []
    splits = np.array([r.get("split") for r in rows])
    if {"tune", "report"} <= set(splits):
        protocols.append(("fit tune, report on report", splits == "tune", splits == "report"))
    domains = np.array([r.get("domain") or "" for r in rows])
    for d in sorted(set(domains) - {""}):
        protocols.append((f"fit on other domains, report on {d}", domains != d, domains == d))
    for name, fit, test in protocols:
        b0, w = fit_logistic(x[fit], y[fit], args.l2)
        prob = 1.0 / (1.0 + np.exp(-(b0 + x @ w)))
        strong, weak = choose_thresholds(
            prob[fit], top[fit], y[fit], args.max_unanswerable_strong, args.passage_floor
        )
        r = rates(prob[test], top[test], y[test], strong, weak, args.passage_floor)
        print(
            f"{name} ({int(test.sum())} cases): AUC {rank_auc(prob[test], y[test]):.3f}, "
            f"strong {strong}: strong/answerable {r['strong_rate_answerable']:.3f}, "
            f"strong/unanswerable {r['strong_rate_unanswerable']:.3f}, "
            f"none/unanswerable {r['none_rate_unanswerable']:.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.evaluation.fit_confidence")
    parser.add_argument("features", type=Path)
    parser.add_argument("--max-unanswerable-strong", type=float, default=0.07)
    parser.add_argument("--passage-floor", type=float, default=0.55)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--version", default="offline-1")
    parser.add_argument("--sweep-row", type=int, default=None, help="row of a sweep --out file")
    parser.add_argument("--use", default=None, help="comma-separated subset of FEATURES")
    parser.add_argument(
        "--fit-on", choices=("tune", "report"), default=None, help="fit on this part only"
    )
    parser.add_argument("--weak-at", default=None, metavar="FEATURE=VALUE")
    parser.add_argument("--reranker", default="offline", help="whose bands --write replaces")
    parser.add_argument("--write", action="store_true", help=f"store in {CONFIDENCE_FILE.name}")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = [
        json.loads(line) for line in args.features.read_text(encoding="utf-8").splitlines()
    ]
    if args.sweep_row is not None:  # a sweep --out file: one configuration's features
        rows = rows[args.sweep_row]["confidence_features"]
    rows = [r for r in rows if r.get("answerable") is not None and r.get("features")]
    names = tuple(args.use.split(",")) if args.use else FEATURES
    unknown = set(names) - set(FEATURES)
    if unknown:
        parser.error(f"--use: {sorted(unknown)} unknown; known {FEATURES}")
    held_out(rows, names, args)
    if args.fit_on:
        rows = [r for r in rows if r.get("split") == args.fit_on]
    x = np.array([[float(r["features"].get(f, 0.0)) for f in names] for r in rows])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    intercept, weights = fit_logistic(x, y, args.l2)
    prob = 1.0 / (1.0 + np.exp(-(intercept + x @ weights)))
    top = np.array([float(r["features"]["top"]) for r in rows])  # for the passage floor
    strong, weak = choose_thresholds(prob, top, y, args.max_unanswerable_strong, args.passage_floor)
    if args.weak_at:
        weak = weak_at(args.weak_at, names, intercept, weights)
    auc = rank_auc(prob, y)
    print(
        f"fitted on {args.fit_on or 'every case'}: {len(rows)} cases "
        f"(answerable {int(y.sum())}, unanswerable {int((1 - y).sum())})"
    )
    domains = np.array([r.get("domain") or "" for r in rows])
    for d in sorted(set(domains) - {""}):  # does one threshold suit every collection?
        m = domains == d
        own, _ = choose_thresholds(
            prob[m], top[m], y[m], args.max_unanswerable_strong, args.passage_floor
        )
        r = rates(prob[m], top[m], y[m], strong, 0.0, args.passage_floor)
        print(
            f"  {d}: its own strong threshold {own}; at the pooled one "
            f"strong/answerable {r['strong_rate_answerable']:.3f}, "
            f"strong/unanswerable {r['strong_rate_unanswerable']:.3f}"
        )
    print(f"AUC {auc:.3f}; thresholds strong {strong} weak {weak} floor {args.passage_floor}")
    print(json.dumps(rates(prob, top, y, strong, weak, args.passage_floor), indent=1))
    bands = {
        "strong": strong,
        "weak": weak,
        "passage_floor": args.passage_floor,
        "model": {
            "version": args.version,
            "intercept": round(intercept, 3),
            "weights": {f: round(float(w), 3) for f, w in zip(names, weights, strict=True)},
        },
    }
    print(json.dumps(bands))
    if args.write:
        record = {
            "command": "python -m scripts.fit --only confidence",
            "options": {
                "use": args.use,
                "fit_on": args.fit_on,
                "max_unanswerable_strong": args.max_unanswerable_strong,
                "weak_at": args.weak_at,
                "l2": args.l2,
            },
            "fitted_on": f"{args.fit_on or 'every'} part: {len(rows)} cases, "
            f"{int(y.sum())} answerable",
            "auc_fitted": round(auc, 3),
        }
        write_bands(args.reranker, {**bands, "fit": record}, CONFIDENCE_FILE)
        print(f"wrote {CONFIDENCE_FILE}")
    return 0


def weak_at(spec: str, names: tuple[str, ...], intercept: float, weights: Array) -> float:
    """The model's probability for a case whose one feature `name` equals `value` (2 decimals)."""
    name, _, value = spec.partition("=")
    if names != (name,):
        raise SystemExit(f"--weak-at {spec}: the model must use only {name!r} (--use {name})")
    return round(1.0 / (1.0 + math.exp(-(intercept + float(weights[0]) * float(value)))), 2)


def write_bands(reranker: str, bands: dict[str, Any], path: Path = CONFIDENCE_FILE) -> None:
    """Replace one reranker's bands in the fitted file, keeping the others."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["bands"][reranker] = bands
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
