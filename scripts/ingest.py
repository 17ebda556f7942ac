"""`make ingest`: load, chunk, embed and store the help articles.

    python -m scripts.ingest [--dir seed/articles] [--prune] [--force]

With MONGODB_URI set, ingests into that database once. Without it, ingests twice into a fresh
embedded store (which lives only in this process) to show that a second run changes nothing.
Exits with status 1 when any document was rejected, so CI notices a bad article.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from app.ingest import IngestReport, ingest_corpus
from app.providers.embeddings import build_embedder
from app.settings import Settings
from app.store import open_store


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.ingest", description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="article directory")
    parser.add_argument(
        "--prune", action="store_true", help="delete stored articles no longer in --dir"
    )
    parser.add_argument(
        "--force", action="store_true", help="re-embed every article (e.g. after a model change)"
    )
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings()
    source = args.dir or settings.seed_dir / "articles"
    store = open_store(settings)
    embedder = build_embedder(settings)
    where = "a fresh embedded store" if store.embedded else f"database {settings.mongodb_db!r}"
    print(f"ingesting {source} into {where} with embedder {embedder.name}")
    reports: list[IngestReport] = []
    try:
        for attempt in (1, 2) if store.embedded else (1,):
            t0 = time.perf_counter()
            report = await ingest_corpus(
                store,
                embedder,
                source,
                prune=args.prune,
                force=args.force and attempt == 1,
                quarantine=settings.quarantine_flagged,
            )
            print(f"run {attempt} ({time.perf_counter() - t0:.1f}s):")
            print(report.summary())
            reports.append(report)
    finally:
        await store.close()
    return 1 if reports and reports[0].bad else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
