"""LocalSearch of another checkout against this one, side by side in one process.

    git archive <commit> | tar -x -C /tmp/base        # or: git worktree add /tmp/base <commit>
    python -m scripts.studies.compare_local --baseline /tmp/base [--chunks 10000] [--queries 200]

Only the baseline's `app/search/local.py` is loaded (as a separate module; everything it imports
comes from this checkout), so what is compared is LocalSearch's own code and what it calls here
that it called there too — e.g. a change of analyzer. Both are built on the same synthetic corpus
(`synthetic.make_corpus`, as `make bench` section 1), twice each, alternately; then every query
runs on both, the order alternating query by query, so a burst of background load on a shared
machine hits both alike. Prints build time, `bm25_articles` and whole-`retrieve()` latency
(p50/p95; wall clock and this process's CPU time) for each, their ratio, how many BM25 article
rankings are identical, and the load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.providers.rerank.offline import OfflineReranker
from app.search.local import LocalSearch
from app.turn.entitlement import filter_for_customer
from app.turn.retrieve import retrieve
from scripts.benchmarks.common import fmt_ratio, ratio, summary_ms, table
from scripts.benchmarks.synthetic import PrecomputedEmbedder, make_corpus
from tuning import TUNING

WARMUP = 3
# wall-clock latency, and this process's CPU time (what the other jobs of a shared machine move
# least: a loaded machine stretches wall time for both sides, CPU time much less)
STAGES = ("bm25_articles", "retrieve", "bm25_articles.cpu", "retrieve.cpu")


def load_baseline(checkout: Path) -> Any:
    """The baseline checkout's LocalSearch class."""
    path = checkout / "app" / "search" / "local.py"
    spec = importlib.util.spec_from_file_location("baseline_local", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no LocalSearch at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module.LocalSearch


async def compare(baseline: Any, n_chunks: int, n_queries: int) -> dict[str, Any]:
    corpus = make_corpus(n_chunks, n_queries + WARMUP)
    embedder = PrecomputedEmbedder({q.text: q.vector for q in corpus.queries})
    reranker = OfflineReranker(embedder)
    filt = filter_for_customer("pro", "en", TUNING)
    classes = {"baseline": baseline, "this": LocalSearch}
    builds: dict[str, list[float]] = {name: [] for name in classes}
    searches: dict[str, Any] = {}
    for name in ("baseline", "this", "baseline", "this"):
        gc.collect()
        t0 = time.perf_counter()
        searches[name] = classes[name](corpus.articles, corpus.chunks, corpus.tickets)
        builds[name].append(time.perf_counter() - t0)
    samples: dict[tuple[str, str], list[float]] = {
        (name, stage): [] for name in classes for stage in STAGES
    }
    identical = 0
    for i, q in enumerate(corpus.queries):
        ranked: dict[str, list[str]] = {}
        for name in ("baseline", "this") if i % 2 else ("this", "baseline"):
            search = searches[name]
            c0, t0 = time.process_time(), time.perf_counter()
            hits = await search.bm25_articles(q.text, filt, TUNING.keyword_limit)
            c1, t1 = time.process_time(), time.perf_counter()
            await retrieve(
                q.text, q.text, "pro", "en",
                backend=search, embedder=embedder, reranker=reranker, tuning=TUNING,
            )  # fmt: skip
            c2, t2 = time.process_time(), time.perf_counter()
            ranked[name] = [h.doc_id for h in hits]
            if i >= WARMUP:
                for stage, value in zip(STAGES, (t1 - t0, t2 - t1, c1 - c0, c2 - c1), strict=True):
                    samples[(name, stage)].append(value)
        identical += ranked["baseline"] == ranked["this"]
    return {
        "chunks": n_chunks,
        "articles": len(corpus.articles),
        "queries": n_queries,
        "build_s": {name: [round(s, 2) for s in v] for name, v in builds.items()},
        "latency": {f"{n}.{s}": summary_ms(v) for (n, s), v in samples.items()},
        "identical_bm25_rankings": identical,
    }


def render(result: dict[str, Any], load_before: Sequence[float]) -> list[str]:
    lat = result["latency"]
    rows = []
    for stage in STAGES:
        base, this = lat[f"baseline.{stage}"], lat[f"this.{stage}"]
        rows.append(
            [
                stage,
                base["p50_ms"],
                this["p50_ms"],
                fmt_ratio(ratio(this["p50_ms"], base["p50_ms"])),
                base["p95_ms"],
                this["p95_ms"],
            ]
        )
    return [
        f"{result['chunks']:,} chunks, {result['articles']:,} articles, "
        f"{result['queries']} queries (pro/en); build s: {result['build_s']}",
        *table(
            ["stage", "baseline p50 ms", "this p50 ms", "ratio", "baseline p95", "this p95"],
            rows,
            digits=2,
        ),
        f"identical BM25 article rankings: {result['identical_bm25_rankings']}"
        f"/{result['queries'] + WARMUP}",
        f"load average before {tuple(round(x, 1) for x in load_before)}, "
        f"after {tuple(round(x, 1) for x in os.getloadavg())}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.studies.compare_local")
    p.add_argument("--baseline", type=Path, required=True, help="another checkout's root")
    p.add_argument("--chunks", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=200)
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    result = asyncio.run(compare(load_baseline(args.baseline), args.chunks, args.queries))
    print("\n".join(render(result, load_before)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
