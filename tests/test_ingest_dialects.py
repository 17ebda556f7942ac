"""Markdown dialects normalised at load: one table row per construct (fixtures written here)."""

from __future__ import annotations

import pytest

from app.ingest.chunker import chunk_article
from app.ingest.dialects import Note, NoteIndex, first_paragraph, normalise
from app.ingest.sections import build_sections

SETUP = """Intro to setup.

## Create a vault

1. Open **Settings**.
2. Select **Create**.

## Delete a vault

Deleting is permanent.
"""
REGIONS = """Where the servers are.

> [!abstract] Regions
> **Europe**: Frankfurt
> **Asia**: Singapore
^server-regions

Unrelated paragraph.
"""


def _index() -> NoteIndex:
    index = NoteIndex()
    index.add("Sync/Set up sync.md", Note("set-up-sync", SETUP, "Sync"))
    index.add("Sync/Privacy.md", Note("privacy", REGIONS, "Sync"))
    index.add("Links.md", Note("links", "See [[Set up sync]].", ""), aliases=["Linking"])
    return index


# (dialect, source, must contain, must not contain)
CASES: list[tuple[str, str, list[str], list[str]]] = [
    (
        "wiki-link with label",
        "Read [[Set up sync|the setup guide]] first.",
        ["Read [the setup guide](/help/set-up-sync) first."],
        ["[["],
    ),
    (
        "wiki-link to a heading, no label",
        "See [[Set up sync#Delete a vault]].",
        ["See [Set up sync](/help/set-up-sync)."],
        ["[[", "#Delete"],
    ),
    (
        "wiki-link by path and by alias",
        "[[Sync/Privacy]] and [[Linking]]",
        ["[Privacy](/help/privacy)", "[Linking](/help/links)"],
        ["[["],
    ),
    (
        "wiki-link to a missing note is plain text",
        "Ask in [[Community forum|the forum]].",
        ["Ask in the forum."],
        ["[[", "](/help"],
    ),
    (
        "wiki-link inside a heading stays plain",
        "## About [[Set up sync|setup]]\n\nText.",
        ["## About setup"],
        ["[[", "](/help"],
    ),
    (
        "callout with title",
        "> [!warning] Back up first\n> Migrations replace your data.\n> Really.",
        ["> **Back up first:** Migrations replace your data.\n> Really."],
        ["[!warning]"],
    ),
    (
        "foldable callout without title",
        "> [!tip]- \n> Drag files in.",
        ["> **Tip:** Drag files in."],
        ["[!tip]"],
    ),
    (
        "nested callout",
        "> [!note] Outer\n> > [!example] Inner\n> > Nested body.",
        ["> **Outer:**\n>\n> > **Inner:** Nested body."],
        ["[!"],
    ),
    (
        "embed of a section",
        "## Moving\n\n![[Set up sync#Create a vault]]\n\nDone.",
        ["### Create a vault", "1. Open **Settings**.", "2. Select **Create**.", "Done."],
        ["![[", "Deleting is permanent", "Intro to setup"],
    ),
    (
        "embed of a block id (a callout)",
        "Available regions:\n\n![[Sync/Privacy#^server-regions]]",
        ["> **Regions:** **Europe**: Frankfurt\n> **Asia**: Singapore"],
        ["![[", "^server-regions", "Unrelated paragraph", "[!abstract]"],
    ),
    (
        "embed of a whole note",
        "![[Links]]",
        ["See [Set up sync](/help/set-up-sync)."],
        ["![["],
    ),
    (
        "embed of a missing note falls back to its name",
        "![[Nowhere]]",
        ["Nowhere"],
        ["![["],
    ),
    (
        "image embed becomes its alt text, size dropped",
        "The picker: ![[vault-picker.png|Vault picker|300]] appears.",
        ["The picker: Vault picker appears."],
        ["![[", "300", ".png"],
    ),
    (
        "icon embed without alt text disappears",
        "Select ![[lucide-cog.svg#icon]] **Settings**, or the icon ![[lucide-x.svg#icon]].",
        ["Select **Settings**, or the icon."],
        ["![[", "lucide"],
    ),
    (
        "local markdown image becomes its alt text; remote one stays",
        "![Search pane](../img/search.png) and ![logo](https://example.com/l.png)",
        ["Search pane and ![logo](https://example.com/l.png)"],
        ["search.png"],
    ),
    (
        "MkDocs admonition",
        '!!! note "Before you start"\n    You need an account.\n\n    Sign in first.\n\nNext.',
        ["> **Before you start:** You need an account.\n>\n> Sign in first.\n\nNext."],
        ["!!!", "    You"],
    ),
    (
        "MkDocs admonition with an explicitly empty title",
        '!!! note ""\n    Just the body.',
        ["Just the body."],
        ["**Note**", "!!!"],
    ),
    (
        "MkDocs collapsible admonition without title",
        "??? question\n    Is it free?",
        ["> **Question:** Is it free?"],
        ["???"],
    ),
    (
        "MkDocs content tabs with icons and code",
        '=== ":material-apple: macOS"\n\n    Press Cmd.\n\n    ```\n    brew install x\n    ```\n\n'
        '=== "Windows"\n    Press Ctrl.\n',
        ["## macOS\n\nPress Cmd.\n\n```\nbrew install x\n```", "## Windows\n\nPress Ctrl."],
        ["===", ":material-apple:", "    ```"],
    ),
    (
        "MkDocs attribute lists dropped",
        "## Setup { #setup }\n\n[Get started](start.md){ .md-button .md-button--primary }",
        ["## Setup\n", "[Get started](start.md)\n"],
        ["{ #setup }", ".md-button"],
    ),
    (
        "Docusaurus admonition with title",
        ":::tip Faster\nUse the keyboard.\n:::",
        ["> **Faster:** Use the keyboard."],
        [":::"],
    ),
    (
        "Docusaurus admonition with bracket title, nested",
        ":::danger[Careful]\nOuter.\n::::info\nInner.\n::::\n:::",
        ["> **Careful:** Outer.\n>\n> > **Info:** Inner."],
        [":::"],
    ),
    (
        "HTML and Obsidian comments stripped",
        "Keep <!-- secret\nmultiline --> this %%hidden%% text.",
        ["Keep this text."],
        ["secret", "hidden", "<!--", "%%"],
    ),
    (
        "script and style elements dropped whole",
        'Math.\n\n<script>\n  window.X = {a: [["\\(", "\\)"]]};\n</script>\n'
        "<style>p{}</style>\nEnd.",
        ["Math.", "End."],
        ["window.X", "p{}", "<script"],
    ),
    (
        "JSX tabs become sections named by their label, text kept",
        '<Tabs>\n<TabItem value="mac" label="macOS">\nPress <kbd>Cmd</kbd>+K.\n</TabItem>\n</Tabs>',
        ["## macOS\n\nPress Cmd+K."],
        ["<Tabs", "TabItem", "<kbd>"],
    ),
    (
        "footnotes: references dropped, definitions become paragraphs",
        "Fast search.[^1] More text.\n\n  [^1]:\n    Since 2016 it\n    has grown.\n\nAfter.",
        ["Fast search. More text.", "Since 2016 it\nhas grown.", "After."],
        ["[^1]"],
    ),
    (
        "block ids and highlights",
        "An ==important== fact. ^fact-1\n\n^orphan",
        ["An important fact."],
        ["^fact-1", "^orphan", "=="],
    ),
    (
        "escaped wiki-link syntax is shown as code",
        r"Use the \[\[double bracket\]\] syntax.",
        ["Use the `[[double bracket]]` syntax."],
        ["\\["],
    ),
    (
        "fenced code is never rewritten",
        "```md\n![[Set up sync]]\n> [!note]\n<!-- c -->\n```",
        ["```md\n![[Set up sync]]\n> [!note]\n<!-- c -->\n```"],
        [],
    ),
    (
        "a container with directive attributes is a callout",
        ':::tip{icon="heart"}\nKeep a backup.\n:::\n\n'
        ':::note[Good to know]{icon="star"}\nIt syncs.\n:::',
        ["> **Tip:** Keep a backup.", "> **Good to know:** It syncs."],
        [":::", "icon="],
    ),
    (
        "a component written over several lines is dropped in Markdown as in MDX",
        "Layouts come from the theme.\n\n<SeeAlso :links=\"[\n  'features/slots',\n]\" />\n\nDone.",
        ["Layouts come from the theme.", "Done."],
        ["SeeAlso", "features/slots", ']"'],
    ),
    (
        "MyST directives: callouts, tabs, code, and the silent ones dropped",
        ":::{note}\n:class: tip\nBack up first.\n:::\n\n"
        "```{warning} Do not unplug it.\n```\n\n"
        "::::{tab-set}\n:::{tab-item} Windows\nRun the installer.\n:::\n"
        ":::{tab-item} macOS\nDrag it to Applications.\n:::\n::::\n\n"
        "```{code-block} python\n:caption: run.py\nprint(1)\n```\n\n"
        "```{toctree}\n:maxdepth: 2\nintro-page\n```\n\n"
        ":::{versionadded} 2.1\nTabs.\n:::",
        [
            "> **Note:** Back up first.",
            "> **Warning:** Do not unplug it.",
            "# Windows\n\nRun the installer.",
            "# macOS\n\nDrag it to Applications.",
            "```python\nprint(1)\n```",
            "> **Version added 2.1:** Tabs.",
        ],
        [":::", "{note}", ":class:", ":caption:", "toctree", "intro-page", "{tab-item}"],
    ),
    (
        "MyST roles and targets read as their text; a code span holding braces stays code",
        "(install)=\n## Install\n\nSee {ref}`the billing page <billing>`, press {kbd}`Ctrl+S`"
        " and open `/users/{id}`.",
        ["## Install", "See the billing page, press Ctrl+S and open `/users/{id}`."],
        ["(install)=", "{ref}", "<billing>", "{kbd}"],
    ),
    (
        "inline code is never rewritten",
        "Type `[[Set up sync]]` or `==x==`.",
        ["Type `[[Set up sync]]` or `==x==`."],
        ["(/help/"],
    ),
]


@pytest.mark.parametrize(
    ("source", "present", "absent"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_dialect(source: str, present: list[str], absent: list[str]) -> None:
    out = normalise(source, _index(), folder="Sync")
    for text in present:
        assert text in out, out
    for text in absent:
        assert text not in out, out


def test_mdx_imports_and_comments_are_dropped_only_in_mdx() -> None:
    source = "import Tabs from '@theme/Tabs';\nexport const x = 1;\n\n{/* draft */}Hello.\n"
    assert normalise(source, mdx=True).strip() == "Hello."
    assert "import Tabs" in normalise(source, mdx=False)


def test_a_component_whose_props_are_nested_objects_and_arrays_is_dropped() -> None:
    """Props three levels deep (an array of objects holding an array) are code, whether on one
    line or over several: before, the tag was quoted as text, labels and URLs and all."""
    source = (
        "Pick a theme.\n\n"
        "<ThemeGrid\n  labels={{\n    presets: {\n      ocean: 'Ocean',\n    },\n  }}\n/>\n\n"
        "<VideoGrid videos={[{ title: 'Launch', links: [{ href: 'https://x.test/v' }] }]} />\n\n"
        "Themes change colours only.\n"
    )
    for mdx in (True, False):
        out = normalise(source, mdx=mdx)
        assert "Pick a theme." in out and "Themes change colours only." in out, out
        assert "Ocean" not in out and "x.test" not in out and "presets" not in out, out


def test_unresolved_embeds_are_reported_as_warnings() -> None:
    warnings: list[str] = []
    normalise("![[Nowhere]]\n\n![[Set up sync#No such heading]]", _index(), warnings=warnings)
    assert len(warnings) == 2
    assert "no note named 'Nowhere'" in warnings[0]
    assert "no such heading" in warnings[1]


def test_embed_cycles_and_self_embeds_stop() -> None:
    index = NoteIndex()
    index.add("a.md", Note("a", "A text.\n\n![[b]]", ""))
    index.add("b.md", Note("b", "B text.\n\n![[a]]", ""))
    out = normalise("A text.\n\n![[b]]", index, self_slug="a")
    assert out.count("A text.") == 1 and out.count("B text.") == 1


def test_embedded_section_is_chunked_under_the_embedding_section() -> None:
    body = normalise("## Moving\n\nSteps:\n\n![[Set up sync#Create a vault]]", _index())
    crumbs = [c.breadcrumb for c in chunk_article("Move", body, 2000, 0)]
    assert "Move › Moving › Create a vault" in crumbs


def test_code_blocks_and_tables_inside_callouts_stay_whole() -> None:
    source = (
        "> [!example] Query\n> ```sql\n> select 1;\n> ```\n>\n"
        "> | Plan | Limit |\n> |---|---|\n> | Free | 1 GB |\n"
    )
    body = normalise(source)
    assert "> ```sql\n> select 1;\n> ```" in body
    assert "> | Plan | Limit |\n> |---|---|\n> | Free | 1 GB |" in body


def test_first_paragraph_skips_headings_labels_and_lists() -> None:
    body = "# Title\n\n**Note**\n\n- item\n\nThe [real](/help/x) *first* paragraph. More."
    assert first_paragraph(body) == "The real first paragraph. More."
    long = "Sentence one is here. " * 30
    assert first_paragraph(long, limit=100).endswith(".")
    assert len(first_paragraph(long, limit=100)) <= 100


def test_a_raw_html_heading_on_its_own_line_heads_a_section() -> None:
    """Jekyll and plain Markdown pages mix in HTML: "<h3>…</h3>" is a heading of the outline,
    not a paragraph, so the section tree splits there and an answer cites that section."""
    source = (
        "# Filters\n\nIntro.\n\n<h3 id='net'>Filter a whole <em>network</em></h3>\n\n"
        "<p>\n  Point your DNS at the filtering resolver.\n</p>\n"
    )
    out = normalise(source)
    assert "### Filter a whole network" in out, out
    sections = build_sections("Filters", out)
    assert any(list(s.path[-1:]) == ["Filter a whole network"] for s in sections), sections
    assert "<" not in out, out


def test_a_definition_lists_terms_head_sections_under_their_heading() -> None:
    """An FAQ written as `<dl>`: each `<dt>` question heads a section one level below the heading
    it sits under, and its `<dd>` answer is that section's text, not one run-on page."""
    source = (
        "## Questions\n\n<dl>\n<dt id='move'>How do I move my library to a new computer?</dt>\n"
        "<dd>Copy the library folder.\n\n- Linux: ~/.local/share/app/library\n</dd>\n\n"
        "<dt>Can I print a page?\n</dt>\n<dd>No, printing is not supported.</dd>\n</dl>\n"
    )
    out = normalise(source)
    assert "### How do I move my library to a new computer?" in out, out
    assert "### Can I print a page?" in out and "<" not in out, out
    sections = build_sections("FAQ", out)
    by_path = {" › ".join(s.path): s for s in sections}
    moving = by_path["Questions › How do I move my library to a new computer?"]
    text = " ".join(b.text for b in moving.blocks)
    assert "Copy the library folder" in text and "printing" not in text, text


def test_a_short_bold_paragraph_heads_the_paragraphs_after_it() -> None:
    source = (
        "## After you cancel\n\n**Until the period ends**\n\nYour stats keep being counted.\n\n"
        "**Once it ends**\n\nYour dashboard is locked.\n\n"
        "**Note: this is a sentence in bold.**\n\nIt stays a paragraph.\n\n"
        "**Options:**\n\n- one\n- two\n"
    )
    out = normalise(source)
    assert "### Until the period ends" in out and "### Once it ends" in out
    assert "**Note: this is a sentence in bold.**" in out  # a sentence, not a heading
    assert "### Options" not in out  # a lead-in
    paths = [s.path for s in build_sections("Cancel", out)]
    assert ["After you cancel", "Once it ends"] in paths


def test_a_bold_line_below_a_third_level_heading_stays_a_paragraph() -> None:
    out = normalise("## A\n\n### B\n\n**Label**\n\nText.\n")
    assert "#### Label" not in out and "**Label**" in out
