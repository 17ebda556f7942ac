"""VitePress's Markdown normalised at load: one row per construct, input → exact Markdown.
Every input is made up for the test."""

from __future__ import annotations

from collections import Counter

import pytest

from app.ingest.dialects import Note, NoteIndex, normalise
from app.ingest.leaks import find_leaks

# (construct, source, normalised Markdown)
CASES: list[tuple[str, str, str]] = [
    (
        "custom containers with and without a title",
        "::: tip\nSync runs every **5 minutes**.\n:::\n\n::: danger STOP\nBack up first.\n:::",
        "> **Tip:** Sync runs every **5 minutes**.\n\n> **STOP:** Back up first.\n",
    ),
    (
        "details blocks in a row are sibling sections named by their titles",
        "## FAQ\n\n::: details Why does sync fail?\nCheck your network.\n:::\n\n"
        "::: details Can I pause it?\nYes, in **Settings**.\n:::",
        "## FAQ\n\n### Why does sync fail?\n\nCheck your network.\n\n### Can I pause it?\n\n"
        "Yes, in **Settings**.\n",
    ),
    (
        "a code group: one tab per fence, named by its label, the label off the fence",
        "## Install\n\n::: code-group\n\n```sh [npm]\nnpm add app\n```\n\n"
        "```sh [pnpm]\npnpm add app\n```\n\n:::\n\nThen start it.",
        "## Install\n\n### npm\n\n```sh\nnpm add app\n```\n\n"
        "### pnpm\n\n```sh\npnpm add app\n```\n\nThen start it.\n",
    ),
    (
        "badge, heading anchor, toc marker and line marks on a fence",
        '# Sync <Badge type="tip" text="beta" />\n\n[[toc]]\n\n## Limits {#limits}\n\n'
        "```ts{2,4-5}\nconst a = 1\n```\n\n```js:line-numbers=3\nrun()\n```",
        "# Sync beta\n\n## Limits\n\n```ts\nconst a = 1\n```\n\n```js\nrun()\n```\n",
    ),
]


@pytest.mark.parametrize(("source", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_construct(source: str, expected: str) -> None:
    counted: Counter[str] = Counter()
    out = normalise(source, removed=counted)
    assert out == expected
    assert find_leaks(out) == []
    assert not counted


def test_a_note_named_toc_is_still_a_link_target() -> None:
    index = NoteIndex()
    index.add("toc.md", Note("toc", "All pages."))
    assert normalise("[[toc]]", index) == "[toc](/help/toc)\n"
