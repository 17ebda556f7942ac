"""Section 1: retrieval latency at 1k / 10k / 100k synthetic chunks in the embedded default.

For each size: build `LocalSearch` from records (timed), then for every query time each ranker
on its own (`dense_chunks`, `bm25_articles`, `dense_tickets`, with the production limits from
tuning) and the whole `retrieve()` (rankers + fusion + offline rerank + banding) with a
precomputed embedder, so no model runs and only search is measured. A pro customer in English
asks every query. Queries are interleaved (query 1: every stage, query 2: every stage, …) so a
burst of background load hits all stages alike.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from app.providers.rerank.offline import OfflineReranker
from app.search.local import LocalSearch
from app.turn.entitlement import filter_for_customer
from app.turn.retrieve import retrieve
from scripts.benchmarks.common import (
    Stopwatch,
    fmt_ratio,
    heading,
    progress,
    ratio,
    summary_ms,
    table,
)
from scripts.benchmarks.synthetic import PrecomputedEmbedder, make_corpus
from tuning import TUNING, Tuning

STAGES = ("dense_chunks", "bm25_articles", "dense_tickets", "retrieve")
WARMUP_QUERIES = 3


async def _time(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def measure_size(n_chunks: int, n_queries: int, tuning: Tuning = TUNING) -> dict[str, Any]:
    with Stopwatch() as gen:
        corpus = make_corpus(n_chunks, n_queries + WARMUP_QUERIES)
    progress(f"{n_chunks:,} chunks generated in {gen.seconds:.1f}s; building LocalSearch")
    gc.collect()
    with Stopwatch() as build:
        search = LocalSearch(corpus.articles, corpus.chunks, corpus.tickets, tuning=tuning)
    progress(f"built in {build.seconds:.1f}s; {n_queries} queries")
    embedder = PrecomputedEmbedder({q.text: q.vector for q in corpus.queries})
    reranker = OfflineReranker(embedder)
    filt = filter_for_customer("pro", "en", tuning)
    samples: dict[str, list[float]] = {stage: [] for stage in STAGES}
    hits: dict[str, list[int]] = {stage: [] for stage in STAGES}
    bands: dict[str, int] = {}

    for i, q in enumerate(corpus.queries):
        warm = i < WARMUP_QUERIES
        dense: list[Any] = []
        bm25: list[Any] = []
        tickets: list[Any] = []
        result: Any = None

        async def run_dense(q: Any = q) -> None:
            dense[:] = await search.dense_chunks(
                q.vector, filt, tuning.vector_limit, tuning.vector_num_candidates
            )

        async def run_bm25(q: Any = q) -> None:
            bm25[:] = await search.bm25_articles(q.text, filt, tuning.keyword_limit)

        async def run_tickets(q: Any = q) -> None:
            tickets[:] = await search.dense_tickets(
                q.vector, filt, tuning.ticket_limit, tuning.ticket_min_quality
            )

        async def run_retrieve(q: Any = q) -> None:
            nonlocal result
            result = await retrieve(
                q.text, q.text, "pro", "en",
                backend=search, embedder=embedder, reranker=reranker, tuning=tuning,
            )  # fmt: skip

        timings = {
            "dense_chunks": await _time(run_dense),
            "bm25_articles": await _time(run_bm25),
            "dense_tickets": await _time(run_tickets),
            "retrieve": await _time(run_retrieve),
        }
        if warm:
            continue
        for stage, seconds in timings.items():
            samples[stage].append(seconds)
        hits["dense_chunks"].append(len(dense))
        hits["bm25_articles"].append(len(bm25))
        hits["dense_tickets"].append(len(tickets))
        hits["retrieve"].append(len(result.passages))
        bands[result.confidence] = bands.get(result.confidence, 0) + 1

    counts = search.counts
    return {
        "chunks": counts["chunks"],
        "articles": counts["articles"],
        "tickets": counts["tickets"],
        "queries": n_queries,
        "generate_s": round(gen.seconds, 3),
        "build_s": round(build.seconds, 3),
        "latency": {stage: summary_ms(samples[stage]) for stage in STAGES},
        "mean_hits": {
            stage: round(sum(v) / len(v), 2) if v else 0.0 for stage, v in hits.items()
        },
        "retrieve_confidence": bands,
        "embedder_misses": embedder.misses,
    }


def growth(small: dict[str, Any], large: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "chunks": ratio(large["chunks"], small["chunks"]),
        "build_s": ratio(large["build_s"], small["build_s"]),
    }
    for stage in STAGES:
        a, b = small["latency"][stage], large["latency"][stage]
        out[stage] = {
            "p50": ratio(b["p50_ms"], a["p50_ms"]),
            "p95": ratio(b["p95_ms"], a["p95_ms"]),
        }
    return out


def _label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


async def run(sizes: Sequence[int], queries: Sequence[int]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for n, q in zip(sizes, queries, strict=True):
        results[_label(n)] = await measure_size(n, q)
        gc.collect()
    labels = list(results)
    growths = {
        f"{b}/{a}": growth(results[a], results[b]) for a, b in zip(labels, labels[1:], strict=False)
    }
    return {
        "method": (
            "LocalSearch built from synthetic records (Zipf vocabulary texts, random unit "
            "384-d vectors, 8 chunks/article, 1 ticket per 8 chunks); pro/en filter; tuning "
            "limits; retrieve() with a precomputed embedder and the offline reranker; one "
            "process, stages interleaved per query"
        ),
        "sizes": results,
        "growth": growths,
    }


def render(result: dict[str, Any]) -> list[str]:
    lines = heading(1, "Retrieval latency vs corpus size (embedded LocalSearch, synthetic)")
    rows = []
    for label, r in result["sizes"].items():
        lat = r["latency"]
        rows.append(
            [
                label,
                r["articles"],
                r["tickets"],
                r["queries"],
                r["build_s"],
                *(f"{lat[s]['p50_ms']:.1f} / {lat[s]['p95_ms']:.1f}" for s in STAGES),
            ]
        )
    lines += table(
        [
            "chunks",
            "articles",
            "tickets",
            "queries",
            "build s",
            "dense_chunks ms p50/p95",
            "bm25_articles",
            "dense_tickets",
            "retrieve()",
        ],
        rows,
        digits=2,
    )
    for name, g in result["growth"].items():
        parts = [f"{s} p50 {fmt_ratio(g[s]['p50'])} p95 {fmt_ratio(g[s]['p95'])}" for s in STAGES]
        lines.append(
            f"  growth {name} ({fmt_ratio(g['chunks'])} chunks): build {fmt_ratio(g['build_s'])}; "
            + "; ".join(parts)
        )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    print("\n".join(render(asyncio.run(run([1000, 10000], [50, 50])))))
