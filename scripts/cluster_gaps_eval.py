"""How well the gap report's clustering groups questions that mean the same thing.

    python -m scripts.cluster_gaps_eval --tune T.jsonl --report R.jsonl [--label-tag 0]
                                        [--thresholds 0.35:0.80:0.05] [--limit N]

Each case file is the eval harness's cases JSONL (`message`, `tags`); a case's cluster label is
`tags[label_tag]` (for the Bitext sets in ../shared/eval, the fine-grained intent such as
`cancel_order`). Messages are PII-masked and embedded with the local MiniLM, as the gap report
does with condensed questions. Every threshold is swept on the tune file; the one with the best
adjusted Rand index there is applied, unchanged, to the report file, and both are printed:
ARI, purity (share of questions whose cluster's majority label is theirs), inverse purity (the
same with roles swapped: how unsplit each true label is) and the cluster count.

`--write` stores the chosen threshold and its report-file scores in app/fitted/gaps.json, which
tuning.py loads (`make fit` does this). A script, not a test: the labelled data lives outside the
repository and `make test` never needs it. Nothing from it is stored but aggregate scores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.knowledge.gaps import adjusted_rand_index, cluster_labels, purity  # noqa: E402
from app.safety.pii import mask_text  # noqa: E402
from tuning import FITTED_DIR, TUNING  # noqa: E402

GAPS_FILE = FITTED_DIR / "gaps.json"


def load(path: Path, tag: int, limit: int | None) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    labels: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        tags = case.get("tags") or []
        if len(tags) <= tag or not case.get("message"):
            continue
        texts.append(mask_text(str(case["message"])))
        labels.append(str(tags[tag]))
        if limit and len(texts) >= limit:
            break
    return texts, labels


def scores(labels: Sequence[int], truth: Sequence[str]) -> dict[str, float]:
    by_truth = {t: i for i, t in enumerate(sorted(set(truth)))}
    inverse = purity([by_truth[t] for t in truth], [str(x) for x in labels])
    return {
        "ari": round(adjusted_rand_index(labels, truth), 4),
        "purity": round(purity(labels, truth), 4),
        "inverse_purity": round(inverse, 4),
        "clusters": len(set(labels)),
        "labels": len(set(truth)),
        "questions": len(truth),
    }


def thresholds(spec: str) -> list[float]:
    lo, hi, step = (float(x) for x in spec.split(":"))
    out, t = [], lo
    while t <= hi + 1e-9:
        out.append(round(t, 4))
        t += step
    return out


async def embed(texts: list[str]) -> list[list[float]]:
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    return await MiniLMEmbedder().embed_documents(texts)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.cluster_gaps_eval")
    p.add_argument("--tune", type=Path, required=True)
    p.add_argument("--report", type=Path, required=True)
    p.add_argument("--label-tag", type=int, default=0)
    p.add_argument("--thresholds", default="0.35:0.80:0.05")
    p.add_argument("--limit", type=int)
    p.add_argument("--write", action="store_true", help=f"store in {GAPS_FILE.name}")
    args = p.parse_args(argv)

    tune_texts, tune_truth = load(args.tune, args.label_tag, args.limit)
    report_texts, report_truth = load(args.report, args.label_tag, args.limit)
    tune_vecs = asyncio.run(embed(tune_texts))
    report_vecs = asyncio.run(embed(report_texts))

    print(f"tune: {args.tune.name} ({len(tune_texts)} questions, {len(set(tune_truth))} labels)")
    print(f"{'threshold':>9}  {'ARI':>6}  {'purity':>6}  {'inv.pur':>7}  {'clusters':>8}")
    best: tuple[float, float] | None = None
    for t in thresholds(args.thresholds):
        s = scores(cluster_labels(tune_vecs, t).tolist(), tune_truth)
        mark = ""
        if best is None or s["ari"] > best[1]:
            best, mark = (t, s["ari"]), "  *"
        print(
            f"{t:>9.2f}  {s['ari']:>6.3f}  {s['purity']:>6.3f}  {s['inverse_purity']:>7.3f}  "
            f"{s['clusters']:>8}{mark}"
        )
    assert best is not None
    chosen = best[0]
    print(f"chosen on tune: threshold {chosen} (tuning.py has {TUNING.gap_cluster_threshold})")
    for name, t in (("chosen", chosen), ("tuning.py", TUNING.gap_cluster_threshold)):
        s = scores(cluster_labels(report_vecs, t).tolist(), report_truth)
        print(f"report ({args.report.name}, threshold {t} = {name}): {json.dumps(s)}")
    if args.write:
        s = scores(cluster_labels(report_vecs, chosen).tolist(), report_truth)
        write(chosen, args, s)
    return 0


def write(chosen: float, args: argparse.Namespace, report: dict[str, object]) -> None:
    """Store the threshold chosen on the tune file, with what it scored on the report file."""
    stored = {
        "gap_cluster_threshold": chosen,
        "fit": {
            "command": "python -m scripts.fit --only gaps",
            "tune": args.tune.name,
            "report": {"file": args.report.name, **report},
        },
    }
    GAPS_FILE.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GAPS_FILE}")


if __name__ == "__main__":
    raise SystemExit(main())
