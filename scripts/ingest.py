"""`make ingest SRC=path`: load, check, chunk, embed and store help content and resolved tickets.

    python -m scripts.ingest [--dir PATH|URL] [--check] [--prune] [--force] [--default-audience A]

A URL (`make ingest SRC=https://docs.example.com/`) is a published docs site: it is crawled
(`app.ingest.crawl`) into DATA_DIR/crawl/<host>-<hash> and that folder is ingested; a second
run fetches only the pages that changed. PATH is a file or a folder; each file's loader is
picked by its content (docs/your-docs.md, "Bring your content"): Markdown/MDX/HTML/PDF
articles, a Zendesk Help Center articles export (`.json` with an `articles` list), or a tickets
export (`.csv` / `.jsonl` whose columns include a resolution and a subject or description).
Anything else in a folder is skipped and listed.

`--check` loads and validates everything and reports every problem, writing nothing (no database
needed). Otherwise the content goes into the MongoDB at MONGODB_URI or, without one, into the
embedded durable store in DATA_DIR, which the next `make run` serves (the server must be stopped
first: one process owns that store). The report counts added / changed / unchanged / skipped /
bad with a reason for each skipped or bad row; a second run over the same files changes nothing.
Exits 1 when anything was rejected (so CI notices), 2 when it refused to run.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from app.ingest import IngestReport, ingest_corpus, ingest_tickets
from app.ingest.crawl import CrawlLimits, CrawlRefused, crawl_folder, crawl_site
from app.ingest.loaders import BUNDLES, LOADERS, LoadError, load_corpus, source_files
from app.ingest.progress import Eta
from app.ingest.tickets import (
    TICKET_SUFFIXES,
    TicketLoad,
    is_tickets_file,
    load_ticket_files,
    ticket_files,
)
from app.providers.embeddings import build_embedder
from app.settings import Settings
from app.store import StoreInUse, open_store
from tuning import TUNING


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.ingest", description=__doc__)
    parser.add_argument(
        "--dir", default=None, help="file or folder to import, or a docs site's http(s) URL"
    )
    parser.add_argument(
        "--allow-private-addresses",
        action="store_true",
        help="tests only: let a URL source be crawled on a private or loopback address",
    )
    parser.add_argument(
        "--check", action="store_true", help="load and report every problem; write nothing"
    )
    parser.add_argument(
        "--prune", action="store_true", help="delete stored articles from PATH no longer in it"
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


class Bar:
    """A progress bar on a terminal (redrawn in place); elsewhere a line about every tenth.
    Both say how much time is left at the rate so far."""

    def __init__(self, what: str, out: TextIO | None = None, width: int = 30) -> None:
        self.what, self.out, self.width = what, out or sys.stdout, width
        self.tty = self.out.isatty()
        self._last_tenth = -1
        self.eta = Eta(time.monotonic())

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        status = self.eta.line(time.monotonic(), done, total, self.what)
        if self.tty:
            filled = round(self.width * done / total)
            bar = "#" * filled + "." * (self.width - filled)
            end = "\n" if done >= total else ""
            print(f"\r  [{bar}] {status}   ", end=end, file=self.out, flush=True)
            return
        tenth = done * 10 // total
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            print(f"  {status}", file=self.out, flush=True)


@dataclass
class Sources:
    """What PATH holds, sorted by loader (article files are loaded from PATH as a whole)."""

    articles: list[Path] = field(default_factory=list)
    tickets: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[LoadError] = field(default_factory=list)


def classify(source: Path) -> Sources:
    """Article files for `load_corpus`, ticket exports for the tickets loader, the rest skipped."""
    found = Sources()
    tickets: list[Path] = []
    others: list[Path] = []
    if source.is_file():
        if source.suffix.lower() not in TICKET_SUFFIXES:
            found.articles.append(source)
        elif is_tickets_file(source):
            tickets.append(source)
        else:
            others.append(source)
    else:
        found.articles = [
            f
            for f, _, _ in source_files(source)
            if f.suffix.lower() in LOADERS or f.suffix.lower() in BUNDLES
        ]
        tickets, others = ticket_files(source)
    found.tickets = [(f, _shown(f)) for f in tickets]
    found.skipped = [
        LoadError(
            _shown(f),
            "not a tickets export (needs a resolution column and a subject or description column)",
        )
        for f in others
    ]
    return found


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def load_tickets(sources: Sources, settings: Settings) -> TicketLoad:
    """Every ticket file's rows, merged (a ticket id in two files: the later file is bad)."""
    return load_ticket_files(
        sources.tickets, settings.pii_mask, max_bytes=TUNING.max_document_bytes * 50
    )


def _leak_count(leaks: Mapping[str, Sequence[object]]) -> str:
    """`0`, or `12 in 3 files` (each file's markers are listed with the warnings)."""
    markers = sum(len(v) for v in leaks.values())
    return f"{markers} in {len(leaks)} files" if markers else "0"


def _problems(label: str, errors: list[LoadError]) -> list[str]:
    return [f"  {label}: {e.path}: {e.reason}" for e in errors]


def check(source: Path, default_audience: str | None, settings: Settings) -> int:
    sources = classify(source)
    corpus = load_corpus(
        source if sources.articles else [],
        TUNING.max_document_bytes,
        default_audience=default_audience,
        max_pdf_bytes=TUNING.max_pdf_bytes,
    )
    tickets = load_tickets(sources, settings)
    skipped = sources.skipped + corpus.skipped
    print(
        f"checked {source}: {len(corpus.articles) + len(corpus.errors)} articles, "
        f"{len(corpus.articles)} ok, {len(corpus.errors)} bad, {len(corpus.warnings)} warnings"
    )
    print(f"  leaked template markers: {_leak_count(corpus.leaks)}")
    if sources.tickets:
        print(
            f"tickets: {len(tickets.tickets)} ok, {len(tickets.skipped)} skipped, "
            f"{len(tickets.bad)} bad"
        )
    lines = (
        _problems("bad", corpus.errors + tickets.bad)
        + _problems("skipped", skipped + tickets.skipped)
        + _problems("warning", corpus.warnings)
    )
    if lines:
        print("\n".join(lines))
    return 1 if corpus.errors or tickets.bad else 0


def _refusal(settings: Settings, source: Path) -> str | None:
    if settings.mongodb_uri:
        return None
    if settings.embedded_store != "file":
        return (
            "ingest: EMBEDDED_STORE=memory keeps nothing after this command: set MONGODB_URI, or "
            f"use the durable embedded store (EMBEDDED_STORE=file, DATA_DIR), or `make ingest "
            f"SRC={source} ARGS=--check` to only validate"
        )
    return None


def report_lines(
    articles: IngestReport | None,
    tickets: IngestReport | None,
    ticket_load: TicketLoad | None,
    skipped: list[LoadError],
    min_quality: float,
) -> list[str]:
    """The closing report: a line per kind, each problem with its reason, then the totals."""
    lines: list[str] = []
    added = changed = unchanged = bad = 0
    skipped_all = list(skipped)
    if articles is not None:
        a_changed = len(articles.ingested) - len(articles.added)
        lines.append(
            f"articles: {articles.articles_seen} seen: {len(articles.added)} added, "
            f"{a_changed} changed, {len(articles.unchanged)} unchanged, {len(articles.bad)} bad; "
            f"chunks: {articles.chunks_written} written ({articles.table_chunks} tables), "
            f"{articles.chunks_deleted} stale removed"
        )
        lines.append(f"  leaked template markers: {_leak_count(articles.leaks)}")
        added += len(articles.added)
        changed += a_changed + len(articles.pruned)
        unchanged += len(articles.unchanged)
        bad += len(articles.bad)
        lines.extend(articles.summary().splitlines()[1:])  # problems, flags, missing
    if tickets is not None and ticket_load is not None:
        low = [t.id for t in ticket_load.tickets if t.quality < min_quality]
        rows = len(ticket_load.tickets) + len(ticket_load.skipped) + len(ticket_load.bad)
        lines.append(
            f"tickets: {rows} rows: {len(tickets.tickets_added)} added, "
            f"{len(tickets.tickets_changed)} changed, {len(tickets.tickets_unchanged)} "
            f"unchanged, {len(ticket_load.skipped)} skipped, "
            f"{len(ticket_load.bad) + len(tickets.bad)} bad; PII masked in "
            f"{ticket_load.masked_rows} rows"
        )
        if low:
            lines.append(
                f"  low quality (stored, not retrieved under {min_quality}): {', '.join(low)}"
            )
        lines.extend(_problems("bad", ticket_load.bad + tickets.bad))
        added += len(tickets.tickets_added)
        changed += len(tickets.tickets_changed)
        unchanged += len(tickets.tickets_unchanged)
        bad += len(ticket_load.bad) + len(tickets.bad)
        skipped_all.extend(ticket_load.skipped)
    lines.extend(_problems("skipped", skipped_all))
    lines.append(
        f"total: {added} added, {changed} changed, {unchanged} unchanged, "
        f"{len(skipped_all)} skipped, {bad} bad"
    )
    return lines


async def _crawl(url: str, settings: Settings, allow_private: bool) -> Path | None:
    """Crawl a published docs site into its folder under DATA_DIR; None when refused."""
    folder = crawl_folder(settings.data_dir, url)
    limits = CrawlLimits(allow_private=allow_private or settings.crawl_allow_private)
    print(f"crawling {url} into {folder}", flush=True)
    try:
        report = await crawl_site(url, folder, limits)
    except CrawlRefused as exc:
        print(f"ingest: {exc}", file=sys.stderr)
        return None
    print(report.summary(), flush=True)
    return folder


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings()
    audience = args.default_audience or settings.default_audience
    if args.dir and re.match(r"^https?://", args.dir):
        crawled = await _crawl(args.dir, settings, args.allow_private_addresses)
        if crawled is None:
            return 2
        source, audience = crawled, audience or "all"  # a published site is public
    else:
        source = Path(args.dir) if args.dir else None
        source = source or settings.articles_dir or settings.seed_dir / "articles"
    if not source.exists():
        print(f"ingest: no such file or directory: {source}", file=sys.stderr)
        return 2
    if args.check:
        return check(source, audience, settings)
    refusal = _refusal(settings, source)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    try:
        store = open_store(settings)
    except StoreInUse as exc:
        pid = exc.owner.get("pid")
        who = f"process {pid}" if pid else "another process"
        print(
            f"ingest: {who} (the server?) owns the embedded store in {exc.data_dir}: stop it, "
            "run this again, then start it (it serves what was imported); or set MONGODB_URI",
            file=sys.stderr,
        )
        return 2
    sources = classify(source)
    embedder = build_embedder(settings)
    where = (
        f"database {settings.mongodb_db!r}"
        if settings.mongodb_uri
        else f"the embedded store in {settings.data_dir}"
    )
    print(f"ingesting {source} into {where} with {embedder.name}", flush=True)
    articles: IngestReport | None = None
    tickets: IngestReport | None = None
    ticket_load: TicketLoad | None = None
    skipped = list(sources.skipped)
    try:
        t0 = time.perf_counter()
        if sources.articles:
            articles = await ingest_corpus(
                store,
                embedder,
                source,  # the folder, not its files: slugs and categories follow its layout
                prune=args.prune,
                force=args.force,
                default_audience=audience,
                progress=Bar("articles"),
                quarantine=settings.quarantine_flagged,
                scope=_shown(source),
            )
            skipped.extend(articles.skipped)
        if sources.tickets:
            ticket_load = load_tickets(sources, settings)
            tickets = await ingest_tickets(
                store, embedder, ticket_load.tickets, progress=Bar("tickets")
            )
        save = getattr(embedder, "save", None)
        if callable(save):
            await asyncio.to_thread(save)
        print(f"done in {time.perf_counter() - t0:.1f}s:")
        print(
            "\n".join(
                report_lines(articles, tickets, ticket_load, skipped, TUNING.ticket_min_quality)
            )
        )
    finally:
        await store.close()
    failed = (articles is not None and bool(articles.bad)) or (
        ticket_load is not None and bool(ticket_load.bad)
    )
    return 1 if failed or (tickets is not None and tickets.bad) else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
