"""The leak detector: syntax left after normalisation is found, located and reported."""

from __future__ import annotations

from pathlib import Path

from app.ingest import ingest_corpus
from app.ingest.leaks import find_leaks, leak_report, summarise
from app.ingest.loaders import load_corpus
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store


def test_markers_outside_code_are_found_with_line_and_excerpt() -> None:
    body = (
        'Fine text.\n\n{{% faq "Why?" %}}\n\n::: tip\n\n'
        "[x](%7B%7Bsite.baseurl%7D%7D/a)\n\n<TabItem value='a'>\n\n"
        "```\n{% not a leak in code %}\n```\n\nUse `{{ also fine }}`."
    )
    found = find_leaks(body)
    assert [(leak.marker, leak.line) for leak in found] == [
        ("{{<", 3),
        (":::", 5),
        ("%7B%7B", 7),
        ("%7B%7B", 7),
        ("<Tab", 9),
    ]
    assert "faq" in found[0].excerpt
    assert summarise(found).startswith("5 leaked markers (")
    assert summarise([]) == "no leaked markers"


def test_clean_markdown_has_no_leaks() -> None:
    clean = "## Title\n\n> **Warning:** careful.\n\n| a | b |\n|---|---|\n| ✓ | x |\n"
    assert find_leaks(clean) == []


def test_leak_report_counts_pages_and_names_the_worst() -> None:
    report = leak_report({"a": "{% x %} {{ y }}", "b": "clean", "c": ":::note"})
    assert report["markers"] == 3 and report["pages"] == 2 and report["pagesChecked"] == 3
    by_page = report["byPage"]
    assert isinstance(by_page, dict) and list(by_page) == ["a", "c"]


async def test_a_file_with_leaks_still_loads_and_is_reported(store: Store, tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# Ok\n\nPlain text.\n", encoding="utf-8")
    # a Liquid tag split by a line break inside a table cell is not a tag the renderer reads
    (tmp_path / "odd.md").write_text("# Odd\n\nText with a stray {% tag\n", encoding="utf-8")
    corpus = load_corpus(tmp_path, 100_000, default_audience="all")
    assert sorted(a.slug for a in corpus.articles) == ["odd", "ok"]
    ((path, leaky),) = corpus.leaks.items()
    assert path.endswith("odd.md")
    assert leaky[0].marker == "{%"
    report = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert sorted(report.ingested) == ["odd", "ok"]
    assert "1 leaked template markers in 1 files" in report.counts()
    assert any("leaked marker" in w.reason for w in report.warnings)


def test_links_to_a_page_that_did_not_load_become_text(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nSee [b](b.md) and [c](c.md).\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\ntitle: B\n---\n", encoding="utf-8")  # empty: rejected
    (tmp_path / "c.md").write_text("---\nstatus: draft\n---\n# C\n\nDraft.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path, 100_000, default_audience="all")
    (a,) = [x for x in corpus.articles if x.slug == "a"]
    assert a.body == "See b and c."


def test_raw_restructuredtext_is_a_leak_outside_code() -> None:
    body = "See :ref:`Limits <limits>` now.\n\n.. note::\n\n   Text.\n\n`:doc:` in code, at 10:30."
    found = find_leaks(body)
    assert [(leak.marker, leak.line) for leak in found] == [(":role:`", 1), (".. name::", 3)]
