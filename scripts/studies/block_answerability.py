"""Does the selected block say whether a question is answerable? (issue 38, item 3)

    python -m scripts.studies.block_answerability DUMP.jsonl

DUMP.jsonl is a sweep dump of the MT-RAG dev set (`python -m scripts.evaluation.sweep … --dump`).
For each case the offline answerer's first choice over the top five reranked passages gives three
features: `block` (its selection score: the question's weighted terms it and its headings hold),
`block_top` (it comes from the reranker's top passage) and `block_type` (it shows the value type
asked for; 0.5 when none is asked). A case whose question names something no top passage
mentions is gated to `none` (`confidence.unmentioned`), as `confidence.decide` does.

Each feature set is fitted on one collection and reported on the other (leave-one-collection-out,
both ways). The strong threshold is chosen on the fitted collection: the lowest probability at
which at most `max unanswerable strong` of its unanswerable cases are strong and its strong
precision (answerable strong cases whose top passage is relevant, as `make eval` counts it) is
at least 0.9.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

import app.providers.chat.select as select
from app.providers.chat.base import Passage
from app.search.answer_types import asked_types, shows_type
from app.turn.confidence import Scored, unmentioned
from scripts.evaluation.fit_confidence import fit_logistic, rank_auc

VALUE_TYPES = ("price", "duration", "quantity", "date")


def block_features(row: dict[str, Any]) -> dict[str, float]:
    top = row["reranked"][:5]
    ps = [
        Passage(x["passage"], x["doc"], "doc", "", x.get("heading") or "", x["text"]) for x in top
    ]
    question = row["condensed"]
    found = select.choices(question, ps) if ps else []
    if not found:
        return {"block": 0.0, "block_top": 0.0, "block_type": 0.0}
    said = select._quoted(found[0])
    types = [t for t in asked_types(question) if t in VALUE_TYPES]
    typed = (1.0 if any(shows_type(t, said) for t in types) else 0.0) if types else 0.5
    first = 1.0 if found[0].candidate.passage == 0 else 0.0
    return {"block": found[0].score, "block_top": first, "block_type": typed}


def held_out(rows: list[dict[str, Any]], names: tuple[str, ...], max_unanswerable: float) -> str:
    x = np.array([[float(r["features"].get(n, 0.0)) for n in names] for r in rows])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    gate = np.array([r["gated"] for r in rows])
    top = np.where(gate, -1.0, np.array([r["features"]["top"] for r in rows]))
    relevant = np.array([r["top_relevant"] for r in rows])
    domains = np.array([r["domain"] for r in rows])
    out = []
    for held in sorted(set(domains)):
        fit, test = domains != held, domains == held
        b0, w = fit_logistic(x[fit], y[fit])
        p = 1 / (1 + np.exp(-(b0 + x @ w)))
        cut = 0.95
        for t in np.round(np.arange(0.05, 0.96, 0.01), 2):
            strong = (p >= t) & (top >= 0.55)
            kept = fit & (y == 1) & strong
            precision = relevant[kept].mean() if kept.any() else 1.0
            if strong[fit & (y == 0)].mean() <= max_unanswerable and precision >= 0.9:
                cut = float(t)
                break
        strong = (p >= cut) & (top >= 0.55)
        ans = test & (y == 1)
        precision = relevant[ans & strong].mean() if (ans & strong).any() else float("nan")
        out.append(
            f"{held}: AUC {rank_auc(p[test], y[test]):.3f}, strong at {cut}: "
            f"strong/answerable {strong[ans].mean():.3f}, precision {precision:.3f}, "
            f"strong/unanswerable {strong[test & (y == 0)].mean():.3f}"
        )
    return " | ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.studies.block_answerability")
    parser.add_argument("dump", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["features"].update(block_features(r))
        texts = [f"{x.get('heading') or ''}\n{x['text']}" for x in r["reranked"][:5]]
        seen = Scored([1.0], texts[0] if texts else "", "", [], [], texts=texts)
        r["gated"] = bool(unmentioned(r["condensed"], seen))
        r["top_relevant"] = bool(r["reranked"]) and r["reranked"][0]["doc"] in r["relevant"]
    for max_unanswerable in (0.04, 0.07, 0.10):
        print(f"at most {max_unanswerable} of the fitted collection's unanswerable cases strong")
        for names in (("sentence",), ("sentence", "block"), ("sentence", "block", "block_top"),
                      ("sentence", "block", "block_top", "block_type")):  # fmt: skip
            print(f"  {','.join(names)}: {held_out(rows, names, max_unanswerable)}")


if __name__ == "__main__":
    main()
