"""Section 7: loading a docs folder against the bare embedder, in the same run.

The folder (default: the seed articles) is ingested into a fresh in-memory store through the
real pipeline (load, normalise, chunk, section tree, embed, write) with a fresh MiniLM; then
the same chunk texts are encoded by a second fresh MiniLM in one call, the floor any ingest
pays. Both use the same model, threads and cache state (none), so the ratio is the ingest
overhead: the goal is ingest time ≤ 2× bare encoding. The order alternates by `repeats` so a
change of machine load hits both sides.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from scripts.benchmarks.common import heading, ratio, table

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DOCS = ROOT / "seed" / "articles"


async def run(docs: Path | None = None, repeats: int = 1) -> dict[str, Any]:
    """Ingest `docs` and bare-encode its chunk texts; seconds and chunks per second of each."""
    folder = docs or DEFAULT_DOCS
    ingest_s: list[float] = []
    bare_s: list[float] = []
    chunks = 0
    for n in range(max(repeats, 1)):
        steps = (_ingest, _bare) if n % 2 == 0 else (_bare, _ingest)
        for step in steps:
            seconds, count = await step(folder)
            (ingest_s if step is _ingest else bare_s).append(seconds)
            chunks = max(chunks, count)
    ingest, bare = min(ingest_s), min(bare_s)
    return {
        "folder": str(folder),
        "chunks": chunks,
        "ingest_s": round(ingest, 2),
        "bare_encode_s": round(bare, 2),
        "ingest_chunks_per_s": ratio(chunks, ingest),
        "bare_chunks_per_s": ratio(chunks, bare),
        "ingest_over_bare": ratio(ingest, bare),
        "goal_max_ratio": 2.0,
        "runs": {"ingest_s": ingest_s, "bare_encode_s": bare_s},
    }


async def _ingest(folder: Path) -> tuple[float, int]:
    from app.ingest.pipeline import ingest_corpus
    from app.providers.embeddings.local_minilm import MiniLMEmbedder
    from app.settings import Settings
    from app.store import open_store

    embedder = MiniLMEmbedder()
    await embedder.embed_documents(["load the model outside the timing"])
    store = open_store(Settings(embedded_store="memory", mongodb_uri=None))
    t0 = time.perf_counter()
    report = await ingest_corpus(store, embedder, folder, default_audience="all")
    seconds = time.perf_counter() - t0
    await store.close()
    return seconds, report.chunks_written


async def _bare(folder: Path) -> tuple[float, int]:
    from app.ingest.chunker import chunk_article
    from app.ingest.loaders import load_corpus
    from app.providers.embeddings.local_minilm import MiniLMEmbedder
    from tuning import TUNING

    corpus = load_corpus(folder, TUNING.max_document_bytes, default_audience="all")
    texts = [
        d.text
        for a in corpus.articles
        for d in chunk_article(a.title, a.body, TUNING.max_chunk_size, TUNING.chunk_overlap)
    ]
    embedder = MiniLMEmbedder()
    await embedder.embed_documents(["load the model outside the timing"])
    t0 = time.perf_counter()
    await embedder.embed_documents(texts)
    return time.perf_counter() - t0, len(texts)


def render(result: dict[str, Any]) -> list[str]:
    lines = heading(7, f"Loading a docs folder ({result['folder']}, {result['chunks']} chunks)")
    rows = [
        ["ingest (load, chunk, embed, write)", result["ingest_s"], result["ingest_chunks_per_s"]],
        ["bare MiniLM encoding, one call", result["bare_encode_s"], result["bare_chunks_per_s"]],
    ]
    lines += table(["", "seconds", "chunks/s"], rows, digits=2)
    verdict = "within" if result["ingest_over_bare"] <= result["goal_max_ratio"] else "OVER"
    lines.append(
        f"  ingest / bare = {result['ingest_over_bare']}x ({verdict} the "
        f"{result['goal_max_ratio']}x goal)"
    )
    return lines
