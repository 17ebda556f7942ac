"""Each block kind answers whole through the HTTP API (issue 38): a docs folder served with
ARTICLES_DIR, one question per kind, the stored reply read back.

The article is written for these tests: a procedure (ordered list), a plans table, a paragraph
holding a value, a command in a code block and per-platform tab panels (`#### On Android` is how
the dialects layer writes a tab). Each question's reply must quote its block as the block reads
(a list whole, the one table row with its column names, the code fenced, the platform's panel
and not the other's), under the section's heading path, and nothing from the other sections.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.apihelp import Api, running_app
from tests.test_select import GUIDE

pytestmark = pytest.mark.slow  # the real MiniLM

ARTICLE = "---\ntitle: Field notes app\nslug: field-notes\n---\n" + GUIDE.split("\n", 1)[1]

# a comparison's evidence: one item of the list on each role, no sentence naming both
ROLES = """---
title: Sharing a vault
slug: sharing
---

Field notes lets you share a vault with the people you work with.

## Roles

Each person you invite has one role:

1. **Owner** manages the vault, its members and the subscription.
2. **Writer** can add, edit and delete notes.
3. **Commenter** can read every note and leave comments.
4. **Reader** can only open the notes shared with them.
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("docs")
    (folder / "field-notes.md").write_text(ARTICLE, encoding="utf-8")
    (folder / "sharing.md").write_text(ROLES, encoding="utf-8")
    with running_app(
        articles_dir=folder,
        seed_on_start=True,
        embedder="local",  # the bands come from MiniLM's sentence match, as in production
        embedded_store="memory",
        embedding_cache_dir=None,
    ) as api:
        yield api


def _reply(api: Api, question: str) -> tuple[str, dict[str, Any]]:
    got = api.ask(question)
    return str(got["content"]), dict(got["meta"])


def test_a_how_to_gets_the_whole_ordered_list(api: Api) -> None:
    text, meta = _reply(api, "How do I install Field notes?")
    assert "Field notes app › Install" in text, text
    steps = ["1. Download the installer.", "2. Run it:", "3. Sign in."]
    assert all(s in text for s in steps), text
    assert text.index(steps[0]) < text.index(steps[1]) < text.index(steps[2])
    assert "./install.sh --quiet" in text  # the step's command comes with it
    assert meta["confidence"] != "none", meta.get("confidenceReason")


def test_a_price_is_the_table_row_with_its_column_names(api: Api) -> None:
    text, _ = _reply(api, "How much does the Plus plan cost?")
    assert "Plan: Plus; Price: $8 per month; Devices: 5" in text, text
    assert "Team" not in text and "Basic" not in text, text


def test_a_value_is_the_sentence_of_the_paragraph_that_holds_it(api: Api) -> None:
    text, _ = _reply(api, "How long does it take for a change to reach my other devices?")
    assert "A change reaches other devices within 30 seconds." in text, text
    assert "Download the installer" not in text and "Plan:" not in text, text


def test_a_command_is_quoted_as_code_with_the_line_that_leads_into_it(api: Api) -> None:
    text, _ = _reply(api, "How do I export a vault from a script?")
    assert "To export a vault from a script, call:" in text, text
    assert "```\nfieldnotes export --vault work --out work.zip\n```" in text, text


def test_a_platform_question_gets_that_platforms_tab_panel(api: Api) -> None:
    text, _ = _reply(api, "How do I install it on Android?")
    assert "On Android" in text and "Open the Play Store." in text, text
    assert "App Store" not in text, text


def test_a_comparison_is_answered_from_the_list_naming_both(api: Api) -> None:
    """Each role is one item and no sentence names both: read one statement at a time, neither
    looked like the answer and the question was handed to a person."""
    text, meta = _reply(api, "How is a Writer different from a Reader?")
    assert meta["confidence"] != "none", meta.get("confidenceReason")
    assert "Writer can add, edit and delete notes" in text, text
    assert "Reader can only open the notes shared with them" in text, text
