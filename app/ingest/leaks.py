"""The leak detector: template or dialect syntax still in a page after normalisation. Pure.

Run on the Markdown a page is served and indexed from; code (fenced blocks, inline spans) is
not prose and is skipped, since syntax shown on purpose lives there. Each hit names its marker,
line and a short excerpt, so the load log, `make ingest` and `/readyz` can say where to look.
A page with leaks still loads: the count is a number people can watch go down.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from app.ingest.templates import indented_code

MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("{{<", re.compile(r"\{\{[<%].*?[>%]\}\}|\{\{[<%]")),
    ("{%", re.compile(r"\{%.*?%\}|\{%|%\}")),
    ("{{", re.compile(r"\{\{.*?\}\}|\{\{|\}\}")),
    ("%7B%7B", re.compile(r"%7B(?:%7B|%25)|(?:%7D|%25)%7D", re.IGNORECASE)),
    (":::", re.compile(r"^ {0,3}:::")),
    ("!!!", re.compile(r"^ {0,3}(?:!!!|\?\?\?\+?)[ \t]+\w")),
    ('=== "', re.compile(r"^ {0,3}===[+!]?[ \t]+\"")),
    ("--8<--", re.compile(r"-{1,2}8<-{1,2}")),
    ("<Tab", re.compile(r"</?(?:Tabs|TabItem|Tab)\b")),
    ("<Component", re.compile(r"</?[A-Z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")),
    ("<html>", re.compile(r"</?(?:div|span|ul|li|a|br|p|img|i|table|tr|td|details)\b[^<>]*>")),
    ("[!callout]", re.compile(r"^ {0,3}>\s*\[![A-Za-z]")),
    ("[[", re.compile(r"!?\[\[[^\]\n]+\]\]")),
    ("{:", re.compile(r"\{:[^}\n]*\}")),
    ("<%", re.compile(r"<%|%>")),
    (":role:`", re.compile(r"(?<![\w`]):[a-z][\w.+-]*(?::[\w.+-]+)?:`")),  # reStructuredText
    (".. name::", re.compile(r"^ {0,3}\.\. [\w:.+-]+::")),
    ("internal", re.compile("[\x00-\x05]")),
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_QUOTE = re.compile(r"^(?: {0,3}>)+ ?")
_ROLE_SPAN = re.compile(r"(?<![\w`])(:[a-z][\w.+-]*(?::[\w.+-]+)?:)(`+)(?!`).+?(?<!`)\2(?!`)")
# maths is written with braces: $…$, $$…$$, \(…\), \[…\], [$]…[/$], [latex]…[/latex]
_MATH = re.compile(
    r"\$\$.+?\$\$|(?<![\w$])\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]"
    r"|\[(\$\$?|latex)\].*?\[/\1\]"
)


@dataclass(frozen=True, slots=True)
class Leak:
    """One marker left in a page: which, on which line of the body, and the text around it."""

    marker: str
    line: int
    excerpt: str


def find_leaks(markdown: str) -> list[Leak]:
    """Every template or dialect marker left in `markdown` outside code."""
    found: list[Leak] = []
    fence = ""
    lines = markdown.split("\n")
    code = indented_code(lines)
    for number, line in enumerate(lines, start=1):
        if number - 1 in code:
            continue
        m = _FENCE.match(_QUOTE.sub("", line))  # a fence inside a callout is code too
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        line = _ROLE_SPAN.sub(r"\1`", line)  # a role's `text` is no code span: keep the role
        prose = _MATH.sub("", _INLINE_CODE.sub("", line))
        shown = prose
        for marker, pattern in MARKERS:
            for hit in pattern.finditer(prose):
                start = max(hit.start() - 20, 0)
                found.append(Leak(marker, number, shown[start : hit.end() + 30].strip()))
            # a construct counts once, under its most specific marker
            prose = pattern.sub(lambda h: " " * len(h.group(0)), prose)
    return found


def summarise(leaks: list[Leak]) -> str:
    """`3 leaked markers ({% ×2, ::: ×1); first at line 4: "…"`."""
    if not leaks:
        return "no leaked markers"
    counts = Counter(leak.marker for leak in leaks)
    kinds = ", ".join(f"{m} ×{n}" for m, n in counts.most_common())
    first = leaks[0]
    noun = "marker" if len(leaks) == 1 else "markers"
    return f"{len(leaks)} leaked {noun} ({kinds}); first at line {first.line}: {first.excerpt!r}"


def leak_report(pages: dict[str, str], limit: int = 50) -> dict[str, object]:
    """Leaks over a corpus (`{slug or path: markdown}`) for `/readyz` and reports: totals, then
    the worst `limit` pages with their markers and first excerpt."""
    per_page = {name: found for name, body in pages.items() if (found := find_leaks(body))}
    worst = sorted(per_page.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:limit]
    return {
        "markers": sum(len(v) for v in per_page.values()),
        "pages": len(per_page),
        "pagesChecked": len(pages),
        "byPage": {
            name: {
                "count": len(found),
                "markers": dict(Counter(leak.marker for leak in found)),
                "first": f"line {found[0].line}: {found[0].excerpt}",
            }
            for name, found in worst
        },
    }
