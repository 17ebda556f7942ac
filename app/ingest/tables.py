"""Pipe tables made GFM: a header-less (kramdown) table takes its first row as the header, or
its first column when that is the column of labels; a check or cross icon alone in a cell
becomes a word, so a comparison still reads. Pure."""

from __future__ import annotations

import re

from app.ingest.templates import ICON

_ROW = re.compile(r"^ {0,3}\|.*\|?[ \t]*$")
_DELIMITER = re.compile(r"^ {0,3}\|?(?:[ \t]*:?-{1,}:?[ \t]*\|)+(?:[ \t]*:?-{1,}:?[ \t]*)?$")
_KRAMDOWN_RULE = re.compile(r"^ {0,3}\|?[ \t]*[=+-][-=+| \t:]*$")
_BOLD = re.compile(r"^\*\*[^*].*\*\*$|^__[^_].*__$")
# a line break or an HTML list's item boundary inside a cell: its parts stay apart
_BREAK = re.compile(r"(?:\s*(?:<br\s*/?>|</?(?:ul|ol|li)\b[^>]*>)\s*)+", re.IGNORECASE)
CELL_WORDS = {"✓": "Yes", "✔": "Yes", "✅": "Yes", "✗": "No", "✘": "No", "❌": "No", "✖": "No"}


def fix_tables(text: str) -> str:
    """Every run of pipe rows in `text` as a GFM table (other lines untouched)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _ROW.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and (_ROW.match(lines[j]) or _KRAMDOWN_RULE.match(lines[j])):
            if not lines[j].strip():
                break
            j += 1
        out.extend(_table(lines[i:j]))
        i = j
    return "\n".join(out)


def cells(row: str) -> list[str]:
    """A row's cells (escaped pipes kept inside their cell)."""
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _table(rows: list[str]) -> list[str]:
    has_header = len(rows) > 1 and bool(_DELIMITER.match(rows[1]))
    body = [r for k, r in enumerate(rows) if not (_KRAMDOWN_RULE.match(r) and k != 1)]
    if has_header:
        grid = [cells(r) for k, r in enumerate(body) if k != 1]
    else:
        grid = [cells(r) for r in body if not _DELIMITER.match(r)]
    if not grid:
        return []
    width = max(len(r) for r in grid)
    grid = [[_cell(c) for c in r] + [""] * (width - len(r)) for r in grid]
    if not has_header and _labels_in_first_column(grid):
        grid = [list(col) for col in zip(*grid, strict=True)]
        width = len(grid[0])
    header = [c.strip("*_ ") if _BOLD.match(c) else c for c in grid[0]]
    return [_line(header), "|" + "---|" * width, *(_line(r) for r in grid[1:])]


def _labels_in_first_column(grid: list[list[str]]) -> bool:
    """Bold labels down the first column, and a first row that is not all labels."""
    if len(grid) < 2 or len(grid[0]) < 2:
        return False
    first_col_bold = all(_BOLD.match(r[0]) for r in grid)
    first_row_bold = all(_BOLD.match(c) for c in grid[0] if c)
    return first_col_bold and not first_row_bold


def _cell(text: str) -> str:
    text = _BREAK.sub("; ", text).strip("; ") if "<" in text else text
    icons = ICON.findall(text)
    rest = ICON.sub("", text).strip()
    if rest in CELL_WORDS:
        return CELL_WORDS[rest]
    if not rest and icons:
        return str(icons[0]).replace("-", " ")
    return rest


def _line(row: list[str]) -> str:
    return "| " + " | ".join(row) + " |"
