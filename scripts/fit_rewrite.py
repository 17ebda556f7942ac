"""Fit the offline condenser's `fragment_max_words` on the MT-RAG rewrite sets.

    python -m scripts.fit_rewrite [--cloud F] [--clapnq F] [--write]

How long a bare fragment may be and still be framed as a question (`as_question` in
app/turn/condense.py; 0 = never). Every case is replayed through the offline condenser at each
value and scored by the MiniLM cosine of its standalone question to the human rewrite.

Both collections are split by conversation into the tune and report parts every MT-RAG fit uses
(`scripts.evaluation.data.split_of`). The value with the best mean cosine on the tune part is
chosen (the smaller one on a tie: it frames fewer messages); its gain over 0 is read on the
report part, with a 95% bootstrap interval over the report part's conversations. Each collection
held out in turn (chosen on one, read on the other) is printed as a check, not used to choose.

`--write` stores the value and those figures in app/fitted/rewrite.json, which tuning.py loads
(`make fit` runs this). The data sets are read only to measure; nothing here copies them.
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
from app.turn.router import Router  # noqa: E402
from scripts.evaluation.data import conversation_key, split_of_conversation  # noqa: E402
from scripts.measure_condense import EVAL_DIR, _read, _replay  # noqa: E402
from tuning import FITTED_DIR, TUNING  # noqa: E402

FRAGMENT_WORDS = [0, 1, 2, 3, 4, 5]
REWRITE_FILE = FITTED_DIR / "rewrite.json"
BOOTSTRAP_SAMPLES = 2000


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


def conversation_of(row: dict[str, Any]) -> str:
    """The row's conversation key, as `scripts.evaluation.data` computes it for an `EvalCase`."""
    history = [(turn["role"], turn["content"]) for turn in row.get("history", [])]
    return conversation_key(history, row["message"])


async def replay_all(
    rows: list[dict[str, Any]], embedder: MiniLMEmbedder
) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Per value: each case's cosine to its human rewrite, and whether its question differs from
    the one at 0 (the router is the real one: a fragment it reads as a request is not framed)."""
    router = Router(_Memo(embedder), tenant=load_tenant(ROOT / "seed"))
    gold = np.array(await embedder.embed_documents([row["expect"]["rewrite"] for row in rows]))
    shipped = condense.FRAGMENT_MAX_WORDS
    cosines: dict[int, np.ndarray] = {}
    texts: dict[int, list[str]] = {}
    try:
        for k in FRAGMENT_WORDS:
            condense.FRAGMENT_MAX_WORDS = k  # a script sweeping one knob, not a test
            texts[k] = [await _replay(row, router) for row in rows]
            ours = np.array(await embedder.embed_documents(texts[k]))
            cosines[k] = (ours * gold).sum(1)
    finally:
        condense.FRAGMENT_MAX_WORDS = shipped
    changed = {
        k: np.array([a != b for a, b in zip(texts[k], texts[0], strict=True)]) for k in texts
    }
    return cosines, changed


def best(cosines: dict[int, np.ndarray], mask: np.ndarray) -> int:
    """The value with the highest mean cosine over `mask`; the smallest one among equals."""
    return max(FRAGMENT_WORDS, key=lambda k: (round(float(cosines[k][mask].mean()), 6), -k))


def gain_interval(gains: np.ndarray, conversations: list[str]) -> list[float]:
    """A 95% bootstrap interval of the mean gain, resampling whole conversations (seeded)."""
    groups: dict[str, list[int]] = {}
    for i, conv in enumerate(conversations):
        groups.setdefault(conv, []).append(i)
    members = list(groups.values())
    rng = np.random.default_rng(0)
    means = []
    for _ in range(BOOTSTRAP_SAMPLES):
        picked = rng.integers(0, len(members), len(members))
        idx = [i for p in picked for i in members[p]]
        means.append(float(gains[idx].mean()))
    return [round(float(q), 4) for q in np.quantile(means, [0.025, 0.975])]


def by_collection(cosines: dict[int, np.ndarray], sets: np.ndarray) -> dict[str, Any]:
    """Each collection held out in turn: the value chosen on the other, and its gain over 0."""
    out = {}
    for fit_on in sorted(set(sets.tolist())):
        read_on = sets != fit_on
        k = best(cosines, sets == fit_on)
        gain = float((cosines[k][read_on] - cosines[0][read_on]).mean())
        out[f"{fit_on}->{'+'.join(sorted(set(sets[read_on].tolist())))}"] = {
            "chosen": k,
            "gain": round(gain, 4),
        }
    return out


def fit(
    rows: list[dict[str, Any]],
    sets: list[str],
    cosines: dict[int, np.ndarray],
    changed: dict[int, np.ndarray],
) -> dict[str, Any]:
    """The value chosen on the tune part, with its report-part figures."""
    conversations = [conversation_of(row) for row in rows]
    part = np.array([split_of_conversation(c) for c in conversations])
    tune, report = part == "tune", part == "report"
    chosen = best(cosines, tune)
    gains = cosines[chosen][report] - cosines[0][report]
    report_convs = [c for c, p in zip(conversations, part, strict=True) if p == "report"]
    named = np.array(sets)
    return {
        "fragment_max_words": chosen,
        "fit": {
            "command": "python -m scripts.fit --only rewrite",
            "objective": "mean MiniLM cosine of the standalone question to the human rewrite",
            "fitted_on": "tune part: " + _describe(named[tune]),
            "tune_means": {k: round(float(cosines[k][tune].mean()), 4) for k in FRAGMENT_WORDS},
            "report": {
                "cases": _describe(named[report]),
                "means": {k: round(float(cosines[k][report].mean()), 4) for k in FRAGMENT_WORDS},
                "changed_cases": int(changed[chosen][report].sum()),
                "gain_over_0": round(float(gains.mean()), 4),
                "gain_95ci": gain_interval(gains, report_convs),
            },
            "each_collection_held_out": by_collection(cosines, named),
        },
    }


def _describe(sets: np.ndarray) -> str:
    counts = {name: int((sets == name).sum()) for name in sorted(set(sets.tolist()))}
    return f"{len(sets)} cases (" + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")"


def show(result: dict[str, Any]) -> None:
    """The fit's figures, one line each."""
    f = result["fit"]
    print(f"{f['fitted_on']}: " + _means(f["tune_means"]))
    r = f["report"]
    print(f"report part, {r['cases']}: " + _means(r["means"]))
    k = result["fragment_max_words"]
    print(
        f"chosen on tune: {k} (tuning has {TUNING.fragment_max_words}); report part gain over 0 "
        f"{r['gain_over_0']:+.4f} (95% CI {r['gain_95ci']}), {r['changed_cases']} cases changed"
    )
    for split, s in f["each_collection_held_out"].items():
        print(f"check, chosen on {split}: {s['chosen']} words, held-out gain {s['gain']:+.4f}")


def _means(means: dict[int, float]) -> str:
    return ", ".join(f"{k}: {v:.4f}" for k, v in means.items())


async def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cloud", type=Path, default=EVAL_DIR / "rewrite_cloud_cases.jsonl")
    parser.add_argument("--clapnq", type=Path, default=EVAL_DIR / "rewrite_clapnq_cases.jsonl")
    parser.add_argument("--write", action="store_true", help=f"store in {REWRITE_FILE.name}")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows, sets = [], []
    for name, path in (("cloud", args.cloud), ("clapnq", args.clapnq)):
        loaded = _read(path, None)
        rows += loaded
        sets += [name] * len(loaded)
    cosines, changed = await replay_all(rows, MiniLMEmbedder())
    result = fit(rows, sets, cosines, changed)
    show(result)
    if args.write:
        REWRITE_FILE.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {REWRITE_FILE}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return result


if __name__ == "__main__":
    asyncio.run(main())
