"""Section 5: our retrieval pipeline vs a dense-only baseline on the labelled seed cases.

Both run in this process on one fresh embedded store seeded from `seed/` with the real local
MiniLM embedder (`app.seed.seed_store`) and one `LocalSearch` over it, with the same entitlement
filter per case (the case's plan and locale; anonymous → free rung, English):

- **ours**: the offline condenser (rules + semantic router; earlier turns of the case's history
  are condensed first, so `prev_standalone` is what the service would have), then
  `app.turn.retrieve.retrieve` (three rankers, weighted RRF, offline rerank). Its ranking is the
  reranked shortlist followed by the rest of the fused list.
- **baseline**: MiniLM embedding of the customer's message as written, `LocalSearch.dense_chunks`
  alone (no BM25, no tickets, no fusion, no rerank); top 4.
- **baseline on condensed** (diagnostic): the same dense-only search, given our condensed
  question, to separate what condensation buys from what fusion + rerank buy.

Rankings are reduced to distinct source documents in rank order (a document counts once, at its
best rank — generous to the baseline, whose 4 chunks may come from fewer documents).
recall@k = |relevant ∩ first k documents| / |relevant|, averaged over cases; hit@k = share of
cases with at least one relevant document in the first k. Relevant ids include resolved tickets,
which a chunks-only baseline cannot return, so the article-only recall is reported as well.
Latency: a warm-up pass, then `repeats` timed passes with ours and the baseline interleaved per
case; "ours" is condense + retrieve (what a turn spends before generation), the baseline is
embed + search.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from app.providers.embeddings.local_minilm import MiniLMEmbedder
from app.providers.rerank.offline import OfflineReranker
from app.search.local import LocalSearch
from app.seed import seed_store
from app.settings import Settings
from app.store import open_store
from app.store.indexes import ensure_regular_indexes
from app.tenant import load_tenant
from app.turn.condense import condense
from app.turn.entitlement import filter_for_customer
from app.turn.retrieve import retrieve
from app.turn.router import Router
from scripts.benchmarks.common import (
    Stopwatch,
    fmt_ratio,
    heading,
    progress,
    ratio,
    summary_ms,
    table,
)
from tuning import TUNING, Tuning

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "seed" / "eval" / "cases.jsonl"
BASELINE_K = 4
OURS_K = 5


def load_cases(path: Path = CASES, limit: int | None = None) -> list[dict[str, Any]]:
    """Cases that carry `expect.relevant`."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    cases = [c for c in rows if (c.get("expect") or {}).get("relevant")]
    return cases[:limit] if limit else cases


def distinct(doc_ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(doc_ids))


def recall_at(ranked_docs: Sequence[str], relevant: Sequence[str], k: int) -> float:
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted & set(distinct(ranked_docs)[:k])) / len(wanted)


def hit_at(ranked_docs: Sequence[str], relevant: Sequence[str], k: int) -> float:
    return 1.0 if set(relevant) & set(distinct(ranked_docs)[:k]) else 0.0


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


async def _condense(case: dict[str, Any], router: Router) -> tuple[str, float]:
    """The case's message condensed as the service would (earlier user turns condensed first).

    Returns (standalone question, seconds spent on the last condensation only).
    """
    history: list[tuple[str, str]] = []
    prev: str | None = None
    for turn in case.get("history") or []:
        if turn["role"] == "user":
            c = await condense(
                turn["content"], history, chat_model=None, router=router, prev_standalone=prev
            )
            prev = c.standalone_question
        history.append((turn["role"], turn["content"]))
    start = time.perf_counter()
    c = await condense(
        case["message"], history, chat_model=None, router=router, prev_standalone=prev
    )
    return c.standalone_question, time.perf_counter() - start


async def run(
    repeats: int = 3, limit: int | None = None, tuning: Tuning = TUNING
) -> dict[str, Any]:
    cases = load_cases(limit=limit)
    settings = Settings(_env_file=None, mongodb_uri=None, embedded_store="memory", embedder="local")
    store = open_store(settings)
    try:
        embedder = MiniLMEmbedder(batch_size=tuning.embed_batch_size)
        progress(f"seeding a fresh embedded store with MiniLM; {len(cases)} labelled cases")
        with Stopwatch() as seeding:
            await ensure_regular_indexes(store.db)
            await seed_store(store, embedder, settings.seed_dir, tuning=tuning)
            search = await LocalSearch.build(store, tuning)
        reranker = OfflineReranker(embedder)
        router = Router(embedder, tenant=load_tenant(settings.tenant_file or settings.seed_dir))
        await router.warm()
        progress(f"seeded and indexed in {seeding.seconds:.1f}s; {repeats} timed passes")

        per_case: list[dict[str, Any]] = []
        times: dict[str, list[float]] = {
            "ours_total": [], "ours_condense": [], "ours_retrieve": [], "baseline": [],
        }  # fmt: skip
        for rep in range(repeats + 1):  # pass 0 is the warm-up
            for case in cases:
                customer = case.get("customer") or {}
                plan, locale = customer.get("plan"), customer.get("locale")
                filt = filter_for_customer(plan, locale, tuning)
                message = case["message"]

                condensed, t_condense = await _condense(case, router)
                start = time.perf_counter()
                result = await retrieve(
                    message, condensed, plan, locale,
                    backend=search, embedder=embedder, reranker=reranker, tuning=tuning,
                )  # fmt: skip
                t_retrieve = time.perf_counter() - start

                start = time.perf_counter()
                vector = await embedder.embed_query(message)
                hits = await search.dense_chunks(
                    vector, filt, tuning.vector_limit, tuning.vector_num_candidates
                )
                t_baseline = time.perf_counter() - start

                if rep == 0:
                    on_condensed = await search.dense_chunks(
                        await embedder.embed_query(condensed),
                        filt,
                        tuning.vector_limit,
                        tuning.vector_num_candidates,
                    )
                    per_case.append(
                        {
                            "id": case["id"],
                            "relevant": case["expect"]["relevant"],
                            "ours": distinct(result.ranked_doc_ids("fused_rerank"))[:10],
                            "baseline": distinct(h.doc_id for h in hits)[:10],
                            "baseline_condensed": distinct(h.doc_id for h in on_condensed)[:10],
                            "ticket_ranker": distinct(h.doc_id for h in result.dense_tickets)[:10],
                            "condensed": condensed,
                            "confidence": result.confidence,
                        }
                    )
                    continue
                times["ours_condense"].append(t_condense)
                times["ours_retrieve"].append(t_retrieve)
                times["ours_total"].append(t_condense + t_retrieve)
                times["baseline"].append(t_baseline)
    finally:
        await store.close()

    articles = {a.id for a in search._snap.articles}  # read-only, for the split

    def quality(system: str, k: int, articles_only: bool = False) -> dict[str, Any]:
        recalls, hits_ = [], []
        for c in per_case:
            relevant = (
                [d for d in c["relevant"] if d in articles] if articles_only else c["relevant"]
            )
            if not relevant:
                continue
            recalls.append(recall_at(c[system], relevant, k))
            hits_.append(hit_at(c[system], relevant, k))
        return {f"recall@{k}": _mean(recalls), f"hit@{k}": _mean(hits_), "cases": len(recalls)}

    quality_table = {
        "ours@5": quality("ours", OURS_K),
        "ours@4": quality("ours", BASELINE_K),
        "baseline@4": quality("baseline", BASELINE_K),
        "baseline_condensed@4": quality("baseline_condensed", BASELINE_K),
        "ours@5_articles_only": quality("ours", OURS_K, articles_only=True),
        "ours@4_articles_only": quality("ours", BASELINE_K, articles_only=True),
        "baseline@4_articles_only": quality("baseline", BASELINE_K, articles_only=True),
    }
    # where relevant resolved tickets went: found by their own ranker, kept after fusion?
    with_tickets = [c for c in per_case if any(d not in articles for d in c["relevant"])]

    def ticket_recall(system: str, k: int) -> float:
        return _mean(
            [recall_at(c[system], [d for d in c["relevant"] if d not in articles], k)
             for c in with_tickets]
        )  # fmt: skip

    tickets = {
        "cases": len(with_tickets),
        "ours@5": ticket_recall("ours", OURS_K),
        "dense_tickets_ranker@5": ticket_recall("ticket_ranker", OURS_K),
    }
    latency = {name: summary_ms(samples) for name, samples in times.items()}
    return {
        "method": (
            "fresh embedded store seeded with MiniLM; ours = offline condense + retrieve() "
            "(3 rankers, RRF, offline rerank); baseline = MiniLM embed of the message + "
            "LocalSearch.dense_chunks only, top 4; same entitlement filter; rankings reduced to "
            "distinct documents"
        ),
        "cases": len(per_case),
        "repeats": repeats,
        "seed_and_index_s": round(seeding.seconds, 1),
        "quality": quality_table,
        "relevant_tickets": tickets,
        "latency": latency,
        "ratios": {
            "recall@4_ours/baseline": ratio(
                quality_table["ours@4"]["recall@4"], quality_table["baseline@4"]["recall@4"]
            ),
            "recall_ours@5/baseline@4": ratio(
                quality_table["ours@5"]["recall@5"], quality_table["baseline@4"]["recall@4"]
            ),
            "latency_p50_ours/baseline": ratio(
                latency["ours_total"]["p50_ms"], latency["baseline"]["p50_ms"]
            ),
            "latency_p95_ours/baseline": ratio(
                latency["ours_total"]["p95_ms"], latency["baseline"]["p95_ms"]
            ),
        },
        "per_case": per_case,
    }


def render(result: dict[str, Any]) -> list[str]:
    lines = heading(5, "Our pipeline vs dense-only baseline (MiniLM top-4) on the seed eval cases")
    q = result["quality"]
    rows = [
        ["ours (condense+3 rankers+RRF+rerank)", "5", q["ours@5"]["recall@5"], q["ours@5"]["hit@5"],
         q["ours@5_articles_only"]["recall@5"]],
        ["ours, first 4 documents", "4", q["ours@4"]["recall@4"], q["ours@4"]["hit@4"],
         q["ours@4_articles_only"]["recall@4"]],
        ["baseline (dense chunks, message as typed)", "4", q["baseline@4"]["recall@4"],
         q["baseline@4"]["hit@4"], q["baseline@4_articles_only"]["recall@4"]],
        ["baseline on our condensed question", "4", q["baseline_condensed@4"]["recall@4"],
         q["baseline_condensed@4"]["hit@4"], "-"],
    ]  # fmt: skip
    lines += table(["system", "k", "recall@k", "hit@k", "recall@k articles only"], rows, digits=3)
    lines.append(
        f"  {result['cases']} cases with expect.relevant "
        f"({q['ours@5_articles_only']['cases']} with an article among them)"
    )
    t = result["relevant_tickets"]
    lines.append(
        f"  relevant resolved tickets ({t['cases']} cases): recall@5 of ours "
        f"{t['ours@5']:.3f}, of the dense_tickets ranker alone {t['dense_tickets_ranker@5']:.3f} "
        "(the baseline searches chunks only)"
    )
    lat = result["latency"]
    rows = [
        [name, v["n"], v["p50_ms"], v["p95_ms"]]
        for name, v in (
            ("ours: condense + retrieve", lat["ours_total"]),
            ("  of which condense", lat["ours_condense"]),
            ("  of which retrieve()", lat["ours_retrieve"]),
            ("baseline: embed + dense search", lat["baseline"]),
        )
    ]
    lines += table(["latency", "samples", "p50 ms", "p95 ms"], rows, digits=1)
    r = result["ratios"]
    lines.append(
        f"  ratios: recall@4 ours/baseline {fmt_ratio(r['recall@4_ours/baseline'])}; "
        f"recall ours@5 / baseline@4 {fmt_ratio(r['recall_ours@5/baseline@4'])}; latency ours/"
        f"baseline p50 {fmt_ratio(r['latency_p50_ours/baseline'])}, p95 "
        f"{fmt_ratio(r['latency_p95_ours/baseline'])}"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    import asyncio

    print("\n".join(render(asyncio.run(run(repeats=1)))))
