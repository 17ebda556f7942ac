"""A PDF to markdown with page markers, tables and headings (pdfplumber).

Chosen over pypdf and PyMuPDF by `python -m scripts.studies.pdf_tables` (docs/your-docs.md, "Bring
your content"): pdfplumber and PyMuPDF both recover ruled tables cell for cell, pypdf finds no
tables at all, and pdfplumber is MIT-licensed pure Python over pdfminer.six (PyMuPDF is AGPL).

What comes out, page by page:
- a `<!-- page N -->` marker line before each page's content, which the chunker turns into each
  chunk's page (citations link `/help/<slug>#page=N`) and the help page into an anchor;
- headings from the PDF's outline (bookmarks) when at least half its entries are lines of their
  page, else from font sizes: short lines set clearly larger than the body text; the top level
  becomes the title when it is used once;
- tables, as markdown tables (the chunker keeps each whole, `kind: table`): those drawn with
  rules from pdfplumber's table finder, those drawn without from runs of 3+ lines whose cells
  start at the same x positions;
- two-column pages read column by column (a vertical gutter no word crosses), not across;
- bare page-number lines dropped; bulleted and numbered lines as list items; other text that
  would read as markdown syntax (a `# comment` line of a code sample) escaped;
- words split where the gap exceeds a share of the font size (not pdfplumber's fixed 3 pt);
- pages with images but no text layer (scans) listed in `scanned_pages`, to be reported: their
  content is not searchable until someone runs OCR on the file.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

PAGE_MARKER = re.compile(r"^<!-- page (\d+) -->$")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_GENERIC_TITLES = frozenset({"", "untitled", "anonymous", "unknown", "microsoft word"})
# Word breaks: a gap wider than this share of the font size. pdfplumber's default (a fixed 3 pt)
# glued whole sentences together in PDFs that position glyphs without space characters (two
# GNU manuals here: 1,073 → 1,925 words on their first 8 pages; single letters unchanged).
_X_TOLERANCE_RATIO = 0.15
_TOC_LINE = re.compile(r"(?:\.\s*){4,}\d+$|\s\.{2,}\s*\d+$")  # "Intro ....... 3"
_MARKDOWN_START = re.compile(r"^(?:#|>|<|```|~~~|\||[+*=] )")
# a bullet glyph; `(cid:N)` is pdfminer's name for a glyph the font does not map to text, which
# at the start of a line is almost always the bullet of a symbol font
_BULLET = re.compile(r"^(?:[•▪◦●‣∙·–-]|\(cid:\d+\))\s+")
_NUMBERED = re.compile(r"^\d{1,2}[.)]\s+")


class PdfError(ValueError):
    """The file is not a PDF this loader can read (damaged, encrypted, not a PDF)."""


@dataclass
class PdfText:
    """A PDF as markdown, plus what a report should say about it."""

    body: str
    title: str | None = None
    summary: str = ""
    tags: list[str] = field(default_factory=list)
    pages: int = 0
    tables: int = 0
    scanned_pages: list[int] = field(default_factory=list)
    headings_from: str = "none"  # outline | font sizes | none


@dataclass
class _Line:
    text: str
    top: float
    bottom: float
    x0: float
    x1: float
    size: float
    cells: list[tuple[float, str]] = field(default_factory=list)  # (x0, text) split at wide gaps


@dataclass
class _Item:
    top: float
    line: _Line | None = None
    table: str | None = None


def page_marker(page: int) -> str:
    """The marker line that starts page `page` of a converted PDF body."""
    return f"<!-- page {page} -->"


def pdf_to_markdown(raw: bytes) -> PdfText:
    """Convert PDF bytes; raises `PdfError` when the file cannot be read at all."""
    import pdfplumber
    from pdfminer.pdfparser import PDFSyntaxError

    try:
        pdf = pdfplumber.open(io.BytesIO(raw))
    except (PDFSyntaxError, ValueError, TypeError, KeyError) as exc:
        raise PdfError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # pdfminer raises bare exceptions for encrypted files
        raise PdfError(f"not a readable PDF ({exc or type(exc).__name__})") from None
    with pdf:
        try:
            return _convert(pdf)
        except PdfError:
            raise
        except Exception as exc:  # a damaged page: say so rather than crash the whole folder
            raise PdfError(f"cannot read the PDF: {exc or type(exc).__name__}") from None


def _convert(pdf: Any) -> PdfText:
    pages: list[list[_Item]] = []
    out = PdfText(body="", pages=len(pdf.pages))
    sizes: Counter[float] = Counter()
    for number, page in enumerate(pdf.pages, 1):
        if not page.chars:
            if page.images:
                out.scanned_pages.append(number)
            pages.append([])
            continue
        items, tables = _page_items(page)
        out.tables += tables
        pages.append(items)
        for ch in page.chars:
            sizes[round(float(ch["size"]), 1)] += 1
    body_size = sizes.most_common(1)[0][0] if sizes else 0.0
    outline = _outline(pdf)
    levels = _outline_levels(pages, outline)
    out.headings_from = "outline"
    if len(levels) * 2 < len(outline) or not levels:
        # no outline, or one whose titles mostly are not lines of the page (wrapped, renamed)
        levels = _font_size_levels(pages, body_size)
        out.headings_from = "font sizes" if levels else "none"
    out.title = _title(pdf, pages, levels)
    blocks: list[str] = []
    for number, items in enumerate(pages, 1):
        if not items:
            continue
        blocks.append(page_marker(number))
        blocks.extend(_page_blocks(items, number, levels, out.title))
    out.body = "\n\n".join(blocks)
    out.summary = next(
        (b for b in blocks if not b.startswith(("#", "|", "<!--")) and len(b) > 20), ""
    )[:300]
    keywords = str(_meta(pdf, "Keywords") or "")
    out.tags = [t.strip().lower() for t in re.split(r"[,;]", keywords) if t.strip()]
    return out


def _meta(pdf: Any, key: str) -> str | None:
    value = (pdf.metadata or {}).get(key)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _SPACE.sub(" ", str(value)).strip() if value else None


def _page_items(page: Any) -> tuple[list[_Item], int]:
    """A page's lines and tables in reading order (tables by their top edge)."""
    tables = [t for t in page.find_tables() if _table_shape_ok(t)]
    boxes = [t.bbox for t in tables]

    def outside(obj: dict[str, Any]) -> bool:
        cx, cy = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)

    words = [
        w
        for w in page.extract_words(extra_attrs=["size"], x_tolerance_ratio=_X_TOLERANCE_RATIO)
        if outside(w)
    ]
    items = _aligned_tables(_reading_order(words, float(page.width)))
    for table, box in zip(tables, boxes, strict=True):
        md = _table_markdown(table.extract(x_tolerance_ratio=_X_TOLERANCE_RATIO))
        if md:
            at = next((i for i, it in enumerate(items) if it.top > box[1]), len(items))
            items.insert(at, _Item(box[1], table=md))
    return items, sum(1 for it in items if it.table)


def _table_shape_ok(table: Any) -> bool:
    rows = table.extract()
    return len(rows) >= 2 and max((len(r) for r in rows), default=0) >= 2


def _table_markdown(rows: list[list[str | None]]) -> str:
    cells = [[_SPACE.sub(" ", c or "").strip().replace("|", "\\|") for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if len(cells) < 2:
        return ""
    width = max(len(r) for r in cells)
    keep = [c for c in range(width) if any(c < len(r) and r[c] for r in cells)]
    grid = [[r[c] if c < len(r) else "" for c in keep] for r in cells]
    lines = ["| " + " | ".join(grid[0]) + " |", "|" + "|".join(" --- " for _ in keep) + "|"]
    lines.extend("| " + " | ".join(r) + " |" for r in grid[1:])
    return "\n".join(lines)


def _group_lines(words: list[dict[str, Any]]) -> list[_Line]:
    """Words sharing a baseline (within a small tolerance) form a line, left to right."""
    lines: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - w["top"]) <= 2.0:
            lines[-1].append(w)
        else:
            lines.append([w])
    out = []
    for ws in lines:
        ws.sort(key=lambda w: w["x0"])
        size = max(float(w.get("size", 0.0)) for w in ws)
        cells: list[tuple[float, str]] = []
        for i, w in enumerate(ws):
            if i and w["x0"] - ws[i - 1]["x1"] <= max(size * 1.2, 6.0):
                cells[-1] = (cells[-1][0], f"{cells[-1][1]} {w['text']}")
            else:
                cells.append((float(w["x0"]), str(w["text"])))
        out.append(
            _Line(
                text=" ".join(w["text"] for w in ws),
                top=min(w["top"] for w in ws),
                bottom=max(w["bottom"] for w in ws),
                x0=ws[0]["x0"],
                x1=ws[-1]["x1"],
                size=size,
                cells=cells,
            )
        )
    return out


def _aligned_tables(lines: list[_Line]) -> list[_Item]:
    """Lines in order, with each run of 3+ lines whose cells (2+) start at the same x positions
    turned into one markdown table: a table drawn without rules."""
    items: list[_Item] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and _same_columns(lines[i], lines[j + 1]):
            j += 1
        if len(lines[i].cells) >= 2 and j - i + 1 >= 3:
            md = _table_markdown([[c for _, c in ln.cells] for ln in lines[i : j + 1]])
            items.append(_Item(lines[i].top, table=md))
            i = j + 1
        else:
            items.append(_Item(lines[i].top, line=lines[i]))
            i += 1
    return items


def _same_columns(a: _Line, b: _Line) -> bool:
    return (
        len(a.cells) >= 2
        and len(a.cells) == len(b.cells)
        and all(abs(x - y) <= 3.0 for (x, _), (y, _) in zip(a.cells, b.cells, strict=True))
    )


def _gutter(words: list[dict[str, Any]], width: float) -> float | None:
    """The x of a vertical gap near the middle that no word crosses, with text on both sides
    on at least three shared lines: a two-column page."""
    if len(words) < 12:
        return None
    best: tuple[float, float] | None = None  # (clearance, x)
    for step in range(int(width * 0.3), int(width * 0.7), 2):
        x = float(step)
        if any(w["x0"] < x < w["x1"] for w in words):
            continue
        left = {round(w["top"]) for w in words if w["x1"] <= x}
        right = {round(w["top"]) for w in words if w["x0"] >= x}
        if len(left & right) < 3:
            continue
        gap = min((w["x0"] for w in words if w["x0"] >= x), default=x) - max(
            (w["x1"] for w in words if w["x1"] <= x), default=x
        )
        if gap >= 12 and (best is None or gap > best[0]):
            best = (gap, x)
    return best[1] if best else None


def _reading_order(words: list[dict[str, Any]], width: float) -> list[_Line]:
    """Lines top to bottom; on a two-column page, text above the columns, then the left column,
    then the right, then text below them."""
    gutter = _gutter(words, width)
    if gutter is None:
        return _group_lines(words)
    left = _group_lines([w for w in words if w["x1"] <= gutter])
    right = _group_lines([w for w in words if w["x0"] >= gutter])
    shared = {round(a.top) for a in left} & {round(b.top) for b in right}
    start, end = min(shared), max(shared)
    above = [ln for ln in left + right if round(ln.top) < start]
    below = [ln for ln in left + right if round(ln.top) > end]
    middle_left = [ln for ln in left if start <= round(ln.top) <= end]
    middle_right = [ln for ln in right if start <= round(ln.top) <= end]
    return (
        sorted(above, key=lambda ln: (ln.top, ln.x0))
        + middle_left
        + middle_right
        + sorted(below, key=lambda ln: (ln.top, ln.x0))
    )


def _outline(pdf: Any) -> dict[tuple[int, str], int]:
    """(page, normalised title) → outline level, for entries whose page can be resolved."""
    try:
        entries = list(pdf.doc.get_outlines())
    except Exception:  # no outline (pdfminer raises PDFNoOutlines) or a damaged one
        return {}
    page_of = {p.page_obj.pageid: n for n, p in enumerate(pdf.pages, 1)}
    found: dict[tuple[int, str], int] = {}
    for entry in entries:
        level, title, dest, action = entry[0], entry[1], entry[2], entry[3]
        page = _dest_page(pdf, dest, action, page_of)
        if page is not None and title:
            found[(page, _norm(str(title)))] = int(level)
    return found


def _dest_page(pdf: Any, dest: Any, action: Any, page_of: dict[int, int]) -> int | None:
    from pdfminer.pdftypes import resolve1

    try:
        if dest is None and action is not None:
            act = resolve1(action)
            dest = act.get("D") if isinstance(act, dict) else None
        dest = resolve1(dest)
        if isinstance(dest, (bytes, str)):
            name = dest.decode("latin-1") if isinstance(dest, bytes) else dest
            dest = resolve1(pdf.doc.get_dest(name))
        if isinstance(dest, dict):
            dest = resolve1(dest.get("D"))
        if isinstance(dest, list) and dest:
            ref = dest[0]
            return page_of.get(getattr(ref, "objid", -1))
    except Exception:  # an unresolvable destination: that heading falls back to font sizes
        return None
    return None


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _outline_levels(
    pages: list[list[_Item]], outline: dict[tuple[int, str], int]
) -> dict[tuple[int, float], int]:
    """(page, line top) → heading rank (1 = top) for each line that is an outline entry."""
    found: dict[tuple[int, float], int] = {}
    for number, items in enumerate(pages, 1):
        for it in items:
            if it.line and (level := outline.get((number, _norm(it.line.text)))):
                found[(number, it.line.top)] = level
    ranks = sorted(set(found.values()))
    return {k: ranks.index(v) + 1 for k, v in found.items()}


def _font_size_levels(pages: list[list[_Item]], body_size: float) -> dict[tuple[int, float], int]:
    """(page, line top) → heading rank for short lines set clearly larger than the body text."""
    sized: dict[tuple[int, float], float] = {}
    for number, items in enumerate(pages, 1):
        for it in items:
            line = it.line
            if line and body_size and line.size >= body_size * 1.2 and _heading_like(line.text):
                sized[(number, line.top)] = round(line.size, 1)
    ranks_desc = sorted(set(sized.values()), reverse=True)
    return {k: ranks_desc.index(v) + 1 for k, v in sized.items()}


def _heading_like(text: str) -> bool:
    """Short, mostly letters, not a sentence, not a table-of-contents entry."""
    letters = sum(ch.isalpha() for ch in text)
    return (
        len(text) <= 90
        and letters >= max(len(text) * 0.5, 2)
        and not text.endswith((".", ",", ";", ":"))
        and not _TOC_LINE.search(text)
    )


def _title(pdf: Any, pages: list[list[_Item]], levels: dict[tuple[int, float], int]) -> str | None:
    """The top-rank heading when the document uses it exactly once, else the metadata title."""
    top = [k for k, v in levels.items() if v == 1]
    if len(top) == 1 and len(set(levels.values())) > 1:
        number, y = top[0]
        for it in pages[number - 1]:
            if it.line and it.line.top == y:
                return it.line.text
    meta = _meta(pdf, "Title")
    return meta if meta and meta.casefold() not in _GENERIC_TITLES else None


def _page_blocks(
    items: list[_Item], number: int, levels: dict[tuple[int, float], int], title: str | None
) -> list[str]:
    """Markdown blocks for one page: headings, paragraphs (lines joined), tables."""
    shift = 1 if title is not None and any(v == 1 for v in levels.values()) else 0
    blocks: list[str] = []
    para: list[_Line] = []

    def flush() -> None:
        if para:
            blocks.append(_join(para))
            para.clear()

    for it in items:
        if it.table is not None:
            flush()
            blocks.append(it.table)
            continue
        line = it.line
        assert line is not None
        if _PAGE_NUMBER.match(line.text.strip()):
            continue
        rank = levels.get((number, line.top))
        if rank is not None:
            flush()
            if rank == 1 and shift and line.text == title:
                continue  # the title: the page shows it already
            depth = min(max(rank - shift, 1) + 1, 4)
            blocks.append(f"{'#' * depth} {line.text}")
            continue
        prev = para[-1] if para else None
        if _BULLET.match(line.text) or _NUMBERED.match(line.text):
            flush()  # a list item starts its own block
        elif prev is not None and (
            line.top - prev.bottom > max(prev.bottom - prev.top, 1.0) * 0.9
            or abs(line.size - prev.size) > 0.6
            or line.top < prev.top  # the next column starts
        ):
            flush()
        para.append(line)
    flush()
    return blocks


def _join(lines: list[_Line]) -> str:
    """A paragraph's lines as one line of text, undoing end-of-line hyphenation; text that would
    read as markdown syntax (`# …` in a code sample, a stray `<!-- page 9 -->`) is escaped."""
    text = ""
    for line in lines:
        part = line.text.strip()
        if text.endswith("-") and part[:1].islower():
            text = text[:-1] + part
        else:
            text = f"{text} {part}" if text else part
    if bullet := _BULLET.match(text):
        return "- " + text[bullet.end() :]
    if _NUMBERED.match(text):
        return text  # an ordered list item, as markdown writes one
    return "\\" + text if _MARKDOWN_START.match(text) else text
