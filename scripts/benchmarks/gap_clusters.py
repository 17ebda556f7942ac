"""Section 6: the cost of clustering gap questions (the /admin gap report) at 1k and 10k.

Synthetic 384-d unit vectors with topic structure (as many MiniLM question vectors have: one
centre per topic, questions scattered around it, some near-duplicates), clustered by
`app.knowledge.gaps.cluster_labels` at the tuned threshold. Up to `exact_limit` questions that
is scipy's exact average linkage; above it, micro-clusters first, then linkage over their
centroids. Reported: wall time, the peak memory numpy allocated (tracemalloc), clusters found
and the adjusted Rand index against the generating topics (a sanity check, not a quality
figure: quality on real questions is `python -m scripts.cluster_gaps_eval`).

With `run_with_embedding`, MiniLM embeds that many synthetic questions and the time is scaled to 10k
(labelled as extrapolated): embedding, not clustering, is the larger cost of a report.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.knowledge.gaps import adjusted_rand_index, cluster_labels
from scripts.benchmarks.common import heading, table
from tuning import TUNING

DIM = 384


def synthetic(n: int, seed: int = 7) -> tuple[np.ndarray, list[str]]:
    """n unit vectors in ~n/40 topics of uneven size (a few big topics, a long tail)."""
    rng = np.random.default_rng(seed)
    topics = max(n // 40, 2)
    weights = 1.0 / np.arange(1, topics + 1)  # Zipf-like: gap topics are uneven
    topic = rng.choice(topics, size=n, p=weights / weights.sum())
    centres = rng.normal(size=(topics, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.normal(scale=0.045, size=(n, DIM))  # cosine to the centre ≈ 0.6
    x = centres[topic] + noise
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), [str(t) for t in topic]


async def run_with_embedding(
    sizes: Sequence[int] = (1_000, 10_000), embed_sample: int = 500
) -> dict[str, Any]:
    """`run`, plus MiniLM on `embed_sample` questions (inside the bench's event loop)."""
    out = run(sizes)
    if embed_sample:
        out["embedding"] = await _embed_cost(embed_sample)
    return out


def run(sizes: Sequence[int] = (1_000, 10_000)) -> dict[str, Any]:
    out: dict[str, Any] = {"threshold": TUNING.gap_cluster_threshold, "sizes": {}}
    for n in sizes:
        x, truth = synthetic(n)
        tracemalloc.start()
        t0 = time.perf_counter()
        labels = cluster_labels(x, TUNING.gap_cluster_threshold)
        wall = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["sizes"][str(n)] = {
            "wall_s": round(wall, 3),
            "peak_mb": round(peak / 2**20, 1),
            "clusters": int(labels.max()) + 1,
            "topics": len(set(truth)),
            "ari_vs_topics": round(adjusted_rand_index(labels.tolist(), truth), 3),
        }
    return out


async def _embed_cost(sample: int) -> dict[str, Any]:
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    texts = [f"question {i} about the gadget number {i % 97} not syncing" for i in range(sample)]
    embedder = MiniLMEmbedder()
    await embedder.embed_documents(texts[:8])  # load the model outside the timing
    t0 = time.perf_counter()
    await embedder.embed_documents(texts)
    wall = time.perf_counter() - t0
    return {
        "sample": sample,
        "wall_s": round(wall, 2),
        "extrapolated_10k_s": round(wall * 10_000 / sample, 1),
    }


def render(result: dict[str, Any]) -> list[str]:
    lines = heading(6, f"Clustering gap questions (threshold {result['threshold']})")
    rows = [
        [n, r["wall_s"], r["peak_mb"], r["clusters"], r["topics"], r["ari_vs_topics"]]
        for n, r in result["sizes"].items()
    ]
    lines += table(
        ["questions", "wall s", "peak MB", "clusters", "topics", "ARI vs topics"], rows, digits=3
    )
    emb = result.get("embedding")
    if emb:
        lines.append(
            f"  MiniLM embedding: {emb['sample']} questions in {emb['wall_s']} s → "
            f"~{emb['extrapolated_10k_s']} s for 10k (extrapolated)"
        )
    return lines
