"""`make ingest SRC=path`: load, check, chunk, embed and store help articles.

    python -m scripts.ingest [--dir PATH] [--check] [--prune] [--force] [--default-audience A]

`--check` loads and normalises every file and reports every problem, writing nothing (works
without any database). Otherwise the articles go into the MongoDB at MONGODB_URI. Without
MONGODB_URI there is no database to write to: the embedded store is filled by the server itself,
so the command refuses with one line saying to run `ARTICLES_DIR=PATH make run` instead.
Exits 1 when any document was rejected (so CI notices a bad article), 2 when it refused.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from app.ingest import IngestReport, ingest_corpus
from app.ingest.loaders import load_corpus
from app.providers.embeddings import build_embedder
from app.settings import Settings
from app.store import open_store
from tuning import TUNING


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.ingest", description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="folder (or file) of articles")
    parser.add_argument(
        "--check", action="store_true", help="load and report every problem; write nothing"
    )
    parser.add_argument(
        "--prune", action="store_true", help="delete stored articles no longer in --dir"
    )
    parser.add_argument(
        "--force", action="store_true", help="re-embed every article (e.g. after a model change)"
    )
    parser.add_argument(
        "--default-audience",
        choices=("all", "pro", "enterprise"),
        default=None,
        help="audience for files that name none (default: DEFAULT_AUDIENCE; else they are "
        "rejected)",
    )
    return parser.parse_args(argv)


def _progress(done: int, total: int) -> None:
    print(f"  {done}/{total} articles embedded", flush=True)


def check(source: Path, default_audience: str | None) -> int:
    corpus = load_corpus(source, TUNING.max_document_bytes, default_audience=default_audience)
    print(
        f"checked {source}: {len(corpus.articles) + len(corpus.errors)} files, "
        f"{len(corpus.articles)} ok, {len(corpus.errors)} bad, {len(corpus.warnings)} warnings"
    )
    for e in corpus.errors:
        print(f"  bad: {e.path}: {e.reason}")
    for e in corpus.warnings:
        print(f"  warning: {e.path}: {e.reason}")
    return 1 if corpus.errors else 0


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings()
    source = args.dir or settings.articles_dir or settings.seed_dir / "articles"
    audience = args.default_audience or settings.default_audience
    if not source.exists():
        print(f"ingest: no such file or directory: {source}", file=sys.stderr)
        return 2
    if args.check:
        return check(source, audience)
    if settings.embedded:
        print(
            "ingest: no database to write to (MONGODB_URI is unset) and the embedded store is "
            f"filled by the server itself: run `ARTICLES_DIR={source} make run`, or "
            f"`make ingest SRC={source} ARGS=--check` to only validate",
            file=sys.stderr,
        )
        return 2
    store = open_store(settings)
    embedder = build_embedder(settings)
    print(f"ingesting {source} into database {settings.mongodb_db!r} with {embedder.name}")
    report: IngestReport | None = None
    try:
        t0 = time.perf_counter()
        report = await ingest_corpus(
            store,
            embedder,
            source,
            prune=args.prune,
            force=args.force,
            default_audience=audience,
            progress=_progress,
            quarantine=settings.quarantine_flagged,
        )
        print(f"done in {time.perf_counter() - t0:.1f}s:")
        print(report.summary())
    finally:
        await store.close()
    return 1 if report.bad else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
