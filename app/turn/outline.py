"""A procedure's outline: the numbered sections of the article a how-to question landed in. Pure.

Help articles often spread one procedure over sections headed "Step 1: …", "Step 2: …" (or
"Schritt 1", "Étape 1", "1. …"), one chunk each. A broad how-to question ("How do I set up SSO
with Okta?") then retrieves two or three of those chunks, and an extract from whichever ranks
first answers with one step out of five. The outline lists the steps in the article's order,
with the article's sentences that name what the question names and no retrieved passage of the
article holds (the Okta note under step 2).

The outline is for broad questions only, ones the article's *title* answers better than any one
step: when one step's heading covers at least half of what the question asks (its content terms
other than names: "How do I test SSO?" → "Step 4: Test"), or a step's headings (its own and its
sub-sections') name at least as many of the question's terms that the title does not hold as the
title names ("How do I invite people to the workspace?" in "Getting started with the workspace" →
"Step 3: Invite your colleagues"; "How do I book a desk?" → "Step 5 › Booking a desk"), that
step's passage answers it and no outline is made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from app.language.text import content_terms, sentences, term_set
from app.providers.chat.base import Outline
from app.search.answer_types import asks_for_steps, named_terms
from app.store.models import Chunk
from tuning import TUNING

# "Step 1: Copy the details", "Schritt 2 – …", "Étape 3 : …", "4. Test", "5) Turn it on"
_STEP: Final = re.compile(
    r"^\s*(?:(?:step|schritt|[ée]tape|phase)\s*(?P<n>\d{1,2})|(?P<m>\d{1,2})[.)])\s*[:.–—-]?\s*"
    r"(?P<title>.*)$", re.IGNORECASE,
)  # fmt: skip
MIN_STEPS: Final = TUNING.answer_selection.outline_min_steps
MAX_NOTES: Final = TUNING.answer_selection.outline_max_notes
_MARKUP: Final = re.compile(r"\*\*|__|`")


def _section(breadcrumb: str) -> str:
    parts = [p.strip() for p in breadcrumb.split("›")]
    return parts[1] if len(parts) > 1 else ""


def _step_headings(chunks: Sequence[Chunk]) -> dict[str, set[str]]:
    """Each top-level section's heading terms, with those of the sub-sections under it."""
    out: dict[str, set[str]] = {}
    for c in chunks:
        parts = [p.strip() for p in c.breadcrumb.split("›")]
        if len(parts) > 1:
            step = _STEP.match(parts[1])
            own = step.group("title") if step else parts[1]
            out.setdefault(parts[1], set()).update(term_set(" ".join([own, *parts[2:]])))
    return out


def steps_of(chunks: Sequence[Chunk]) -> list[tuple[int, str]]:
    """The article's numbered sections in order, (number, heading), when they count 1, 2, 3…
    and there are at least `MIN_STEPS`; else []."""
    seen: list[str] = []
    for c in sorted(chunks, key=lambda c: c.chunk_index):
        section = _section(c.breadcrumb)
        if section and section not in seen:
            seen.append(section)
    steps: list[tuple[int, str]] = []
    for section in seen:
        m = _STEP.match(section)
        if m is None:
            continue
        n = int(m.group("n") or m.group("m"))
        steps.append((n, section))
    numbers = [n for n, _ in steps]
    if len(steps) < MIN_STEPS or numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return []
    return steps


def _clean(line: str) -> str:
    return _MARKUP.sub("", re.sub(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+", "", line)).strip()


def procedure_outline(
    question: str, chunks: Sequence[Chunk], retrieved_text: str
) -> Outline | None:
    """The outline of the article `chunks` make up for `question`, or None (no numbered
    sections, or one step's heading is what the question asks about). `retrieved_text` is the
    text of the article's passages the turn already retrieved: a note repeats none of it."""
    steps = steps_of(chunks)
    if not steps:
        return None
    named = set(named_terms(question))
    wanted = content_terms(question)
    asked = [t for t in wanted if t not in named]
    for _, heading in steps:
        step = _STEP.match(heading)
        words = term_set(step.group("title") if step else heading)
        if asked and sum(1 for t in asked if t in words) * 2 >= len(asked):
            return None  # the question is about this step
    article = chunks[0].title or chunks[0].breadcrumb.split("›")[0].strip()
    title = term_set(article)
    by_title = sum(1 for t in wanted if t in title)
    beyond = [t for t in asked if t not in title]  # what the question asks besides the subject
    headings = _step_headings(chunks)
    for _, heading in steps:
        if by_title <= sum(1 for t in beyond if t in headings.get(heading, set())):
            return None  # one step (or a sub-section of it) names the question as well
    held = term_set(retrieved_text)
    missing = [t for t in named if t not in held]
    notes: list[str] = []
    for c in sorted(chunks, key=lambda c: c.chunk_index):
        for line in c.text.splitlines():
            for s in sentences(_clean(line)) if line.strip() else ():
                if len(notes) < MAX_NOTES and s not in notes and term_set(s) & set(missing):
                    notes.append(s)
    labels = []
    for _, heading in steps:
        m = _STEP.match(heading)
        labels.append((m.group("title") if m else "").strip() or heading)
    return Outline(title=article, steps=tuple(labels), notes=tuple(notes))


MIN_SECTIONS: Final = TUNING.answer_selection.overview_min_sections
MAX_SECTIONS: Final = TUNING.answer_selection.overview_max_sections


_LIST_ITEM: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
_LINK: Final = re.compile(r"\[([^\]]+)\]\([^)\s]+\)")  # [text](target) → text
MAX_ITEMS: Final = TUNING.answer_selection.summary_max_items
MAX_ITEM_WORDS: Final = TUNING.answer_selection.summary_max_words


def _first_statement(text: str) -> str:
    """A section's first sentence; when the section opens with a list, its first items joined
    ("Room Panel: 2 years; Desk Tag: 1 year"; up to `MAX_ITEMS`, and no more words than
    `MAX_ITEM_WORDS` after the first): one item of a list of warranty periods would read as the
    whole answer. Markdown links keep their text."""
    lines = [
        _LINK.sub(r"\1", ln)
        for ln in text.splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    if not lines:
        return ""
    lead = ""
    if not _LIST_ITEM.match(lines[0]):
        first = next((s for s in sentences(_clean(lines[0]))), "")
        if not first.endswith(":") or len(lines) < 2 or not _LIST_ITEM.match(lines[1]):
            return first or next((s for ln in lines for s in sentences(_clean(ln))), "")
        lead, lines = first + " ", lines[1:]  # "can be powered in two ways:" and its list
    items: list[str] = []
    for ln in lines:
        if not _LIST_ITEM.match(ln) or len(items) == MAX_ITEMS:
            break
        if items and sum(len(i.split()) for i in items) + len(ln.split()) > MAX_ITEM_WORDS:
            break
        items.append(_clean(ln).rstrip(".;"))
    return lead + "; ".join(items) + "."


def names_the_title(question: str, title: str, extra: int = 1) -> bool:
    """Whether the question names every content term of the article's title and at most
    `extra` more terms besides (the first test of `article_overview`, cheap enough for every
    turn). A how-to question gets no extra term: "How do I change the battery in a desk tag?"
    in "Desk Tag batteries" asks for one procedure (changing), not the whole article."""
    named = set(content_terms(title))
    asked = set(content_terms(question))
    return bool(named) and named <= asked and len(asked - named) <= extra


def article_overview(question: str, chunks: Sequence[Chunk]) -> Outline | None:
    """Each section of the article `chunks` make up, as its heading and its first sentence, when
    `question` asks about the article's whole subject ("What is your refund policy?" in "Refund
    policy"); else None.

    The question must name every content term of the title and at most one more, and that one
    no section heading names ("What is the refund policy for hardware?" asks about one section,
    which the extract answers). The article needs at least `MIN_SECTIONS` sections with text;
    at most `MAX_SECTIONS` are listed, in the article's order. The lead-in before the first
    heading is left out: it introduces the page ("This page describes…") rather than stating
    the policy. A question for steps gets this only when the article has no numbered steps
    for the procedure outline (`engine._with_outline` tries that first).
    """
    if not chunks:
        return None
    article = chunks[0].title or chunks[0].breadcrumb.split("›")[0].strip()
    # a how-to reads the guide's top-level sections ("Planning the installation"), a policy
    # question each rule ("Annual plans"): a guide's troubleshooting sub-sections are no steps
    top_level = asks_for_steps(question)
    if not names_the_title(question, article, 0 if top_level else 1):
        return None
    title = set(content_terms(article))
    asked = set(content_terms(question))
    headings: set[str] = set()
    firsts: dict[str, str] = {}
    order: list[str] = []
    for c in sorted(chunks, key=lambda c: c.chunk_index):
        parts = [p.strip() for p in c.breadcrumb.split("›")]
        if len(parts) < 2:
            continue
        headings |= term_set(" ".join(parts[1:]))
        label = parts[1] if top_level else parts[-1]
        if label in firsts or getattr(c, "kind", "prose") == "table":
            continue
        first = _first_statement(c.text)
        if first:
            firsts[label] = first
            order.append(label)
    if (asked - title) & headings or len(order) < MIN_SECTIONS:
        return None
    lines = tuple(f"{label}: {firsts[label]}" for label in order[:MAX_SECTIONS])
    return Outline(title=article, steps=lines, kind="overview")
