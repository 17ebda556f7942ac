"""Structure-aware chunking of a markdown article body. Pure: no I/O.

Rules:
- Sections start at H2/H3 (a later H1 counts as H2; an H1 on the first line is the title and is
  dropped). Each chunk's breadcrumb is `Title › Section › Sub`, and its text starts with its
  nearest heading line (`# Title` for text before the first section) so it embeds well on its own.
- A section longer than `max_chars` is packed paragraph by paragraph, then sentence by sentence,
  then word by word, and each continuation starts with the tail of the previous piece (at most
  `overlap` characters, cut at a sentence or line boundary, else a word boundary).
- A markdown table is never split: it becomes its own `kind="table"` chunk (heading line + table).
  A table, or a code fence, longer than `max_chars` is kept whole anyway: half a table or half a
  code sample answers nothing, so these are the only chunks allowed to exceed `max_chars`.
- Headings inside code fences are not headings. Sections with no text produce no chunk.
- Page markers (`<!-- page N -->` lines, written by the PDF loader) are dropped from the text;
  each chunk records the page its own text starts on (a continuation's carried-over tail does
  not count), so a citation can link to that page. Bodies without markers have no pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from app.ingest.sections import closes_fence

BREADCRUMB_SEP = " › "

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[^\sa-z])")
_BLANK = re.compile(r"\n[ \t]*\n")
_PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$")

ChunkKind = Literal["prose", "table"]


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """One chunk before embedding: its text, where it sits in the article, and its kind."""

    text: str
    breadcrumb: str
    kind: ChunkKind = "prose"
    page: int | None = None


@dataclass(slots=True)
class _Section:
    heading_line: str
    path: list[str]
    lines: list[str]
    page: int | None = None  # the page in effect where the section starts


@dataclass(frozen=True, slots=True)
class _Block:
    kind: Literal["text", "table", "fence"]
    text: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class _Unit:
    """An atomic piece to pack: `sep` joins it to the previous unit in the same chunk."""

    text: str
    sep: str
    fence: bool = False
    page: int | None = None


def chunk_article(title: str, body: str, max_chars: int, overlap: int) -> list[ChunkDraft]:
    """Split an article body into chunks that respect its headings, tables and code fences."""
    if max_chars <= 0 or overlap < 0:
        raise ValueError("max_chars must be positive and overlap non-negative")
    title = title.strip()
    chunks: list[ChunkDraft] = []
    for section in _sections(title, body):
        breadcrumb = BREADCRUMB_SEP.join([title, *section.path])
        prefix = section.heading_line + "\n\n"
        prose: list[_Block] = []
        for block in _blocks(section.lines, section.page):
            if block.kind == "table":
                lead = _lead_in(prose)
                if lead is None:
                    chunks.extend(_pack_prose(prose, prefix, breadcrumb, max_chars, overlap))
                prose = []
                text = prefix + (lead + "\n\n" if lead else "") + block.text
                chunks.append(ChunkDraft(text, breadcrumb, "table", block.page))
            else:
                prose.append(block)
        chunks.extend(_pack_prose(prose, prefix, breadcrumb, max_chars, overlap))
    return chunks


LEAD_IN_MAX_CHARS = 300  # "The table lists…", "Delivery times are counted in business days…"


def _lead_in(prose: list[_Block]) -> str | None:
    """The short text that introduces a table (all the section's prose since its heading or the
    previous table, at most `LEAD_IN_MAX_CHARS`), which then goes into the table's chunk instead
    of a chunk of its own: a one-sentence chunk matches nothing, and the table loses what its
    columns mean. None when there is no such text, or it is longer, or holds a code fence."""
    if not prose or any(b.kind != "text" for b in prose):
        return None
    text = "\n\n".join(b.text.strip() for b in prose if b.text.strip())
    return text if text and len(text) <= LEAD_IN_MAX_CHARS else None


def _sections(title: str, body: str) -> list[_Section]:
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None:
        m = _HEADING.match(lines[first])
        if m and len(m.group(1)) == 1:
            lines = lines[first + 1 :]

    sections = [_Section(f"# {title}", [], [])]
    h2: str | None = None
    fence: str | None = None
    page: int | None = None
    for line in lines:
        fence_match = _FENCE.match(line)
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            sections[-1].lines.append(line)
            continue
        if fence_match:
            fence = fence_match.group(1)
            sections[-1].lines.append(line)
            continue
        if page_match := _PAGE_MARKER.match(line.strip()):
            page = int(page_match.group(1))
            sections[-1].lines.append(line)
            continue
        m = _HEADING.match(line)
        if m and len(m.group(1)) <= 3:
            level, text = max(len(m.group(1)), 2), m.group(2).strip()
            if level == 2:
                h2 = text
                path = [text]
            else:
                path = [h2, text] if h2 else [text]
            sections.append(_Section(f"{'#' * level} {text}", path, [], page))
        else:
            sections[-1].lines.append(line)
    return sections


def _is_table_start(lines: list[str], i: int) -> bool:
    if "|" not in lines[i] or i + 1 >= len(lines):
        return False
    separator = lines[i + 1]
    return "|" in separator and "-" in separator and bool(_TABLE_SEPARATOR.match(separator))


def _blocks(lines: list[str], page: int | None = None) -> list[_Block]:
    """Group a section's lines into text runs, tables and code fences, in order; a page marker
    ends a text run and sets the page of the blocks after it."""
    blocks: list[_Block] = []
    text: list[str] = []
    text_page = page

    def flush_text() -> None:
        joined = "\n".join(text).strip()
        if joined:
            blocks.append(_Block("text", joined, text_page))
        text.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if page_match := _PAGE_MARKER.match(line.strip()):
            flush_text()
            page = text_page = int(page_match.group(1))
            i += 1
        elif fence_match:
            flush_text()
            marker = fence_match.group(1)
            j = i + 1
            while j < len(lines):
                if closes_fence(lines[j], marker):
                    break
                j += 1
            blocks.append(_Block("fence", "\n".join(lines[i : j + 1]).rstrip(), page))
            i = j + 1
        elif _is_table_start(lines, i):
            flush_text()
            j = i + 2
            while j < len(lines) and lines[j].strip() and "|" in lines[j]:
                j += 1
            blocks.append(_Block("table", "\n".join(s.strip() for s in lines[i:j]), page))
            i = j
        else:
            if not text:
                text_page = page
            text.append(line)
            i += 1
    flush_text()
    return blocks


def _units(blocks: list[_Block], budget: int) -> list[_Unit]:
    """Break prose into pieces no longer than `budget`: paragraphs, else sentences, else words."""
    units: list[_Unit] = []
    for block in blocks:
        if block.kind == "fence":
            units.append(_Unit(block.text, "\n\n", fence=True, page=block.page))
            continue
        for para in _BLANK.split(block.text):
            para = para.strip()
            if not para:
                continue
            if len(para) <= budget:
                units.append(_Unit(para, "\n\n", page=block.page))
                continue
            sep = "\n\n"
            for line in para.split("\n"):
                for sentence in _SENTENCE_END.split(line.strip()):
                    for piece in _split_words(sentence, budget):
                        units.append(_Unit(piece, sep, page=block.page))
                        sep = " "
                sep = "\n"
    return units


def _split_words(text: str, budget: int) -> list[str]:
    if len(text) <= budget:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for word in text.split():
        while len(word) > budget:  # a single "word" longer than the budget (a URL, a hash)
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:budget])
            word = word[budget:]
        if current and len(current) + 1 + len(word) > budget:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def _tail(text: str, overlap: int) -> str:
    """The end of `text`, at most `overlap` chars, starting at a sentence or line (else word)
    boundary, with a bold span cut in half reopened."""
    if overlap <= 0 or not text:
        return ""
    window = text[-overlap:]
    if len(window) == len(text):
        return ""  # carrying the whole previous piece would only duplicate it
    sentence = _SENTENCE_END.search(window)
    line = window.find("\n")
    starts = [
        m for m in (sentence.end() if sentence else -1, line + 1 if line >= 0 else -1) if m > 0
    ]
    if starts:
        tail = window[min(starts) :].strip()
    else:
        space = re.search(r"\s", window)
        tail = window[space.end() :].strip() if space else ""
    # a cut inside **bold** leaves its closing marker dangling: reopen it
    return f"**{tail}" if tail.count("**") % 2 else tail


def _pack_prose(
    blocks: list[_Block], prefix: str, breadcrumb: str, max_chars: int, overlap: int
) -> list[ChunkDraft]:
    if not blocks:
        return []
    budget = max(max_chars - len(prefix), 1)
    drafts: list[ChunkDraft] = []
    current = ""
    page: int | None = None
    last_fence = False
    for unit in _units(blocks, budget):
        if not current:
            current, last_fence, page = unit.text, unit.fence, unit.page
            continue
        if len(current) + len(unit.sep) + len(unit.text) <= budget:
            current += unit.sep + unit.text
            last_fence = unit.fence
            continue
        drafts.append(ChunkDraft(prefix + current, breadcrumb, page=page))
        room = min(overlap, budget - len(unit.sep) - len(unit.text))
        carry = "" if last_fence or unit.fence else _tail(current, room)
        current = carry + unit.sep + unit.text if carry else unit.text
        last_fence, page = unit.fence, unit.page
    if current:
        drafts.append(ChunkDraft(prefix + current, breadcrumb, page=page))
    return drafts
