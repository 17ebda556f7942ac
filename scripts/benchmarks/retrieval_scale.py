"""Section 1: retrieval latency at 1k / 10k / 100k synthetic chunks in the embedded default.

For each size: build `LocalSearch` from records (timed), then for every query time each ranker
on its own (`dense_chunks`, `bm25_articles`, `dense_tickets`, with the production limits from
tuning) and the whole `retrieve()` (rankers + fusion + offline rerank + banding) with a
precomputed embedder, so no model runs and only search is measured. A pro customer in English
asks every query. All sizes are built first and then queried round robin (query i at 1k, at
10k, at 100k, then query i+1 …; every stage for each), so a burst of background load on a
shared machine hits every size and stage alike and the growth ratios stay comparable.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Sequence
from itertools import pairwise
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


class SizeBench:
    """One corpus size: its index, its queries, and the samples taken so far."""

    def __init__(self, n_chunks: int, n_queries: int, tuning: Tuning) -> None:
        self.tuning = tuning
        self.n_queries = n_queries
        with Stopwatch() as gen:
            corpus = make_corpus(n_chunks, n_queries + WARMUP_QUERIES)
        progress(f"{n_chunks:,} chunks generated in {gen.seconds:.1f}s; building LocalSearch")
        gc.collect()
        with Stopwatch() as build:
            self.search = LocalSearch(corpus.articles, corpus.chunks, corpus.tickets, tuning=tuning)
        progress(f"built in {build.seconds:.1f}s")
        self.generate_s, self.build_s = gen.seconds, build.seconds
        self.queries = corpus.queries
        self.embedder = PrecomputedEmbedder({q.text: q.vector for q in corpus.queries})
        self.reranker = OfflineReranker(self.embedder)
        self.filt = filter_for_customer("pro", "en", tuning)
        self.samples: dict[str, list[float]] = {stage: [] for stage in STAGES}
        self.hits: dict[str, list[int]] = {stage: [] for stage in STAGES}
        self.bands: dict[str, int] = {}
        self.inside: dict[str, list[float]] = {}  # retrieve()'s own per-stage latency_ms

    async def query(self, i: int) -> None:
        """Time every stage for query `i` (the first WARMUP_QUERIES are not recorded)."""
        q, t, search = self.queries[i], self.tuning, self.search
        t0 = time.perf_counter()
        dense = await search.dense_chunks(
            q.vector, self.filt, t.vector_limit, t.vector_num_candidates
        )
        t1 = time.perf_counter()
        bm25 = await search.bm25_articles(q.text, self.filt, t.keyword_limit)
        t2 = time.perf_counter()
        tickets = await search.dense_tickets(
            q.vector, self.filt, t.ticket_limit, t.ticket_min_quality
        )
        t3 = time.perf_counter()
        result = await retrieve(
            q.text, q.text, "pro", "en",
            backend=search, embedder=self.embedder, reranker=self.reranker, tuning=t,
        )  # fmt: skip
        t4 = time.perf_counter()
        if i < WARMUP_QUERIES:
            return
        for stage, seconds in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            self.samples[stage].append(seconds)
        self.hits["dense_chunks"].append(len(dense))
        self.hits["bm25_articles"].append(len(bm25))
        self.hits["dense_tickets"].append(len(tickets))
        self.hits["retrieve"].append(len(result.passages))
        self.bands[result.confidence] = self.bands.get(result.confidence, 0) + 1
        for stage, ms in result.latency_ms.items():
            self.inside.setdefault(stage, []).append(ms / 1000.0)

    def report(self) -> dict[str, Any]:
        counts = self.search.counts
        return {
            "chunks": counts["chunks"],
            "articles": counts["articles"],
            "tickets": counts["tickets"],
            "queries": self.n_queries,
            "generate_s": round(self.generate_s, 3),
            "build_s": round(self.build_s, 3),
            "latency": {stage: summary_ms(self.samples[stage]) for stage in STAGES},
            "retrieve_stages_p50_ms": {
                stage: summary_ms(v)["p50_ms"] for stage, v in self.inside.items()
            },
            "mean_hits": {
                stage: round(sum(v) / len(v), 2) if v else 0.0 for stage, v in self.hits.items()
            },
            "retrieve_confidence": self.bands,
            "embedder_misses": self.embedder.misses,  # queries embedded again (must be 0)
            "sentences_embedded": self.embedder.document_misses,  # the answerability check's
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


async def run(
    sizes: Sequence[int], queries: Sequence[int], tuning: Tuning = TUNING
) -> dict[str, Any]:
    benches = {_label(n): SizeBench(n, q, tuning) for n, q in zip(sizes, queries, strict=True)}
    gc.collect()
    rounds = max(queries) + WARMUP_QUERIES
    progress(f"querying all sizes in turn, up to {max(queries)} queries each")
    for i in range(rounds):  # round robin: a burst of background load hits every size alike
        for bench in benches.values():
            if i < bench.n_queries + WARMUP_QUERIES:
                await bench.query(i)
    results = {label: bench.report() for label, bench in benches.items()}
    labels = list(results)
    growths = {f"{b}/{a}": growth(results[a], results[b]) for a, b in pairwise(labels)}
    return {
        "method": (
            "LocalSearch built from synthetic records (Zipf vocabulary texts, random unit "
            "384-d vectors, 8 chunks/article, 1 ticket per 8 chunks); pro/en filter; tuning "
            "limits; retrieve() with a precomputed embedder and the offline reranker; one "
            "process; all indexes built first, then queried round robin (size by size, stage "
            "by stage) so background load hits every size and stage alike"
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
            "dense_chunks",
            "bm25_articles",
            "dense_tickets",
            "retrieve()",
        ],
        rows,
        digits=2,
    )
    lines.append("  latency columns: p50 / p95 in ms, one pro/en query at a time")
    for label, r in result["sizes"].items():
        st = r["retrieve_stages_p50_ms"]
        lines.append(
            f"  inside retrieve() at {label}, p50 ms: "
            + ", ".join(
                f"{k} {st[k]:.1f}"
                for k in (
                    "embed",
                    "dense_chunks",
                    "bm25_articles",
                    "dense_tickets",
                    "fuse",
                    "rerank",
                )
                if k in st
            )
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
