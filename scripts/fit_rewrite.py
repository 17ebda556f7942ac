"""Sweep the offline condenser's `FRAGMENT_MAX_WORDS` on the MT-RAG rewrite sets.

    python -m scripts.fit_rewrite [--cloud F] [--clapnq F]

How long a bare fragment may be and still be framed as a question (0 = never): every case is
replayed through the offline condenser at each value, the value is chosen on one collection and
read on the other, both ways, and the value that is best on both together is printed (set it in
`condense.py` by hand).

The data sets are read only to measure; nothing here copies them.
"""

from __future__ import annotations

import argparse
import asyncio
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
from app.turn.router import Router  # noqa: E402
from scripts.measure_condense import EVAL_DIR, _read, _replay  # noqa: E402

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
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = {"cloud": _read(args.cloud, None), "clapnq": _read(args.clapnq, None)}
    report = await sweep_fragments(rows, MiniLMEmbedder())
    print(f"({time.perf_counter() - started:.0f} s)")
    return report


if __name__ == "__main__":
    asyncio.run(main())
