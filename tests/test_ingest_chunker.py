"""The structure-aware chunker: headings, tables, fences, long sections and overlap."""

from __future__ import annotations

import itertools
import re

import pytest

from app.ingest.chunker import chunk_article

TABLE = "\n".join(
    [
        "| Plan | Price | Seats |",
        "|---|---:|---|",
        *[f"| Plan {i} | ${i * 3} | up to {i * 10} |" for i in range(1, 13)],
    ]
)

DOC = f"""# Plans

Intro paragraph about plans.

## Pricing

Prices are per seat.

{TABLE}

Prices exclude VAT.

### Annual billing

Annual billing costs ten months.

## Empty

## Seats
### Counting seats

Pending invitations count as seats.
"""


def test_table_is_one_whole_chunk_that_names_its_heading() -> None:
    chunks = chunk_article("Plans", DOC, max_chars=2000, overlap=100)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) == 1
    assert tables[0].text.startswith("## Pricing\n\n")
    assert TABLE in tables[0].text
    assert tables[0].breadcrumb == "Plans › Pricing"
    # no table row leaks into a prose chunk
    assert not any("| Plan 1 |" in c.text for c in chunks if c.kind == "prose")


def test_breadcrumbs_follow_headings_and_empty_sections_are_dropped() -> None:
    chunks = chunk_article("Plans", DOC, max_chars=2000, overlap=100)
    assert [(c.breadcrumb, c.kind) for c in chunks] == [
        ("Plans", "prose"),
        ("Plans › Pricing", "table"),
        ("Plans › Pricing", "prose"),
        ("Plans › Pricing › Annual billing", "prose"),
        ("Plans › Seats › Counting seats", "prose"),
    ]
    assert chunks[0].text == "# Plans\n\nIntro paragraph about plans."  # leading H1 = title
    assert chunks[3].text.startswith("### Annual billing\n\n")
    assert all("## Empty" not in c.text for c in chunks)


def test_prose_around_a_table_keeps_its_order() -> None:
    chunks = chunk_article("Plans", DOC, max_chars=2000, overlap=100)
    # the short lead-in goes with the table it introduces; the text after it is its own chunk
    assert chunks[1].text == "## Pricing\n\nPrices are per seat.\n\n" + TABLE
    assert chunks[2].text == "## Pricing\n\nPrices exclude VAT."


def test_a_long_introduction_stays_its_own_chunk() -> None:
    intro = " ".join(["Prices depend on the plan and on the number of seats you buy."] * 6)
    body = f"## Pricing\n\n{intro}\n\n{TABLE}"
    chunks = chunk_article("Plans", body, max_chars=2000, overlap=100)
    assert [c.kind for c in chunks] == ["prose", "table"]
    assert chunks[1].text == "## Pricing\n\n" + TABLE


def test_oversize_table_is_kept_whole() -> None:
    chunks = chunk_article("Plans", DOC, max_chars=200, overlap=40)
    (table,) = [c for c in chunks if c.kind == "table"]
    assert TABLE in table.text
    assert len(table.text) > 200
    assert all(len(c.text) <= 200 for c in chunks if c.kind == "prose")


def _sentences(n: int) -> str:
    return " ".join(f"Sentence number {i} explains one more detail about desks." for i in range(n))


def test_long_section_splits_at_sentences_with_overlap_and_respects_max_chars() -> None:
    body = f"## Long section\n\n{_sentences(40)}\n\n{_sentences(5)}"
    chunks = chunk_article("Desks", body, max_chars=400, overlap=120)
    assert len(chunks) > 3
    assert all(len(c.text) <= 400 for c in chunks)
    assert all(c.text.startswith("## Long section\n\n") for c in chunks)
    assert all(c.breadcrumb == "Desks › Long section" for c in chunks)
    for prev, nxt in itertools.pairwise(chunks):
        carried = re.split(r"(?<=\.)\s+", nxt.text.removeprefix("## Long section\n\n"))[0]
        assert carried in prev.text, "each continuation starts with the previous piece's tail"
        assert carried[0].isupper(), "overlap starts at a sentence boundary"
    # nothing lost: every sentence of the section appears in some chunk
    for i in range(40):
        assert any(f"Sentence number {i} " in c.text for c in chunks)


def test_paragraphs_are_preferred_split_points() -> None:
    para = "Short paragraph about rooms that fits easily."
    body = "## Rooms\n\n" + "\n\n".join([para] * 12)
    chunks = chunk_article("Rooms", body, max_chars=200, overlap=0)
    assert len(chunks) > 1
    for c in chunks:
        content = c.text.removeprefix("## Rooms\n\n")
        assert all(p == para for p in content.split("\n\n"))


def test_word_split_when_a_sentence_is_longer_than_max_chars() -> None:
    body = "## Codes\n\n" + " ".join(f"word{i}" for i in range(300))
    chunks = chunk_article("Codes", body, max_chars=150, overlap=30)
    assert all(len(c.text) <= 150 for c in chunks)
    words = {w for c in chunks for w in c.text.split()}
    assert {f"word{i}" for i in range(300)} <= words


def test_code_fence_is_not_split_and_its_headings_are_not_sections() -> None:
    fence = "```\n" + "\n".join(f"# step {i}: run command {i}" for i in range(30)) + "\n```"
    body = f"## Script\n\nRun this:\n\n{fence}\n\nThen restart."
    chunks = chunk_article("Ops", body, max_chars=300, overlap=50)
    assert {c.breadcrumb for c in chunks} == {"Ops › Script"}
    assert sum(fence in c.text for c in chunks) == 1
    assert all("```" not in c.text or fence in c.text for c in chunks)


def test_h3_before_any_h2_and_later_h1() -> None:
    body = "### Orphan\n\nText A.\n\n# Second top\n\nText B.\n\n### Child\n\nText C."
    chunks = chunk_article("T", body, max_chars=500, overlap=0)
    assert [c.breadcrumb for c in chunks] == [
        "T › Orphan",
        "T › Second top",
        "T › Second top › Child",
    ]


def test_body_with_only_headings_gives_no_chunks() -> None:
    assert chunk_article("T", "# T\n\n## A\n\n### B\n", max_chars=500, overlap=0) == []


def test_rejects_nonsense_sizes() -> None:
    with pytest.raises(ValueError):
        chunk_article("T", "text", max_chars=0, overlap=0)


def test_overlap_never_leaves_half_a_bold_span() -> None:
    faq = "\n".join(
        f"**Question {i}: what happens to my remote vault and my site when I ask for a refund?**"
        f"\nThe answer {i} is long enough to matter here."
        for i in range(8)
    )
    chunks = chunk_article("FAQ", "## FAQ\n\n" + faq, 250, 60)
    assert len(chunks) > 2
    bodies = [c.text.split("\n\n", 1)[1] for c in chunks[1:]]
    assert all(b.count("**") % 2 == 0 for b in bodies), bodies
    # at least one continuation carried over the tail of a bold question, reopened
    assert any(b.startswith("**") and not b.startswith("**Question") for b in bodies), bodies


def test_page_markers_give_each_chunk_the_page_its_own_text_starts_on() -> None:
    body = (
        "<!-- page 1 -->\n\n## Setup\n\n" + "First page words here. " * 8 + "\n\n"
        "<!-- page 2 -->\n\n" + "Second page words here. " * 8 + "\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n<!-- page 3 -->\n\n## Care\n\nWipe it dry.\n"
    )
    drafts = chunk_article("Manual", body, 260, 40)
    assert [(d.kind, d.page) for d in drafts] == [
        ("prose", 1),
        ("prose", 2),  # starts with page 1's tail, but its own text is page 2's
        ("table", 2),
        ("prose", 3),
    ]
    assert drafts[1].text.split("\n\n", 1)[1].startswith("First page words here.")
    assert not any("<!--" in d.text for d in drafts)
    assert all(d.page is None for d in chunk_article("Plain", "## A\n\nText.", 260, 40))
