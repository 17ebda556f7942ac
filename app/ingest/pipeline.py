"""Ingestion: load → validate → chunk → embed → write, one article at a time.

An article is written only after all its chunks are embedded, so a provider failure leaves the
stored copy (old or absent) intact, never half-replaced. Chunks are written before the article:
the article's content hash is the commit marker, so if the second write fails, the next run sees
a stale hash and redoes the article.

An article is unchanged (skipped) when its stored hash matches and its stored chunks are exactly
what the chunker produces now, embedded at the current embedder's width, and its stored
`searchTerms` come from the current analyzer, and their vectors were computed from the text
`embedding_text` gives today (`embedding_version`). Comparing chunk texts also catches changes to
`max_chunk_size`/`chunk_overlap` or to the chunker itself. A switch to a different embedder of
the same width is not detectable: pass `force=True` after one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.ingest.chunker import BREADCRUMB_SEP, ChunkDraft, chunk_article
from app.ingest.leaks import Leak
from app.ingest.loaders import LoadError, finalize, load_corpus
from app.ingest.review import injection_phrases
from app.ingest.sections import block_ids_in, build_sections
from app.language.analyzer import ANALYZER_VERSION
from app.providers.embeddings.base import Embedder
from app.providers.errors import ProviderError
from app.store import Store
from app.store.models import Article, Chunk, Section, Ticket
from tuning import TUNING, Tuning

_HEADING_LINE = re.compile(r"\s{0,3}#{1,6}\s")

Progress = Callable[[int, int], None]


@dataclass
class IngestReport:
    """What one ingestion run saw and did."""

    articles_seen: int = 0
    ingested: list[str] = field(default_factory=list)  # written: new (also in `added`) or changed
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    bad: list[LoadError] = field(default_factory=list)
    warnings: list[LoadError] = field(default_factory=list)
    skipped: list[LoadError] = field(default_factory=list)  # files of another format, and why
    leaks: dict[str, list[Leak]] = field(default_factory=dict)  # file → syntax left in it
    chunks_written: int = 0
    table_chunks: int = 0
    chunks_deleted: int = 0
    flagged: dict[str, list[str]] = field(default_factory=dict)
    quarantined: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    prune_refused: bool = False
    tickets_seen: int = 0
    tickets_written: int = 0
    tickets_added: list[str] = field(default_factory=list)
    tickets_changed: list[str] = field(default_factory=list)
    tickets_unchanged: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        """Articles and tickets whose stored state this run changed."""
        return len(self.ingested) + len(self.pruned) + self.tickets_written

    def counts(self) -> str:
        """One line of counts."""
        line = (
            f"articles: {self.articles_seen} seen, {len(self.ingested)} ingested, "
            f"{len(self.unchanged)} unchanged, {len(self.bad)} bad"
        )
        if self.warnings:
            line += f", {len(self.warnings)} warnings"
        if self.leaks:
            markers = sum(len(v) for v in self.leaks.values())
            line += f", {markers} leaked template markers in {len(self.leaks)} files"
        return line + (
            f"; chunks: {self.chunks_written} written ({self.table_chunks} tables), "
            f"{self.chunks_deleted} stale removed; {self.changed} changed"
        )

    def summary(self) -> str:
        """A few human-readable lines: counts first, then each problem on its own line."""
        lines = [self.counts()]
        if self.tickets_seen:
            lines.append(
                f"tickets: {self.tickets_seen} seen, {len(self.tickets_added)} added, "
                f"{len(self.tickets_changed)} changed, {len(self.tickets_unchanged)} unchanged"
            )
        lines.extend(f"  bad: {e.path}: {e.reason}" for e in self.bad)
        lines.extend(f"  warning: {e.path}: {e.reason}" for e in self.warnings)
        for slug, phrases in self.flagged.items():
            quoted = "; ".join(f'"{p}"' for p in phrases[:3]) or "hidden in a comment"
            held = ", quarantined until approved" if slug in self.quarantined else ""
            lines.append(
                f"  flagged for review: {slug}: possible prompt injection ({quoted}){held}"
            )
        if self.missing:
            if self.pruned:
                action = "pruned"
            elif self.prune_refused:
                action = "kept (the source had no valid articles, so nothing was pruned)"
            else:
                action = "kept (pass prune=True / --prune to remove)"
            lines.append(f"  no longer in source, {action}: {', '.join(self.missing)}")
        return "\n".join(lines)


async def ingest_corpus(
    store: Store,
    embedder: Embedder,
    paths_or_dir: str | Path | Iterable[str | Path],
    tuning: Tuning = TUNING,
    *,
    prune: bool = False,
    force: bool = False,
    default_audience: str | None = None,
    progress: Progress | None = None,
    quarantine: bool = True,
    scope: str | None = None,
) -> IngestReport:
    """Ingest every article file under `paths_or_dir` (the whole corpus) and report on it.

    `default_audience` applies to files whose front matter names none (else they are rejected);
    `progress(done, total)` is called at the start and about every tenth of the way (runs of 20+
    articles); `quarantine`: a flagged article that a person has not approved (in this exact
    content) is stored with status `quarantined`, so no ranker and no help page serves it.
    `scope`: only stored articles whose source path starts with it can be "missing" (and pruned):
    importing one folder says nothing about articles that came from elsewhere.
    """
    corpus = load_corpus(
        paths_or_dir,
        tuning.max_document_bytes,
        default_audience=default_audience,
        max_pdf_bytes=tuning.max_pdf_bytes,
    )
    report = IngestReport(
        bad=list(corpus.errors),
        warnings=list(corpus.warnings),
        skipped=list(corpus.skipped),
        leaks=dict(corpus.leaks),
    )
    await _ingest(
        store,
        embedder,
        corpus.articles,
        report,
        tuning,
        claimed=corpus.claimed_slugs,
        bad_paths={e.path for e in corpus.errors},
        prune=prune,
        force=force,
        quarantine=quarantine,
        progress=progress,
        scope=scope,
    )
    return report


async def ingest_articles(
    store: Store,
    embedder: Embedder,
    articles: Sequence[Article],
    tuning: Tuning = TUNING,
    *,
    prune: bool = False,
    force: bool = False,
    quarantine: bool = True,
) -> IngestReport:
    """Ingest already-built articles (e.g. an eval corpus); hashes and flags are recomputed."""
    report = IngestReport()
    by_id: dict[str, list[Article]] = {}
    for article in articles:
        by_id.setdefault(article.id, []).append(article)
    unique: list[Article] = []
    for article_id, copies in by_id.items():
        if len(copies) == 1:
            unique.append(finalize(copies[0]))
            continue
        for copy in copies:
            where = copy.source_path or article_id
            report.bad.append(LoadError(where, f"duplicate id {article_id!r}; none was ingested"))
    await _ingest(
        store,
        embedder,
        unique,
        report,
        tuning,
        claimed=set(by_id),
        bad_paths=set(),
        prune=prune,
        force=force,
        quarantine=quarantine,
    )
    return report


async def ingest_tickets(
    store: Store,
    embedder: Embedder,
    tickets: Sequence[Ticket],
    tuning: Tuning = TUNING,
    *,
    progress: Progress | None = None,
) -> IngestReport:
    """Embed (subject + symptom + resolution) and upsert resolved-ticket documents.

    Only tickets whose text changed (or that lack a vector of this width) are embedded; a ticket
    whose metadata alone changed keeps its stored vector; identical tickets are not written.
    On an embedding failure nothing is written and the failure is reported.
    `progress(done, total)` follows the embedding, batch by batch.
    """
    report = IngestReport(tickets_seen=len(tickets))
    stored = {t.id: t for t in await store.tickets.all()}
    to_embed: list[Ticket] = []
    to_write: list[Ticket] = []
    for ticket in tickets:
        old = stored.get(ticket.id)
        if old is None or len(old.embedding) != embedder.dimensions:
            to_embed.append(ticket)  # new, or embedded by a model of another width
        elif ticket_text(old) != ticket_text(ticket):
            to_embed.append(ticket)  # the text changed: its vector is stale
        elif ticket.model_dump(exclude={"embedding"}) != old.model_dump(exclude={"embedding"}):
            to_write.append(ticket.model_copy(update={"embedding": old.embedding}))
        else:
            report.tickets_unchanged.append(ticket.id)
    try:
        texts = [ticket_text(t) for t in to_embed]
        vectors = await _embed(embedder, texts, tuning.embed_batch_size, progress)
    except ProviderError as exc:
        report.bad.append(LoadError("tickets", f"embedding failed, nothing written: {exc}"))
        report.tickets_unchanged.clear()
        return report
    to_write.extend(
        t.model_copy(update={"embedding": v}) for t, v in zip(to_embed, vectors, strict=True)
    )
    await store.tickets.upsert_many(to_write)
    report.tickets_written = len(to_write)
    for t in to_write:
        (report.tickets_changed if t.id in stored else report.tickets_added).append(t.id)
    return report


def ticket_text(ticket: Ticket) -> str:
    """The text a ticket is embedded from."""
    return "\n\n".join(p.strip() for p in (ticket.subject, ticket.symptom, ticket.resolution) if p)


def embedding_version(tuning: Tuning) -> int:
    """What chunk vectors are computed from, stored on every chunk so that a change re-embeds
    on the next ingest though no text changed: 1 the chunk text, 2 the text under its whole
    heading path (`tuning.embed_heading_path`)."""
    return 2 if tuning.embed_heading_path else 1


def embedding_text(draft: ChunkDraft, version: int) -> str:
    """The text a chunk is embedded from: its text; at version 2, with the heading line it
    starts with ("## Guests") replaced by its whole heading path ("Team roles › Guests"), except
    where the path is that heading alone (a page without sections)."""
    first, _, rest = draft.text.partition("\n")
    if version < 2 or BREADCRUMB_SEP not in draft.breadcrumb or not _HEADING_LINE.match(first):
        return draft.text
    return f"{draft.breadcrumb}\n\n{rest.lstrip()}"


def section_of(
    drafts: Sequence[ChunkDraft], sections: Sequence[Section]
) -> list[tuple[str | None, list[str]]]:
    """Each draft's section id and block ids: the section whose heading path is the draft's
    breadcrumb, the first not before the previous draft's (two sections may share a path)."""
    out: list[tuple[str | None, list[str]]] = []
    at = 0
    for draft in drafts:
        path = [p.strip() for p in draft.breadcrumb.split(BREADCRUMB_SEP)][1:]
        k = next((k for k in range(at, len(sections)) if sections[k].path == path), None)
        if k is None:
            out.append((None, []))
            continue
        at = k
        out.append((sections[k].id, block_ids_in(draft.text, sections[k])))
    return out


def chunks_for(
    article: Article, drafts: Sequence[ChunkDraft], vectors: Sequence[list[float]], version: int = 1
) -> list[Chunk]:
    """Chunk documents for an article: ids `slug#index`, filter fields copied from the parent,
    each with the section and blocks of `article.sections` it carries."""
    where = section_of(drafts, article.sections)
    return [
        Chunk(
            id=f"{article.id}#{i}",
            article_id=article.id,
            chunk_index=i,
            text=draft.text,
            breadcrumb=draft.breadcrumb,
            kind=draft.kind,
            page=draft.page,
            section_id=where[i][0],
            block_ids=where[i][1],
            embedding_version=version,
            embedding=vector,
            audience=article.audience,
            locale=article.locale,
            category=article.category,
            tags=list(article.tags),
            status=article.status,
            title=article.title,
        )
        for i, (draft, vector) in enumerate(zip(drafts, vectors, strict=True))
    ]


async def _embed(
    embedder: Embedder, texts: Sequence[str], batch_size: int, progress: Progress | None = None
) -> list[list[float]]:
    vectors: list[list[float]] = []
    size = max(batch_size, 1)
    for start in range(0, len(texts), size):
        if progress is not None:
            progress(start, len(texts))
        batch = texts[start : start + size]
        got = await embedder.embed_documents(batch)
        if len(got) != len(batch) or any(len(v) != embedder.dimensions for v in got):
            raise ProviderError(
                f"embedder returned {len(got)} vectors for {len(batch)} texts "
                f"(expected width {embedder.dimensions})"
            )
        vectors.extend(got)
    if progress is not None and texts:
        progress(len(texts), len(texts))
    return vectors


def _reviewed(article: Article, old: Article | None, quarantine: bool) -> Article:
    """The article as it will be stored: approved content keeps its approval; flagged content
    nobody approved is quarantined (when `quarantine`)."""
    if not article.review_flags:
        return article
    if old is not None and old.approved_hash and old.approved_hash == article.content_hash:
        return article.model_copy(
            update={
                "review_flags": [],
                "approved_hash": old.approved_hash,
                "reviewed_by": old.reviewed_by,
                "reviewed_at": old.reviewed_at,
            }
        )
    if quarantine and article.status == "published":
        return article.model_copy(update={"status": "quarantined"})
    return article


async def _unchanged(
    store: Store,
    article: Article,
    drafts: Sequence[ChunkDraft],
    old: Article | None,
    dims: int,
    version: int,
) -> bool:
    if old is None or old.content_hash != article.content_hash or old.status != article.status:
        return False
    if old.sections != article.sections:
        return False  # stored before the section tree, or by an older builder
    if old.search_terms is None or old.search_terms.version != ANALYZER_VERSION:
        return False  # stored before this analyzer: Atlas would search stale tokens
    existing = await store.chunks.for_article(article.id)
    return [(c.text, c.breadcrumb, c.kind, c.page) for c in existing] == [
        (d.text, d.breadcrumb, d.kind, d.page) for d in drafts
    ] and all(len(c.embedding) == dims and c.embedding_version == version for c in existing)


async def _write_group(
    store: Store,
    embedder: Embedder,
    pending: list[tuple[Article, list[ChunkDraft], Article | None]],
    report: IngestReport,
    tuning: Tuning,
) -> None:
    """Embed the chunks of every pending article in one run of batches, then write each
    article (chunks first, then the article: its hash is the commit marker). Empties `pending`."""
    version = embedding_version(tuning)
    texts = [embedding_text(d, version) for _, drafts, _ in pending for d in drafts]
    # batches of similar length: a batch is padded to its longest text
    order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
    try:
        got = await _embed(embedder, [texts[k] for k in order], tuning.embed_batch_size)
        vectors: list[list[float]] = [[] for _ in texts]
        for k, vector in zip(order, got, strict=True):
            vectors[k] = vector
    except ProviderError as exc:
        if len(pending) > 1:  # find which article fails: the others are still written
            for one in list(pending):
                await _write_group(store, embedder, [one], report, tuning)
        else:
            where = pending[0][0].source_path or pending[0][0].id
            report.bad.append(LoadError(where, f"embedding failed, nothing written: {exc}"))
        pending.clear()
        return
    at = 0
    for article, drafts, old in pending:
        mine, at = vectors[at : at + len(drafts)], at + len(drafts)
        old_count = await store.chunks.count({"articleId": article.id}) if old else 0
        chunks = chunks_for(article, drafts, mine, version)
        await store.chunks.replace_for_article(article.id, chunks)
        await store.articles.upsert(article)
        report.ingested.append(article.id)
        if old is None:
            report.added.append(article.id)
        report.chunks_written += len(chunks)
        report.table_chunks += sum(1 for c in chunks if c.kind == "table")
        report.chunks_deleted += max(old_count - len(chunks), 0)
    pending.clear()


async def _ingest(
    store: Store,
    embedder: Embedder,
    articles: Sequence[Article],
    report: IngestReport,
    tuning: Tuning,
    *,
    claimed: set[str],
    bad_paths: set[str],
    prune: bool,
    force: bool,
    quarantine: bool = True,
    progress: Progress | None = None,
    scope: str | None = None,
) -> None:
    stored = {a.id: a for a in await store.articles.list()}
    report.articles_seen = len(articles) + len(report.bad)
    if progress is not None and len(articles) >= 20:
        progress(0, len(articles))
    # chunks of many articles are embedded together: one small call per article costs ~40%
    pending: list[tuple[Article, list[ChunkDraft], Article | None]] = []
    for done, article in enumerate(articles):
        where = article.source_path or article.id
        drafts = chunk_article(
            article.title, article.body, tuning.max_chunk_size, tuning.chunk_overlap
        )
        if not drafts:
            report.bad.append(LoadError(where, "body has no indexable text"))
            continue
        old = stored.get(article.id)
        article = _reviewed(article, old, quarantine)
        article = article.model_copy(
            update={"sections": build_sections(article.title, article.body)}
        )
        if article.review_flags:
            report.flagged[article.id] = injection_phrases(f"{article.title}\n{article.body}")
        if article.status == "quarantined":
            report.quarantined.append(article.id)
        if not force and await _unchanged(
            store, article, drafts, old, embedder.dimensions, embedding_version(tuning)
        ):
            report.unchanged.append(article.id)
            continue
        pending.append((article, drafts, old))
        if sum(len(p[1]) for p in pending) >= tuning.ingest_embed_group:
            await _write_group(store, embedder, pending, report, tuning)
            if progress is not None and len(articles) >= 20:
                progress(done + 1, len(articles))
    await _write_group(store, embedder, pending, report, tuning)
    if progress is not None and len(articles) >= 20:
        progress(len(articles), len(articles))
    # An article whose file failed to load this run is not "missing": its file is still there.
    report.missing = sorted(
        article_id
        for article_id, prev in stored.items()
        if article_id not in claimed
        and (prev.source_path or "") not in bad_paths
        and (scope is None or (prev.source_path or "").startswith(scope))
    )
    # An empty source is far more likely a wrong path than a request to delete everything.
    report.prune_refused = prune and not articles and bool(report.missing)
    if prune and articles:
        for article_id in report.missing:
            report.chunks_deleted += await store.chunks.delete_for_article(article_id)
            await store.articles.delete(article_id)
            report.pruned.append(article_id)
