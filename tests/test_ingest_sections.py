"""The section tree built at ingest: typed blocks per heading, stored with the article."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.ingest import ingest_corpus
from app.ingest.chunker import chunk_article
from app.ingest.sections import anchor_of, build_sections
from app.providers.embeddings.fake import FakeEmbedder
from app.settings import Settings
from app.store import Store, open_store

DOC = """# Vault guide

A vault is a folder of notes. It lives on your disk.

## Keyboard shortcuts

Use the following default shortcuts:

- `Ctrl+N` opens a new note
- `Ctrl+P` opens the command palette
  - also from the sidebar
- `Ctrl+,` opens settings

## Plans

| Plan | Price | Devices |
|------|-------|---------|
| Basic | $0 | 1 |
| Plus \\| yearly | $8 per month | 5 |

### Install the app

1. Download the installer.
2. Run it:

   ```sh
   ./install.sh --quiet
   ```

3. Sign in.

#### On Android

Open the store and search for the app.

> **Warning:** Removing a vault cannot be undone.

## Plans

A second section with the same heading.
"""


def _by_path(title: str, body: str) -> dict[tuple[str, ...], list]:
    return {tuple(s.path): s.blocks for s in build_sections(title, body)}


def test_lists_keep_items_whole_with_their_nested_items() -> None:
    blocks = _by_path("Vault guide", DOC)[("Keyboard shortcuts",)]
    assert [b.kind for b in blocks] == ["paragraph", "list"]
    assert blocks[0].text == "Use the following default shortcuts:"
    shortcuts = blocks[1]
    assert not shortcuts.ordered
    assert len(shortcuts.items) == 3
    assert "also from the sidebar" in shortcuts.items[1]
    assert shortcuts.items[2] == "`Ctrl+,` opens settings"


def test_tables_keep_header_and_rows_with_escaped_pipes() -> None:
    sections = build_sections("Vault guide", DOC)
    plans = next(s for s in sections if s.path == ["Plans"])
    (table,) = plans.blocks
    assert table.kind == "table"
    assert table.header == ["Plan", "Price", "Devices"]
    assert table.rows == [["Basic", "$0", "1"], ["Plus | yearly", "$8 per month", "5"]]


def test_numbered_steps_keep_their_code_and_a_tab_is_a_labelled_panel() -> None:
    blocks = _by_path("Vault guide", DOC)[("Plans", "Install the app")]
    steps, tab = blocks
    assert steps.kind == "list" and steps.ordered
    assert len(steps.items) == 3
    assert "./install.sh --quiet" in steps.items[1]
    assert steps.items[2] == "Sign in."
    assert tab.kind == "tab" and tab.label == "On Android"
    assert tab.text.startswith("Open the store")
    assert "**Warning:**" in tab.text  # the panel's own callout stays inside it


def test_callouts_code_and_the_intro_section() -> None:
    body = 'Intro line one.\n\n> **Note:** Sync needs an account.\n\n```json\n{"a": 1}\n```\n'
    (intro,) = build_sections("T", body)
    assert intro.id == "s0" and intro.path == [] and intro.anchor == ""
    note, code = intro.blocks[1:]
    assert (note.kind, note.label, note.text) == ("callout", "Note", "Sync needs an account.")
    assert (code.kind, code.label, code.text) == ("code", "json", '{"a": 1}')


EXAMPLE = """## Write a deck

A deck is Markdown:

````md
# First slide

```ts
console.log('hi')
```

# Second slide
````

## Present it

Press F to present.
"""


def test_a_shorter_fence_inside_a_longer_one_is_the_examples_own_code() -> None:
    """The example's `# Second slide` is not a heading: the inner ``` fence neither ends the
    outer ```` one nor, closed, leaves the lines after it outside the example."""
    sections = [s for s in build_sections("Decks", EXAMPLE) if s.blocks]
    assert [s.path for s in sections] == [["Write a deck"], ["Present it"]]
    code = sections[0].blocks[1]
    assert code.kind == "code" and code.text.endswith("# Second slide")
    chunks = chunk_article("Decks", EXAMPLE, 2000, 0)
    assert [c.breadcrumb for c in chunks] == ["Decks › Write a deck", "Decks › Present it"]


def test_a_fence_line_with_an_info_string_does_not_close_a_fence() -> None:
    body = "## Setup\n\n```\nrun it\n```sh\nstill code\n```\n\nAfter the code.\n"
    (setup,) = [s for s in build_sections("T", body) if s.blocks]
    code, after = setup.blocks
    assert code.kind == "code" and code.text == "run it\n```sh\nstill code"
    assert after.text == "After the code."


def test_anchors_are_unique_and_block_ids_name_their_section() -> None:
    sections = build_sections("Vault guide", DOC)
    assert [s.anchor for s in sections if s.path and s.path[-1] == "Plans"] == ["plans", "plans-1"]
    assert anchor_of("Set up **SSO** (beta)!") == "set-up-sso-beta"
    for s in sections:
        assert all(b.id.startswith(f"{s.id}.b") for b in s.blocks)
    assert len({s.id for s in sections}) == len(sections)


def test_a_plain_text_page_has_one_paragraph_a_line() -> None:
    body = "Refunds are possible within 30 days.\nAfter that, contact us.\nOne more line"
    (section,) = build_sections("T", body)
    assert [b.text for b in section.blocks] == [
        "Refunds are possible within 30 days.",
        "After that, contact us.",
        "One more line",
    ]


def test_wrapped_markdown_paragraphs_stay_one_block() -> None:
    body = "First line of a paragraph\nwrapped here.\n\nSecond paragraph."
    (section,) = build_sections("T", body)
    assert [b.text for b in section.blocks] == [
        "First line of a paragraph wrapped here.",
        "Second paragraph.",
    ]


def test_a_numbered_list_resumed_after_an_unindented_line_is_one_list() -> None:
    """ "2." after a step whose link (or code) was written unindented continues the steps: the
    line belongs to step 1, and a list numbered from 1 again stays a list of its own."""
    body = (
        "Two ways out:\n\n1. Update the printer driver:\n\n<https://example.org/driver>\n\n"
        "```sh\nsudo driverctl update\n```\n\n2. Or reset the spooler.\n3. Print again.\n\n"
        "Then:\n\n1. Restart.\n"
    )
    (section,) = build_sections("T", body)
    kinds = [b.kind for b in section.blocks]
    assert kinds == ["paragraph", "list", "paragraph", "list"], kinds
    steps = section.blocks[1]
    assert steps.ordered and len(steps.items or []) == 3
    assert steps.items[0].splitlines() == [
        "Update the printer driver:",
        "<https://example.org/driver>",
        "```",
        "sudo driverctl update",
        "```",
    ]
    assert steps.text.splitlines()[-1] == "3. Print again."
    assert section.blocks[3].items == ["Restart."]


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    s = open_store(Settings(mongodb_uri=None, embedder="fake"))
    yield s
    await s.close()


async def test_ingest_stores_sections_and_chunks_know_theirs(store: Store, tmp_path: Path) -> None:
    (tmp_path / "vault-guide.md").write_text("---\naudience: all\n---\n" + DOC)
    (tmp_path / "page.html").write_text(
        "<html><head><title>Exporting</title></head><body><h1>Exporting</h1>"
        "<h2>Steps</h2><ol><li>Open settings.</li><li>Choose Export.</li></ol>"
        "<table><tr><th>Format</th><th>Size</th></tr><tr><td>CSV</td><td>2 MB</td></tr></table>"
        "</body></html>"
    )
    report = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert report.bad == []

    guide = await store.articles.get("vault-guide")
    assert guide is not None
    doc = await store.db["kb_articles"].find_one({"_id": "vault-guide"})
    assert [s["path"] for s in doc["sections"]][:3] == [[], ["Keyboard shortcuts"], ["Plans"]]
    chunks = await store.chunks.for_article("vault-guide")
    by_id = {s.id: s for s in guide.sections}
    for c in chunks:
        assert c.section_id in by_id
        section = by_id[c.section_id]
        assert c.breadcrumb.split(" › ")[1:] == section.path
        assert c.block_ids and all(b.startswith(f"{section.id}.") for b in c.block_ids)
    stored_chunk = await store.db["kb_chunks"].find_one({"articleId": "vault-guide"})
    assert "sectionId" in stored_chunk and "blockIds" in stored_chunk

    page = await store.articles.get("page")
    assert page is not None  # HTML became markdown first, so the same tree comes out
    kinds = {b.kind for s in page.sections for b in s.blocks}
    assert {"list", "table"} <= kinds

    again = await ingest_corpus(store, FakeEmbedder(), tmp_path, default_audience="all")
    assert again.ingested == []  # the stored tree is what the builder makes: nothing to redo
