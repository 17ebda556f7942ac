"""Which installed PDF library recovers tables best: cell accuracy on the test manual's tables.

    python -m scripts.studies.pdf_tables

Builds the manual the tests use (tests/pdfgen.py: a ruled table on page 2, an unruled one on page
3), asks each library that imports for the tables of those pages, and scores the best-matching
table cell by cell against the truth (exact text after whitespace trim). pypdf has no table
finder: it is scored on its layout-mode text split at runs of two or more spaces. The last row
is our own loader (`app.ingest.pdf`), read back from the markdown it writes.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from tests.pdfgen import CODES_TABLE, POWER_TABLE, manual_pdf

Table = list[list[str]]
CASES = [("ruled", 2, POWER_TABLE), ("unruled", 3, CODES_TABLE)]


def _score(found: list[Table], truth: Table) -> float:
    """Cells right, after blank rows are dropped and the table is aligned on its header row."""
    best = 0.0
    cells = sum(len(r) for r in truth)
    for raw in found:
        rows = [[c.strip() for c in r] for r in raw if any(c.strip() for c in r)]
        rows = [[c for c in r if c] if len(r) > len(truth[0]) else r for r in rows]
        start = next((i for i, r in enumerate(rows) if r[:1] == truth[0][:1]), 0)
        table = rows[start:]
        hits = 0
        for r, row in enumerate(truth):
            for c, cell in enumerate(row):
                got = table[r][c] if r < len(table) and c < len(table[r]) else None
                hits += (got or "").strip() == cell
        best = max(best, hits / cells)
    return best


def pdfplumber_tables(data: bytes, page: int) -> list[Table]:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        p = pdf.pages[page - 1]
        tables = p.extract_tables()
        if not tables:  # the text strategy finds tables drawn without lines
            tables = p.extract_tables({"vertical_strategy": "text", "horizontal_strategy": "text"})
        return [[[c or "" for c in row] for row in t] for t in tables]


def pymupdf_tables(data: bytes, page: int) -> list[Table]:
    import pymupdf

    doc = pymupdf.open(stream=data, filetype="pdf")
    p = doc[page - 1]
    found = p.find_tables()
    tables = list(found.tables) or list(p.find_tables(strategy="text").tables)
    return [[[c or "" for c in row] for row in t.extract()] for t in tables]


def pypdf_rows(data: bytes, page: int) -> list[Table]:
    from pypdf import PdfReader

    text = PdfReader(io.BytesIO(data)).pages[page - 1].extract_text(extraction_mode="layout")
    return [[[cell for cell in line.split("  ") if cell.strip()] for line in text.splitlines()]]


def concierge_tables(data: bytes, page: int) -> list[Table]:
    """Our loader (pdfplumber's ruled tables + aligned-column runs), read back from markdown."""
    from app.ingest.pdf import page_marker, pdf_to_markdown

    body = pdf_to_markdown(data).body
    text = body.split(page_marker(page), 1)[1].split("<!-- page ", 1)[0]
    tables: list[Table] = []
    for block in text.split("\n\n"):
        rows = [ln.strip().strip("|").split(" | ") for ln in block.splitlines() if "|" in ln]
        if len(rows) > 2:
            tables.append([rows[0], *rows[2:]])
    return tables


LIBRARIES: dict[str, Callable[[bytes, int], list[Table]]] = {
    "pdfplumber": pdfplumber_tables,
    "pymupdf": pymupdf_tables,
    "pypdf (layout text)": pypdf_rows,
    "app.ingest.pdf": concierge_tables,
}


def main() -> None:
    data = manual_pdf()
    print(f"{'library':<22}" + "".join(f"{name:>10}" for name, _, _ in CASES))
    for lib, fn in LIBRARIES.items():
        try:
            scores = []
            for _, page, truth in CASES:
                scores.append(_score(fn(data, page), truth))
        except ImportError:
            print(f"{lib:<22}   not installed")
            continue
        print(f"{lib:<22}" + "".join(f"{s:>10.0%}" for s in scores))


if __name__ == "__main__":
    main()
