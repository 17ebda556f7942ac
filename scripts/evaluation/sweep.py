"""Retrieval sweeps on one part of a dev set, cheap enough for two shared cores.

    python -m scripts.evaluation.sweep --corpus C.jsonl --cases CASES.jsonl --split tune \
        [--chunks 1200/150,512/128,...] [--out sweep.jsonl] [--features features.jsonl]

What it varies, and how it stays affordable:
- Chunking (`max_chunk_size`/`chunk_overlap` pairs): every article is chunked with the real
  chunker and embedded through the disk cache (EMBEDDING_CACHE_DIR; keyed by text hash, saved
  after each configuration), so a configuration is embedded once across all runs.
- For each chunking, a grid of retrieval knobs (fusion weights, BM25 field boosts, shortlist,
  reserved seats) replayed through the real `retrieve()` over an in-memory `LocalSearch`.
- The condensed question of every case is computed once, replaying the case history through the
  offline condenser as the eval harness does (`runner.CaseRunner._conversation`).

Each row of --out is one configuration with `recall@5`/`mrr@10` per stage (condensed form, as
the turn runs it). --features writes, for the chosen tuning, the confidence features of every
case (see `app.turn.confidence.answerability_features`) with its answerable label, the input of
`scripts.evaluation.fit_confidence`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.ingest.chunker import ChunkDraft, chunk_article
from app.ingest.pipeline import chunks_for, embedding_text, ticket_text
from app.providers.embeddings import build_embedder
from app.providers.rerank import build_reranker
from app.providers.rerank.offline import OfflineReranker, OfflineWeights
from app.search.local import LocalSearch
from app.store.models import Article, Chunk, Ticket
from app.turn.condense import condense
from app.turn.retrieve import RANKED_STAGES, retrieve
from scripts.evaluation.baseline import NaiveBaseline
from scripts.evaluation.data import EvalCase, load_cases, load_corpus, split_of
from scripts.evaluation.metrics import mean, recall_at_k, reciprocal_rank
from scripts.evaluation.runner import eval_settings
from tuning import TUNING, Tuning


async def condensed_questions(cases: Sequence[EvalCase], router: Any, tuning: Tuning) -> list[str]:
    """Each case's condensed question, replaying its history as the harness stores it."""
    out = []
    window = (tuning.verbatim_turns + 1) * 4
    for case in cases:
        stored: list[tuple[str, str]] = []
        previous: str | None = None
        pending: Any = None
        for role, text in case.history:
            if role == "assistant" and pending is not None:
                previous, pending = pending.standalone_question, None
            if role == "user" and text.strip():
                pending = await condense(
                    text, stored[-window:], chat_model=None, router=router, prev_standalone=previous
                )
            stored.append((role, text))
        if pending is not None:
            previous = pending.standalone_question
        cond = await condense(
            case.message, stored[-window:], chat_model=None, router=router, prev_standalone=previous
        )
        out.append(cond.standalone_question)
    return out


def embedded_text(draft: ChunkDraft, mode: str) -> str:
    """What is embedded for a chunk: `heading` (as ingestion does by default: the chunk text as
    it is, starting with its nearest heading line), `path` (ingestion's `embed_heading_path`:
    the heading line a section's chunk starts with replaced by its whole Title › Section path),
    `breadcrumb` (the path, then the text without its heading line, for every chunk) or `none`
    (the text without its heading line)."""
    if mode == "path":
        return embedding_text(draft, 2)
    if mode == "heading":
        return draft.text
    first, sep, rest = draft.text.partition("\n")
    body = rest.lstrip("\n") if sep and first.lstrip().startswith("#") else draft.text
    return f"{draft.breadcrumb}\n\n{body}" if mode == "breadcrumb" else body


async def embed_chunks(
    articles: Sequence[Article],
    embedder: Any,
    size: int,
    overlap: int,
    batch: int = 64,
    mode: str = "heading",
) -> list[Chunk]:
    drafts = {a.id: chunk_article(a.title, a.body, size, overlap) for a in articles}
    texts = [embedded_text(d, mode) for a in articles for d in drafts[a.id]]
    vectors: list[list[float]] = []
    for i in range(0, len(texts), batch):
        vectors += await embedder.embed_documents(texts[i : i + batch])
        if i % (batch * 20) == 0:
            print(f"    embedded {i}/{len(texts)}", file=sys.stderr, flush=True)
    if hasattr(embedder, "save"):
        embedder.save()
    out: list[Chunk] = []
    pos = 0
    for a in articles:
        n = len(drafts[a.id])
        out += chunks_for(a, drafts[a.id], vectors[pos : pos + n])
        pos += n
    return out


async def embed_tickets(tickets: Sequence[Ticket], embedder: Any) -> list[Ticket]:
    if not tickets:
        return []
    vectors = await embedder.embed_documents([ticket_text(t) for t in tickets])
    return [t.model_copy(update={"embedding": v}) for t, v in zip(tickets, vectors, strict=True)]


def score(
    ranked: Sequence[dict[str, list[str]]], cases: Sequence[EvalCase]
) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for stage in RANKED_STAGES:
        pairs = [(r[stage], c.relevant or ()) for r, c in zip(ranked, cases, strict=True)]
        out[stage] = {
            "recall@5": mean(recall_at_k(r, g, 5) for r, g in pairs),
            "mrr@10": mean(reciprocal_rank(r, g, 10) for r, g in pairs),
        }
    return out


def dump_row(case: EvalCase, condensed: str, res: Any) -> dict[str, Any]:
    """One case's retrieval as the answerability features read it: the input of
    `scripts.studies.explore_confidence` (labels, the reranked shortlist's texts and scores,
    each first-stage ranker's documents and scores)."""

    def hits(stage: str, n: int = 10) -> list[dict[str, Any]]:
        return [
            {"doc": h.doc_id, "score": round(float(h.score), 5)} for h in res.ranked_hits(stage)[:n]
        ]

    return {
        "id": case.id,
        "split": split_of(case),
        "domain": case.tags[0] if case.tags else "",
        "label": case.tags[1] if len(case.tags) > 1 else "",
        "answerable": case.answerable,
        "relevant": list(case.relevant or ()),
        "message": case.message,
        "condensed": condensed,
        "rerank_query": res.rerank_query,
        "reranked": [
            {
                "doc": p.hit.doc_id,
                "passage": p.hit.passage_id,
                "heading": p.hit.breadcrumb or p.hit.title,
                "text": p.hit.text,
                "rerank": p.rerank_score,
                "fused_rank": p.fused_rank,
            }
            for p in res.reranked[:10]
        ],
        "dense": hits("dense_chunks"),
        "bm25": hits("bm25_articles"),
        "features": dict(res.confidence_features),
        "band": res.confidence,
    }


def knob_grid(base: Tuning, quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{}]
    grid: list[dict[str, Any]] = [{}]
    for wd, wb in itertools.product((1.0,), (0.3, 0.5, 0.7, 1.0)):
        grid.append({"weight_dense_chunks": wd, "weight_bm25_articles": wb})
    for title, tags in ((1.0, 1.0), (0.5, 1.0), (0.0, 1.0), (2.0, 2.0)):
        grid.append({"bm25_title_boost": title, "bm25_tags_boost": tags})
    for shortlist in (10, 30, 40):
        grid.append({"rerank_shortlist": shortlist})
    for reserved in (0, 5):
        grid.append({"rerank_reserved_per_ranker": reserved})
    grid.append({"rerank_with_condensed": True})
    for w in (0.5, 1.0):
        grid.append({"offline_answer_type": w})
    for w in (2.0, 4.0):
        grid.append({"offline_heading_sem": w})
    return grid


class QueryMemo:
    """The embedder with query vectors remembered: every configuration asks the same queries."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dimensions = inner.name, inner.dimensions
        self._queries: dict[str, list[float]] = {}

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return list(await self.inner.embed_documents(texts))

    async def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = await self.inner.embed_query(text)
        return self._queries[text]

    def save(self) -> None:
        if hasattr(self.inner, "save"):
            self.inner.save()


async def run(args: argparse.Namespace) -> None:
    settings = eval_settings(args.reranker)
    embedder = QueryMemo(build_embedder(settings, TUNING))
    reranker = build_reranker(settings, embedder)
    corpus = load_corpus(args.corpus)
    cases = [
        c
        for c in load_cases(args.cases, None, None if args.split == "all" else args.split).cases
        if c.relevant or c.answerable is not None
    ]
    if args.limit:
        cases = cases[: args.limit]
    from app.services import build_services

    services = await build_services(settings, TUNING)
    await services.router.warm()
    started = time.perf_counter()
    condensed = await condensed_questions(cases, services.router, TUNING)
    print(f"condensed {len(cases)} cases in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    tickets = await embed_tickets(corpus.tickets, embedder)
    if args.warm_baseline:  # the eval harness's naive windows, into the same disk cache
        await NaiveBaseline.build(corpus.articles, corpus.tickets, embedder)
        if hasattr(embedder, "save"):
            embedder.save()
        print("baseline windows embedded", file=sys.stderr, flush=True)
    out = args.out.open("a", encoding="utf-8")
    dump = args.dump.open("w", encoding="utf-8") if args.dump else None
    for spec in args.chunks.split(","):
        size, overlap = (int(x) for x in spec.split("/"))
        t0 = time.perf_counter()
        chunks = await embed_chunks(corpus.articles, embedder, size, overlap, mode=args.embed)
        print(
            f"chunks {size}/{overlap}: {len(chunks)} in {time.perf_counter() - t0:.0f}s",
            file=sys.stderr,
            flush=True,
        )
        grid = json.loads(args.grid) if args.grid else knob_grid(TUNING, args.quick)
        for knobs in grid:
            recorded, knobs = dict(knobs), dict(knobs)
            ranker = reranker
            weights = {
                k.removeprefix("offline_"): knobs.pop(k)
                for k in list(knobs)
                if k.startswith("offline_")
            }
            if weights:  # weights of the offline reranker, not tuning
                ranker = OfflineReranker(embedder, dataclasses.replace(OfflineWeights(), **weights))
            tuning = dataclasses.replace(
                TUNING, max_chunk_size=size, chunk_overlap=overlap, **knobs
            )
            search = LocalSearch(corpus.articles, chunks, tickets, tuning=tuning)
            ranked = []
            features = []
            for case, query in zip(cases, condensed, strict=True):
                res = await retrieve(
                    case.message,
                    query,
                    case.plan,
                    case.locale,
                    backend=search,
                    embedder=embedder,
                    reranker=ranker,
                    tuning=tuning,
                    previous_message=case.previous_message,
                )
                ranked.append({s: res.ranked_doc_ids(s) for s in RANKED_STAGES})
                if dump is not None and not recorded:
                    dump.write(json.dumps(dump_row(case, query, res)) + "\n")
                top_doc = res.passages[0].hit.doc_id if res.passages else None
                features.append(
                    {
                        "id": case.id,
                        "answerable": case.answerable,
                        "top_relevant": top_doc in set(case.relevant or ()),
                        "features": dict(res.confidence_features),
                        "band": res.confidence,
                    }
                )
            row = {
                "split": args.split,
                "cases": len(cases),
                "chunks": f"{size}/{overlap}",
                "embed": args.embed,
                "n_chunks": len(chunks),
                "knobs": recorded,
                "metrics": score(ranked, cases),
                "confidence_features": features,
            }
            out.write(json.dumps(row) + "\n")
            if args.features and not recorded:
                with args.features.open("w", encoding="utf-8") as f:
                    f.writelines(json.dumps(r) + "\n" for r in features)
            out.flush()
            m = row["metrics"]
            print(
                f"  {size}/{overlap} embed={args.embed} {recorded}: "
                f"dense {m['dense_chunks']['recall@5']:.3f} "
                f"bm25 {m['bm25_articles']['recall@5']:.3f} fused {m['fused']['recall@5']:.3f} "
                f"rerank {m['fused_rerank']['recall@5']:.3f}",
                file=sys.stderr,
                flush=True,
            )
    out.close()
    if dump is not None:
        dump.close()
    await services.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.evaluation.sweep")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--cases", type=Path, nargs="+", required=True)
    parser.add_argument("--split", choices=("tune", "report", "all"), default="tune")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    parser.add_argument("--dump", type=Path, default=None, help="per-case retrievals JSONL")
    parser.add_argument("--chunks", default="1200/150")
    parser.add_argument("--reranker", default=None)
    parser.add_argument(
        "--embed",
        choices=("path", "heading", "breadcrumb", "none"),
        default="heading",
        help="what a chunk's vector is computed from (see embedded_text)",
    )
    parser.add_argument("--warm-baseline", action="store_true", help="cache the naive windows")
    parser.add_argument("--quick", action="store_true", help="only the current knobs")
    parser.add_argument("--grid", default=None, help="JSON list of knob dicts (replaces the grid)")
    parser.add_argument("--out", type=Path, default=Path("reports/sweep.jsonl"))
    parser.add_argument("--features", type=Path, default=None, help="confidence features JSONL")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
