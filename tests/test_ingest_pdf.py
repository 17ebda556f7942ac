"""PDF ingestion on PDFs the tests generate: headings, pages, tables, two columns, scans."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ingest import chunk_article, ingest_corpus
from app.ingest.loaders import LoadError, load_corpus, load_file
from app.ingest.pdf import pdf_to_markdown
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store
from app.store.models import Article
from tests.pdfgen import (
    GLUED_SENTENCE,
    LEFT_COLUMN,
    RIGHT_COLUMN,
    manual_pdf,
    scanned_only_pdf,
    steps_pdf,
    write,
)

MAX = 10_000_000
KEY = "a-view-key-of-at-least-thirty-two-bytes"


def _load(path: Path) -> tuple[list[str], list[LoadError], Article]:
    corpus = load_corpus(path, MAX, default_audience="all")
    assert not corpus.errors, corpus.errors
    return [a.id for a in corpus.articles], corpus.warnings, corpus.articles[0]


@pytest.mark.parametrize("outline", [True, False], ids=["outline", "font-sizes"])
def test_headings_come_from_the_outline_or_else_from_font_sizes(
    tmp_path: Path, outline: bool
) -> None:
    pdf = write(tmp_path / "lumo-manual.pdf", manual_pdf(outline=outline, scanned=False))
    converted = pdf_to_markdown(pdf.read_bytes())
    assert converted.headings_from == ("outline" if outline else "font sizes")
    article = load_file(pdf, MAX, default_audience="all")
    assert not isinstance(article, LoadError), article
    assert article.title == "Lumo Lamp Manual"
    drafts = chunk_article(article.title, article.body, 600, 80)
    assert list(dict.fromkeys(d.breadcrumb for d in drafts)) == [
        "Lumo Lamp Manual › Mounting the lamp",
        "Lumo Lamp Manual › Power requirements",
        "Lumo Lamp Manual › Error codes",
        "Lumo Lamp Manual › Troubleshooting",
    ]


def test_every_chunk_knows_its_page_and_tables_are_their_own_chunks(tmp_path: Path) -> None:
    pdf = write(tmp_path / "lumo-manual.pdf", manual_pdf(scanned=False))
    _, _, article = _load(pdf)
    drafts = chunk_article(article.title, article.body, 600, 80)
    tables = [d for d in drafts if d.kind == "table"]
    assert [(t.page, t.breadcrumb.split(" › ")[-1]) for t in tables] == [
        (2, "Power requirements"),  # drawn with rules
        (3, "Error codes"),  # drawn without rules: aligned columns
    ]
    assert "| Lumo XL | 200-240 V | 2.5 A | 0.6 W |" in tables[0].text
    assert "| E31 | Sensor offline | Reseat the cable |" in tables[1].text

    def page_of(start: str) -> int | None:
        (page,) = {d.page for d in drafts if d.text.split("\n\n")[1].startswith(start)}
        return page

    assert page_of("Fix the wall bracket") == 1
    assert page_of("Never connect the lamp") == 2
    assert page_of("If the lamp flickers") == 4
    assert all("<!-- page" not in d.text for d in drafts)  # markers never reach the index


def test_a_two_column_page_reads_down_each_column(tmp_path: Path) -> None:
    body = pdf_to_markdown(manual_pdf(scanned=False)).body
    left, right = " ".join(LEFT_COLUMN), " ".join(RIGHT_COLUMN)
    assert left in body and right in body  # each column is one unbroken paragraph
    assert body.index(left) < body.index(right)


def test_scanned_pages_are_reported_and_a_scan_only_file_is_rejected(tmp_path: Path) -> None:
    _, warnings, _ = _load(write(tmp_path / "a" / "manual.pdf", manual_pdf()))
    assert [w.reason for w in warnings] == [
        "1 of 5 pages have no text layer (page 5: scanned?); they are not searchable until the "
        "file is OCRed"
    ]
    scan = load_file(write(tmp_path / "b" / "card.pdf", scanned_only_pdf()), MAX)
    assert isinstance(scan, LoadError)
    assert "no text layer (all 1 pages are images: a scan?)" in scan.reason


def test_a_sidecar_file_carries_the_metadata_a_pdf_cannot(tmp_path: Path) -> None:
    write(tmp_path / "lumo-manual.pdf", manual_pdf(scanned=False))
    (tmp_path / "lumo-manual.pdf.yaml").write_text(
        "slug: lumo-lamp\naudience: pro\ncategory: manuals\ntags: [lamp, install]\n"
    )
    corpus = load_corpus(tmp_path, MAX)  # no default audience: the sidecar names it
    assert not corpus.errors, corpus.errors
    (article,) = corpus.articles
    assert (article.id, article.audience, article.category, article.tags) == (
        "lumo-lamp",
        "pro",
        "manuals",
        ["lamp", "install"],
    )


def test_a_broken_pdf_is_rejected_with_a_reason(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(manual_pdf()[:400])
    result = load_file(bad, MAX, default_audience="all")
    assert isinstance(result, LoadError)
    assert "PDF" in result.reason


async def test_pdf_chunks_are_stored_with_pages_and_rerunning_changes_nothing(
    store: Store, tmp_path: Path
) -> None:
    write(tmp_path / "lumo-manual.pdf", manual_pdf())
    first = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert first.ingested == ["lumo-manual"] and first.table_chunks == 2
    chunks = await store.chunks.for_article("lumo-manual")
    assert {c.page for c in chunks} == {1, 2, 3, 4}
    assert {(c.kind, c.page) for c in chunks if c.kind == "table"} == {("table", 2), ("table", 3)}
    again = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert (again.ingested, again.unchanged, again.changed) == ([], ["lumo-manual"], 0)


def test_citation_links_carry_the_page_after_any_view_token() -> None:
    from app.links import article_url

    assert article_url("lumo-manual", "all", KEY, page=2) == "/help/lumo-manual#page=2"
    restricted = article_url("lumo-manual", "pro", KEY, "pro", page=3)
    assert restricted.startswith("/help/lumo-manual?v=") and restricted.endswith("#page=3")
    assert article_url("lumo-manual", "all", KEY) == "/help/lumo-manual"


def test_both_search_backends_carry_a_chunks_page() -> None:
    from app.search.atlas import chunk_hit

    doc = {"_id": "m#1", "articleId": "m", "text": "t", "breadcrumb": "M", "score": 0.5}
    assert chunk_hit({**doc, "page": 3}).page == 3
    assert chunk_hit(doc).page is None


def test_lists_code_comments_and_words_set_without_spaces() -> None:
    body = pdf_to_markdown(steps_pdf()).body
    blocks = body.split("\n\n")
    assert "1. Hold the moon button for eight seconds." in blocks
    assert "3. Press any button on the lamp." in blocks  # each step its own item
    assert "- Works with up to four lamps" in blocks
    assert "\\# generated file, do not edit" in blocks  # text, not a heading
    assert GLUED_SENTENCE in body  # split at the gaps, not glued into one word


def test_pdfs_have_their_own_size_limit(tmp_path: Path) -> None:
    write(tmp_path / "lumo-manual.pdf", manual_pdf(scanned=False))
    small = len(manual_pdf(scanned=False)) // 2  # under the PDF's size
    assert load_corpus(tmp_path, small, default_audience="all", max_pdf_bytes=MAX).articles
    (err,) = load_corpus(tmp_path, MAX, default_audience="all", max_pdf_bytes=small).errors
    assert "(tuning.max_pdf_bytes)" in err.reason


def test_an_outline_that_does_not_match_the_page_text_falls_back_to_font_sizes() -> None:
    renamed = pdf_to_markdown(manual_pdf(scanned=False, outline_as="Chapter: {}"))
    assert renamed.headings_from == "font sizes"
    assert "## Power requirements" in renamed.body
