"""A document that repeats the pages beside it is a copy of them (a print or PDF export), not a
page of its own: serving it makes answers cite the copy instead of the page.

The rule, measured on the zoo (eight public help centers) in docs/your-docs.md: a
PDF loaded together with pages of another format (Markdown, MDX, HTML, reStructuredText) is a copy
when at least half of its distinct five-word runs also occur in those pages. Only PDFs are judged,
because pages of a site legitimately repeat each other: the same test on every page would have
dropped real pages on seven of the eight sites (sibling install pages, boilerplate intros; the
counts are in docs/your-docs.md), while a PDF among Markdown pages is an asset offered for
download. A PDF-only folder has nothing to repeat, and a manual beside unrelated pages repeats
little of them, so both are served as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

COPY_SHARE = 0.5  # "mostly repeats": more than half of the document's text is already a page
RUN = 5  # words per run: long enough that shared boilerplate phrases rarely make a match
_WORD = re.compile(r"[^\W_]+")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_APOSTROPHES = str.maketrans({"\u2019": " ", "\u02bc": " ", "\u2018": " ", "'": " "})


def runs(text: str) -> set[str]:
    """The distinct runs of `RUN` consecutive words in `text`, lowercased, markup left out."""
    plain = unicodedata.normalize("NFKC", _COMMENT.sub(" ", text)).translate(_APOSTROPHES)
    words = _WORD.findall(plain.lower())
    return {" ".join(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def repeated_share(text: str, pages: set[str]) -> float:
    """The share of `text`'s word runs found in `pages` (the runs of the other documents)."""
    own = runs(text)
    return len(own & pages) / len(own) if own else 0.0


def print_copies(
    candidates: Mapping[str, str], pages: Iterable[str], share: float = COPY_SHARE
) -> dict[str, float]:
    """The candidates (name → text) whose text mostly repeats `pages`, with the repeated share."""
    known: set[str] = set()
    for page in pages:
        known |= runs(page)
    found = {name: repeated_share(text, known) for name, text in candidates.items()}
    return {name: value for name, value in found.items() if value >= share}
