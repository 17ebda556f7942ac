"""The ingestion pipeline against the embedded store, asserting on what was stored."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.ingest import ingest_articles, ingest_corpus, ingest_tickets
from app.ingest.review import PROMPT_INJECTION
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.errors import ProviderError
from app.settings import ROOT, Settings
from app.store import Store, open_store
from app.store.models import Article, Ticket
from tuning import TUNING

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
GOOD_SLUGS = ["audit-logs", "desk-booking", "display-brightness", "kiosk-reset"]


class FailingEmbedder(FakeEmbedder):
    """Fails any batch containing `marker`; succeeds otherwise."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if any(self.marker in t for t in texts):
            raise ProviderError("embedding service unavailable")
        return await super().embed_documents(texts)


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    s = open_store(Settings(mongodb_uri=None, embedder="fake"))
    yield s
    await s.close()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A writable copy of the good fixtures."""
    target = tmp_path / "articles"
    shutil.copytree(FIXTURES / "good", target)
    return target


async def _chunk_docs(store: Store) -> list[dict[str, Any]]:
    return list(await store.db["kb_chunks"].find({}).sort("_id", 1).to_list())


async def _article_docs(store: Store) -> list[dict[str, Any]]:
    return list(await store.db["kb_articles"].find({}).sort("_id", 1).to_list())


async def test_ingests_articles_and_chunks_copy_parent_metadata(store: Store, corpus: Path) -> None:
    report = await ingest_corpus(store, FakeEmbedder(), corpus)

    assert report.bad == []
    assert sorted(report.ingested) == GOOD_SLUGS
    assert report.articles_seen == 4
    assert [a.id for a in await store.articles.list()] == GOOD_SLUGS
    assert report.chunks_written == await store.chunks.count() > 4
    assert report.table_chunks == await store.chunks.count({"kind": "table"}) == 2

    audit = await store.articles.get("audit-logs")
    assert audit is not None
    chunks = await store.chunks.for_article("audit-logs")
    assert [c.id for c in chunks] == [f"audit-logs#{i}" for i in range(len(chunks))]
    for c in chunks:
        assert (c.audience, c.locale, c.status, c.category, c.tags, c.title) == (
            "enterprise",
            "en-GB",
            "draft",
            "security",
            ["audit", "export", "aud-403"],  # lowercased at ingest (lucene.keyword)
            "Exporting audit logs",
        )
        assert len(c.embedding) == 64
        assert c.breadcrumb.startswith("Exporting audit logs")

    table = (await store.chunks.all({"articleId": "desk-booking", "kind": "table"}))[0]
    assert table.breadcrumb == "Booking a desk › Desk limits by plan"
    assert all(plan in table.text for plan in ("| Free |", "| Pro |", "| Enterprise |"))


async def test_flagged_article_is_ingested_with_its_flag(store: Store, corpus: Path) -> None:
    report = await ingest_corpus(store, FakeEmbedder(), corpus)
    flagged = await store.articles.get("display-brightness")
    assert flagged is not None and flagged.review_flags == [PROMPT_INJECTION]
    assert await store.chunks.count({"articleId": "display-brightness"}) > 0
    assert list(report.flagged) == ["display-brightness"]
    assert "flagged for review: display-brightness" in report.summary()


async def test_bad_documents_are_reported_and_the_rest_ingested(store: Store, corpus: Path) -> None:
    for bad in (FIXTURES / "bad").iterdir():
        shutil.copy(bad, corpus / bad.name)
    (corpus / "oversized.md").write_text(
        "---\nslug: oversized\ntitle: Huge\naudience: all\n---\n" + "x" * TUNING.max_document_bytes
    )

    report = await ingest_corpus(store, FakeEmbedder(), corpus)

    reasons = {Path(e.path).name: e.reason for e in report.bad}
    assert set(reasons) == {
        "malformed-yaml.md",
        "unknown-audience.md",
        "missing-audience.md",
        "unknown-status.md",
        "empty-body.md",
        "no-front-matter.md",
        "latin1.md",
        "manual.pdf",
        "dup-one.md",
        "dup-two.md",
        "oversized.md",
    }
    assert "malformed front matter" in reasons["malformed-yaml.md"]
    assert "unknown audience" in reasons["unknown-audience.md"]
    assert "empty body" in reasons["empty-body.md"]
    assert "not valid UTF-8" in reasons["latin1.md"]
    assert "duplicate slug 'parking'" in reasons["dup-one.md"]
    assert "tuning.max_document_bytes" in reasons["oversized.md"]
    assert sorted(report.ingested) == GOOD_SLUGS
    assert [a.id for a in await store.articles.list()] == GOOD_SLUGS
    for line in ("11 bad", "latin1.md: not valid UTF-8", "oversized.md: file is"):
        assert line in report.summary()


async def test_second_run_changes_nothing(store: Store, corpus: Path) -> None:
    embedder = FakeEmbedder()
    await ingest_corpus(store, embedder, corpus)
    chunks_before, articles_before = await _chunk_docs(store), await _article_docs(store)
    calls_before = len(embedder.calls)

    report = await ingest_corpus(store, embedder, corpus)

    assert report.ingested == [] and report.changed == 0
    assert sorted(report.unchanged) == GOOD_SLUGS
    assert len(embedder.calls) == calls_before, "unchanged articles are not re-embedded"
    assert await _chunk_docs(store) == chunks_before
    assert await _article_docs(store) == articles_before
    assert "0 changed" in report.summary()


async def test_editing_one_article_replaces_exactly_its_chunks(store: Store, corpus: Path) -> None:
    await ingest_corpus(store, FakeEmbedder(), corpus)
    before = await _chunk_docs(store)
    old_desk = [d for d in before if d["articleId"] == "desk-booking"]
    others = [d for d in before if d["articleId"] != "desk-booking"]
    assert len(old_desk) > 2

    path = corpus / "desk-booking.md"
    front, _body = path.read_text().split("---\n", 2)[1:]
    path.write_text(f"---\n{front}---\nDesks can now be booked 30 days ahead.\n")

    report = await ingest_corpus(store, FakeEmbedder(), corpus)

    assert report.ingested == ["desk-booking"]
    assert report.chunks_deleted == len(old_desk) - 1
    after = await _chunk_docs(store)
    assert [d for d in after if d["articleId"] != "desk-booking"] == others
    desk = [d for d in after if d["articleId"] == "desk-booking"]
    assert [(d["_id"], d["chunkIndex"]) for d in desk] == [("desk-booking#0", 0)]
    assert "30 days ahead" in desk[0]["text"]
    article = await store.articles.get("desk-booking")
    assert article is not None and "30 days ahead" in article.body


async def test_embedding_failure_writes_nothing_for_that_article(
    store: Store, corpus: Path
) -> None:
    tuning = dataclasses.replace(TUNING, embed_batch_size=1)
    await ingest_corpus(store, FakeEmbedder(), corpus, tuning)
    before_chunks, before_articles = await _chunk_docs(store), await _article_docs(store)

    # edit two articles; embedding fails on the last chunk of one (after earlier batches worked)
    desk = corpus / "desk-booking.md"
    desk.write_text(desk.read_text().replace("in **Settings → Booking rules**", "POISON here"))
    audit = corpus / "audit-logs.md"
    audit.write_text(audit.read_text().replace("400 days", "500 days"))

    report = await ingest_corpus(store, FailingEmbedder("POISON"), corpus, tuning)

    assert [Path(e.path).name for e in report.bad] == ["desk-booking.md"]
    assert "embedding failed, nothing written" in report.bad[0].reason
    assert report.ingested == ["audit-logs"]
    after_chunks = await _chunk_docs(store)
    assert [d for d in after_chunks if d["articleId"] == "desk-booking"] == [
        d for d in before_chunks if d["articleId"] == "desk-booking"
    ]
    desk_article = [d for d in await _article_docs(store) if d["_id"] == "desk-booking"]
    assert desk_article == [d for d in before_articles if d["_id"] == "desk-booking"]

    # a brand-new article whose embedding fails is not stored at all
    (corpus / "new.md").write_text("---\nslug: new\ntitle: New\naudience: all\n---\nPOISON\n")
    await ingest_corpus(store, FailingEmbedder("POISON"), corpus, tuning)
    assert await store.articles.get("new") is None
    assert await store.chunks.count({"articleId": "new"}) == 0


async def test_removed_articles_are_reported_and_pruned_only_on_request(
    store: Store, corpus: Path
) -> None:
    await ingest_corpus(store, FakeEmbedder(), corpus)
    (corpus / "audit-logs.md").unlink()

    report = await ingest_corpus(store, FakeEmbedder(), corpus)
    assert report.missing == ["audit-logs"] and report.pruned == []
    assert await store.articles.get("audit-logs") is not None
    assert "--prune" in report.summary()

    report = await ingest_corpus(store, FakeEmbedder(), corpus, prune=True)
    assert report.pruned == ["audit-logs"]
    assert await store.articles.get("audit-logs") is None
    assert await store.chunks.count({"articleId": "audit-logs"}) == 0
    assert await store.chunks.count() > 0


async def test_a_broken_file_is_not_treated_as_removed(store: Store, corpus: Path) -> None:
    await ingest_corpus(store, FakeEmbedder(), corpus)
    (corpus / "audit-logs.md").write_text("---\nslug: audit-logs\ntitle: [unclosed\n---\nx\n")

    report = await ingest_corpus(store, FakeEmbedder(), corpus, prune=True)

    assert [Path(e.path).name for e in report.bad] == ["audit-logs.md"]
    assert report.missing == [] and report.pruned == []
    assert await store.chunks.count({"articleId": "audit-logs"}) > 0


async def test_empty_source_never_prunes(store: Store, corpus: Path, tmp_path: Path) -> None:
    await ingest_corpus(store, FakeEmbedder(), corpus)
    empty = tmp_path / "empty"
    empty.mkdir()
    report = await ingest_corpus(store, FakeEmbedder(), empty, prune=True)
    assert report.prune_refused and report.pruned == []
    assert await store.articles.count() == 4


async def test_ingest_articles_recomputes_hash_and_rejects_duplicate_ids(store: Store) -> None:
    def article(aid: str, body: str) -> Article:
        return Article(id=aid, slug=aid, title=aid.title(), body=body, updated_at=datetime.now(UTC))

    report = await ingest_articles(
        store,
        FakeEmbedder(),
        [article("a", "Alpha text."), article("b", "Beta."), article("b", "Beta again.")],
    )
    assert report.ingested == ["a"]
    assert [e.reason for e in report.bad] == ["duplicate id 'b'; none was ingested"] * 2
    stored = await store.articles.get("a")
    assert stored is not None and len(stored.content_hash) == 64


async def test_ingest_tickets_embeds_subject_symptom_resolution(store: Store) -> None:
    tickets = [
        Ticket(
            id=f"T-{i}",
            subject=f"Kiosk {i} frozen",
            symptom="Screen stuck on logo",
            resolution="Hold power for 10 seconds",
            product="kiosk",
            status="resolved",
        )
        for i in range(3)
    ]
    embedder = FakeEmbedder()
    report = await ingest_tickets(store, embedder, tickets)
    assert (report.tickets_seen, report.tickets_written) == (3, 3)
    assert (
        embedder.calls[0][0]
        == "Kiosk 0 frozen\n\nScreen stuck on logo\n\nHold power for 10 seconds"
    )
    stored = await store.tickets.all()
    assert [t.id for t in stored] == ["T-0", "T-1", "T-2"]
    assert all(len(t.embedding) == 64 for t in stored)

    again = await ingest_tickets(store, embedder, tickets)
    assert again.tickets_written == 0 and len(embedder.calls) == 1

    # metadata-only change: rewritten, but the stored vector is reused
    requality = [tickets[1].model_copy(update={"quality": 0.4})]
    report = await ingest_tickets(store, embedder, requality)
    assert report.tickets_written == 1 and len(embedder.calls) == 1
    t1 = await store.tickets.get("T-1")
    assert t1 is not None and t1.quality == 0.4 and len(t1.embedding) == 64

    failing = FakeEmbedder()
    failing.fail_with = ProviderError("down")
    changed = [tickets[0].model_copy(update={"resolution": "Replace the power supply"})]
    report = await ingest_tickets(store, failing, changed)
    assert report.tickets_written == 0 and "embedding failed" in report.bad[0].reason
    t0 = await store.tickets.get("T-0")
    assert t0 is not None and t0.resolution == "Hold power for 10 seconds"


@pytest.mark.slow
async def test_seed_articles_ingest_cleanly(store: Store) -> None:
    report = await ingest_corpus(store, FakeEmbedder(), ROOT / "seed" / "articles")
    assert report.bad == [], report.summary()
    assert len(report.ingested) > 40
    assert report.table_chunks >= 1
    assert "room-panel-cleaning" in report.flagged
    panel = await store.articles.get("room-panel-cleaning")
    assert panel is not None and PROMPT_INJECTION in panel.review_flags
    flagged = [a.id for a in await store.articles.list() if a.review_flags]
    assert flagged == ["room-panel-cleaning"], "no ordinary help article is flagged"


async def test_embed_heading_path_embeds_a_section_under_its_whole_path(store: Store) -> None:
    """With `embed_heading_path` a section's chunk is embedded under "Title › Section" instead
    of its own heading line; the stored text is unchanged and a page's opening, whose path is
    its title alone, is embedded as it is."""
    embedder = FakeEmbedder()
    body = (
        "# Team roles\n\nEvery person has one role.\n\n## Guests\n\nOutside visitors use no seat.\n"
    )
    roles = Article(
        id="roles", slug="roles", title="Team roles", body=body, updated_at=datetime.now(UTC)
    )
    tuning = dataclasses.replace(TUNING, embed_heading_path=True)
    report = await ingest_articles(store, embedder, [roles], tuning=tuning)
    assert report.ingested == ["roles"]
    embedded = [t for call in embedder.calls for t in call]
    guests = next(t for t in embedded if "Outside visitors" in t)
    assert guests.startswith("Team roles › Guests\n\nOutside")
    assert next(t for t in embedded if "Every person" in t).startswith("# Team roles\n")
    chunk = next(c for c in await store.chunks.for_article("roles") if "Outside" in c.text)
    assert chunk.text.startswith("## Guests") and chunk.embedding_version == 2


async def test_switching_what_chunks_are_embedded_from_embeds_them_again(
    store: Store, corpus: Path
) -> None:
    """Vectors computed the other way are stale though no text changed: the next ingest embeds
    every article again instead of calling it unchanged, and again when switched back."""
    embedder = FakeEmbedder()
    await ingest_corpus(store, embedder, corpus)
    assert {c.embedding_version for c in await store.chunks.all({})} == {1}

    on = await ingest_corpus(
        store, embedder, corpus, tuning=dataclasses.replace(TUNING, embed_heading_path=True)
    )
    assert sorted(on.ingested) == GOOD_SLUGS and on.unchanged == []
    assert {c.embedding_version for c in await store.chunks.all({})} == {2}

    off = await ingest_corpus(store, embedder, corpus)
    assert sorted(off.ingested) == GOOD_SLUGS
    assert {c.embedding_version for c in await store.chunks.all({})} == {1}
    assert (await ingest_corpus(store, embedder, corpus)).ingested == []
