"""Fit the offline condenser's topic-carrying decision (`app/turn/topic_carry.json`).

    python -m scripts.fit_rewrite [--cloud F] [--clapnq F] [--l2 X] [--write]

For every MT-RAG rewrite case, `topic_candidates` lists the phrases the customer's earlier turns
named (with their features) and `with_topic` writes the message carrying each one. A candidate's
label is whether that rewrite is closer to the human rewrite than the message left alone (MiniLM
cosine). A logistic regression (L2, fitted here with numpy) scores candidates; a case carries its
best-scored candidate when the probability reaches the threshold, chosen on the fitted collection
from 0.50 up (the model must think carrying is more likely to help than not).

Printed: fitted on cloud and read on clapnq, fitted on clapnq and read on cloud (each collection
held out in turn), and the final model fitted on both (in-sample numbers, labelled so). With
`--write` the final model is stored with its version, and `enabled` only when each held-out
direction gains over the unchanged message: a decision that helps one collection and hurts the
other is not one to ship.

With `--fragments` it instead sweeps `condense.FRAGMENT_MAX_WORDS` (how long a bare fragment may
be and still be framed as a question; 0 = never): every case is replayed through the offline
condenser at each value, the value is chosen on one collection and read on the other, both ways,
and the value that is best on both together is printed (set it in `condense.py` by hand).

The data sets are read only to measure and fit a dozen numbers; nothing here copies them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.providers.embeddings.local_minilm import MiniLMEmbedder  # noqa: E402
from app.tenant import load_tenant  # noqa: E402
from app.turn import condense  # noqa: E402
from app.turn.condense import (  # noqa: E402
    CARRY_FEATURES,
    CARRY_FILE,
    CarryModel,
    topic_candidates,
    with_topic,
)
from app.turn.router import Router  # noqa: E402
from scripts.measure_condense import EVAL_DIR, _read, _replay  # noqa: E402

VERSION = "carry-1"
THRESHOLDS = [round(0.5 + 0.02 * i, 2) for i in range(23)]  # 0.50 .. 0.94


class Case:
    def __init__(self, base: float, features: np.ndarray, gains: np.ndarray) -> None:
        self.base = base  # cosine of the unchanged message with the human rewrite
        self.features = features  # one row per candidate
        self.gains = gains  # cosine gain of carrying each candidate


async def build(rows: list[dict[str, Any]], embedder: MiniLMEmbedder) -> list[Case]:
    texts: list[str] = []
    layout: list[tuple[int, list[tuple[float, ...]]]] = []
    for row in rows:
        message = row["message"]
        earlier = [h["content"] for h in row.get("history", []) if h["role"] == "user"]
        candidates = topic_candidates(message, earlier)
        layout.append((len(texts), [c.features for c in candidates]))
        texts += [
            row["expect"]["rewrite"],
            message,
            *(with_topic(message, c.phrase) for c in candidates),
        ]
    vectors = np.array(await embedder.embed_documents(texts))
    cases = []
    for start, feats in layout:
        gold = vectors[start]
        sims = vectors[start + 1 : start + 2 + len(feats)] @ gold
        cases.append(
            Case(
                float(sims[0]), np.array(feats).reshape(-1, len(CARRY_FEATURES)), sims[1:] - sims[0]
            )
        )
    return cases


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (the intercept is not penalised)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.diag([l2] * d + [0.0])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + penalty @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:d], float(w[d])


def mean_cosine(cases: list[Case], model: CarryModel) -> tuple[float, int]:
    """Mean cosine with the human rewrites when `model` decides, and how many cases it changed."""
    total, fired = 0.0, 0
    for case in cases:
        gain = 0.0
        if len(case.gains):
            probs = [model.probability(f) for f in case.features]
            best = int(np.argmax(probs))
            if probs[best] >= model.threshold:
                gain, fired = float(case.gains[best]), fired + 1
        total += case.base + gain
    return total / len(cases), fired


def fit(cases: list[Case], l2: float) -> CarryModel:
    x = np.vstack([c.features for c in cases if len(c.gains)])
    y = np.concatenate([(c.gains > 0).astype(float) for c in cases if len(c.gains)])
    mean, scale = x.mean(0), x.std(0)
    scale[scale < 1e-9] = 1.0
    coef, intercept = fit_logistic((x - mean) / scale, y, l2)
    model = CarryModel(VERSION, True, tuple(mean), tuple(scale), tuple(coef), intercept, 1.0)
    best = max(
        THRESHOLDS,
        key=lambda t: mean_cosine(cases, CarryModel(**{**model.__dict__, "threshold": t}))[0],
    )
    return CarryModel(**{**model.__dict__, "threshold": best})


def _row(name: str, cases: list[Case], model: CarryModel) -> dict[str, Any]:
    unchanged = sum(c.base for c in cases) / len(cases)
    cosine, fired = mean_cosine(cases, model)
    print(
        f"  {name:<28} unchanged {unchanged:.4f} → {cosine:.4f} ({cosine - unchanged:+.4f}), "
        f"carried on {fired}/{len(cases)}"
    )
    return {
        "unchanged": round(unchanged, 4),
        "carried": round(cosine, 4),
        "fired": fired,
        "cases": len(cases),
    }


FRAGMENT_WORDS = [0, 1, 2, 3, 4, 5]


class _Memo:
    """MiniLM with a per-run memo of query vectors: the router sees the same turns at each value."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner, self.name, self.dimensions = inner, inner.name, inner.dimensions
        self._seen: dict[str, list[float]] = {}

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        if text not in self._seen:
            self._seen[text] = await self.inner.embed_query(text)
        return self._seen[text]


async def sweep_fragments(
    sets: dict[str, list[dict[str, Any]]], embedder: MiniLMEmbedder
) -> dict[str, Any]:
    """Mean cosine per collection at each `FRAGMENT_MAX_WORDS`, chosen on one, read on the other
    (the router is the real one: a fragment it reads as a request is not framed)."""
    router = Router(_Memo(embedder), tenant=load_tenant(ROOT / "seed"))
    shipped = condense.FRAGMENT_MAX_WORDS
    means: dict[int, dict[str, float]] = {}
    try:
        for k in FRAGMENT_WORDS:
            condense.FRAGMENT_MAX_WORDS = k  # a script sweeping one constant, not a test
            means[k] = {}
            for name, rows in sets.items():
                ours = [await _replay(row, router) for row in rows]
                gold = [row["expect"]["rewrite"] for row in rows]
                vectors = np.array(await embedder.embed_documents(ours + gold))
                n = len(rows)
                means[k][name] = float((vectors[:n] * vectors[n:]).sum(1).mean())
            print(
                f"  FRAGMENT_MAX_WORDS {k}: "
                + ", ".join(f"{s} {v:.4f}" for s, v in means[k].items())
            )
    finally:
        condense.FRAGMENT_MAX_WORDS = shipped
    report: dict[str, Any] = {"means": means, "held_out": {}}
    names = list(sets)
    for fit_on in names:
        read_on = next(n for n in names if n != fit_on)
        best = max(FRAGMENT_WORDS, key=lambda k: means[k][fit_on])
        gain = means[best][read_on] - means[0][read_on]
        report["held_out"][f"{fit_on}->{read_on}"] = {"chosen": best, "gain": round(gain, 4)}
        print(
            f"fit on {fit_on}: {best} words; {read_on} (held out) {means[0][read_on]:.4f} → "
            f"{means[best][read_on]:.4f} ({gain:+.4f})"
        )
    sizes = {name: len(rows) for name, rows in sets.items()}
    both = max(
        FRAGMENT_WORDS,
        key=lambda k: sum(means[k][n] * sizes[n] for n in names) / sum(sizes.values()),
    )
    report["both"] = both
    print(f"best on both together: {both} words (shipped: {shipped})")
    return report


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cloud", type=Path, default=EVAL_DIR / "rewrite_cloud_cases.jsonl")
    parser.add_argument("--clapnq", type=Path, default=EVAL_DIR / "rewrite_clapnq_cases.jsonl")
    parser.add_argument("--l2", type=float, default=10.0, help="L2 penalty (standardised features)")
    parser.add_argument(
        "--write", action="store_true", help=f"store the final model in {CARRY_FILE.name}"
    )
    parser.add_argument(
        "--fragments", action="store_true", help="sweep condense.FRAGMENT_MAX_WORDS instead"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    embedder = MiniLMEmbedder()
    if args.fragments:
        rows = {"cloud": _read(args.cloud, None), "clapnq": _read(args.clapnq, None)}
        report = await sweep_fragments(rows, embedder)
        print(f"({time.perf_counter() - started:.0f} s)")
        return report
    sets = {
        "cloud": await build(_read(args.cloud, None), embedder),
        "clapnq": await build(_read(args.clapnq, None), embedder),
    }
    report: dict[str, Any] = {"l2": args.l2, "held_out": {}}
    for fit_on, read_on in (("cloud", "clapnq"), ("clapnq", "cloud")):
        model = fit(sets[fit_on], args.l2)
        print(f"fit on {fit_on} (threshold {model.threshold:.2f}), read on {read_on}:")
        report["held_out"][f"{fit_on}->{read_on}"] = {
            "threshold": model.threshold,
            "fitted": _row(f"{fit_on} (fitted, in-sample)", sets[fit_on], model),
            "held_out": _row(f"{read_on} (held out)", sets[read_on], model),
        }
    final = fit(sets["cloud"] + sets["clapnq"], args.l2)
    print(f"final model, fitted on both (threshold {final.threshold:.2f}; in-sample):")
    report["final"] = {
        name: _row(f"{name} (in-sample)", cases, final) for name, cases in sets.items()
    }
    gains = [
        r["held_out"]["carried"] - r["held_out"]["unchanged"] for r in report["held_out"].values()
    ]
    enabled = all(g > 0 for g in gains)
    print(
        f"\nheld-out gains {', '.join(f'{g:+.4f}' for g in gains)}: "
        f"{'enabled' if enabled else 'NOT enabled (a held-out collection loses)'}"
    )
    print(
        "coefficients (standardised): "
        + ", ".join(f"{name} {c:+.3f}" for name, c in zip(CARRY_FEATURES, final.coef, strict=True))
        + f", intercept {final.intercept:+.3f}"
    )
    if args.write:
        stored = {
            "version": VERSION,
            "enabled": enabled,
            "features": list(CARRY_FEATURES),
            "mean": [round(v, 6) for v in final.mean],
            "scale": [round(v, 6) for v in final.scale],
            "coef": [round(v, 6) for v in final.coef],
            "intercept": round(final.intercept, 6),
            "threshold": final.threshold,
            "fit": {
                "command": "python -m scripts.fit_rewrite --write"
                + (f" --l2 {args.l2}" if args.l2 != 10.0 else ""),
                "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
                "embedder": embedder.name,
                **report,
            },
        }
        CARRY_FILE.write_text(
            json.dumps(stored, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"wrote {CARRY_FILE}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return report


if __name__ == "__main__":
    asyncio.run(main())
