"""Per-case ablation for exact error-code / SKU queries on the seed corpus.

`python -m scripts.studies.ablation_codes` prints, for every seed case tagged `error-code`, the
rank of the first relevant document in the dense ranker alone, BM25 alone, fusion, and fusion +
rerank.
"""

from __future__ import annotations

import asyncio

from app.settings import ROOT
from app.turn.retrieve import retrieve
from scripts.evaluation.data import load_cases
from scripts.evaluation.runner import eval_settings, prepare
from tuning import TUNING

STAGES = ("dense_chunks", "bm25_articles", "fused", "fused_rerank")


def first_rank(ids: list[str], relevant: set[str]) -> int | None:
    seen: list[str] = []
    for doc in ids:
        if doc not in seen:
            seen.append(doc)
            if doc in relevant:
                return len(seen)
    return None


async def main() -> None:
    prepared = await prepare(eval_settings(), TUNING, None)
    s = prepared.services
    cases = [
        c
        for c in load_cases([ROOT / "seed" / "eval" / "cases.jsonl"]).cases
        if "error-code" in c.tags and c.relevant
    ]
    print(f"{'case':9} {'dense':>5} {'bm25':>5} {'fused':>5} {'+rerank':>7}  message")
    rescued = 0
    for c in cases:
        r = await retrieve(
            c.message,
            c.message,
            c.plan,
            c.locale,
            backend=s.search,
            embedder=s.embedder,
            reranker=s.reranker,
            tuning=TUNING,
        )
        ranks = [first_rank(r.ranked_doc_ids(st), set(c.relevant)) for st in STAGES]
        cells = ["-" if x is None else str(x) for x in ranks]
        dense, final = ranks[0], ranks[3]
        if (dense is None or dense > 3) and final is not None and final <= 3:
            rescued += 1
        print(f"{c.id:9} {cells[0]:>5} {cells[1]:>5} {cells[2]:>5} {cells[3]:>7}  {c.message[:60]}")
    print(
        f"{len(cases)} cases; found at rank <= 3 by the pipeline where dense alone ranks them "
        f"below 3 or not at all: {rescued}"
    )
    await s.close()


if __name__ == "__main__":
    asyncio.run(main())
