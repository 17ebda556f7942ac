"""PDFs the tests make with reportlab: a manual with an outline, a ruled and an unruled table,
a two-column page and a scanned (image-only) page. Every word is invented for the tests."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

WIDTH, HEIGHT = A4
LEFT = 72.0

# (model, input voltage, max current, standby watts): the ruled table on page 2
POWER_TABLE = [
    ["Model", "Input voltage", "Max current", "Standby"],
    ["Lumo S", "100-240 V", "0.8 A", "0.3 W"],
    ["Lumo M", "100-240 V", "1.2 A", "0.4 W"],
    ["Lumo XL", "200-240 V", "2.5 A", "0.6 W"],
]
# an unruled table (aligned columns, no lines) on page 3
CODES_TABLE = [
    ["Code", "Meaning", "Action"],
    ["E12", "Fan blocked", "Clean the vent"],
    ["E31", "Sensor offline", "Reseat the cable"],
    ["E47", "Firmware mismatch", "Update firmware"],
]
LEFT_COLUMN = [
    "If the lamp flickers after mounting,",
    "check that the bracket screws are",
    "tight and the cable is not pinched.",
    "A loose bracket lets the lamp sway",
    "and breaks the dimmer contact.",
]
RIGHT_COLUMN = [
    "To pair the remote, hold the moon",
    "button for eight seconds until the",
    "ring glows amber, then press any",
    "button on the lamp within a minute.",
    "Each remote pairs with four lamps.",
]


def _heading(
    c: Canvas, text: str, y: float, size: float, key: str, level: int, outline_as: str = "{}"
) -> None:
    c.setFont("Helvetica-Bold", size)
    c.drawString(LEFT, y, text)
    c.bookmarkPage(key, fit="XYZ", top=y + size)
    c.addOutlineEntry(outline_as.format(text), key, level=level)


def _lines(c: Canvas, lines: list[str], x: float, y: float, size: float = 10.5) -> float:
    c.setFont("Helvetica", size)
    for line in lines:
        c.drawString(x, y, line)
        y -= size * 1.45
    return y


def _ruled_table(c: Canvas, rows: list[list[str]], top: float) -> None:
    widths = [110.0, 110.0, 100.0, 80.0]
    xs = [LEFT]
    for w in widths:
        xs.append(xs[-1] + w)
    row_h = 20.0
    ys = [top - i * row_h for i in range(len(rows) + 1)]
    c.setLineWidth(0.8)
    c.grid(xs, ys)
    for r, row in enumerate(rows):
        c.setFont("Helvetica-Bold" if r == 0 else "Helvetica", 10)
        for col, cell in enumerate(row):
            c.drawString(xs[col] + 5, ys[r] - 14, cell)


def _unruled_table(c: Canvas, rows: list[list[str]], top: float) -> None:
    xs = [LEFT, LEFT + 90, LEFT + 240]
    for r, row in enumerate(rows):
        c.setFont("Helvetica-Bold" if r == 0 else "Helvetica", 10)
        for col, cell in enumerate(row):
            c.drawString(xs[col], top - r * 18, cell)


def _scanned_image() -> ImageReader:
    img = Image.new("L", (900, 400), 255)
    draw = ImageDraw.Draw(img)
    for i in range(8):
        draw.text((40, 30 + i * 40), "Warranty card - scanned copy, no text layer", fill=0)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    buf.seek(0)
    return ImageReader(buf)


def manual_pdf(
    *,
    title: str = "Lumo Lamp Manual",
    outline: bool = True,
    scanned: bool = True,
    outline_as: str = "{}",
) -> bytes:
    """Four pages (five with the scan): headings, a ruled table, an unruled table, two columns."""
    buf = io.BytesIO()
    c = Canvas(buf, pagesize=A4)
    c.setTitle(title)

    def heading(c: Canvas, text: str, y: float, size: float, key: str, level: int) -> None:
        if outline:
            _heading(c, text, y, size, key, level, outline_as)
        else:
            _plain_heading(c, text, y, size, key, level)

    # page 1: title and a section of prose
    heading(c, title, HEIGHT - 80, 22, "title", 0)
    heading(c, "Mounting the lamp", HEIGHT - 130, 15, "mount", 1)
    _lines(
        c,
        [
            "Fix the wall bracket with the two screws supplied. Drill 6 mm holes",
            "exactly 80 mm apart and use the plugs for brick or concrete walls.",
            "Hang the lamp on the bracket and turn it clockwise until it clicks.",
        ],
        LEFT,
        HEIGHT - 160,
    )
    c.showPage()
    # page 2: power requirements, a ruled table
    heading(c, "Power requirements", HEIGHT - 80, 15, "power", 1)
    _lines(c, ["Every model takes mains power through the bracket terminal."], LEFT, HEIGHT - 110)
    _ruled_table(c, POWER_TABLE, HEIGHT - 140)
    _lines(c, ["Never connect the lamp to a dimmer switch on the wall."], LEFT, HEIGHT - 260)
    c.showPage()
    # page 3: error codes, an unruled table
    heading(c, "Error codes", HEIGHT - 80, 15, "codes", 1)
    _lines(c, ["The status ring blinks a code when the lamp stops itself."], LEFT, HEIGHT - 110)
    _unruled_table(c, CODES_TABLE, HEIGHT - 140)
    c.showPage()
    # page 4: two columns under one heading
    heading(c, "Troubleshooting", HEIGHT - 80, 15, "trouble", 1)
    _lines(c, LEFT_COLUMN, LEFT, HEIGHT - 115)
    _lines(c, RIGHT_COLUMN, WIDTH / 2 + 20, HEIGHT - 115)
    c.showPage()
    if scanned:  # page 5: an image of text, no text layer
        c.drawImage(_scanned_image(), LEFT, HEIGHT - 400, width=450, height=200)
        c.showPage()
    c.save()
    return buf.getvalue()


def _plain_heading(c: Canvas, text: str, y: float, size: float, key: str, level: int) -> None:
    c.setFont("Helvetica-Bold", size)
    c.drawString(LEFT, y, text)


def scanned_only_pdf() -> bytes:
    """One page that is only a picture of text."""
    buf = io.BytesIO()
    c = Canvas(buf, pagesize=A4)
    c.drawImage(_scanned_image(), LEFT, HEIGHT - 400, width=450, height=200)
    c.showPage()
    c.save()
    return buf.getvalue()


GLUED_SENTENCE = "Each word of this sentence is placed on its own with no space character"


def steps_pdf() -> bytes:
    """Numbered steps, bullets, a code comment line, and a sentence set word by word with narrow
    gaps and no space characters (as some typesetters write text)."""
    buf = io.BytesIO()
    c = Canvas(buf, pagesize=A4)
    c.setTitle("Pairing guide")
    y = _lines(
        c,
        [
            "1. Hold the moon button for eight seconds.",
            "2. Wait until the ring glows amber.",
            "3. Press any button on the lamp.",
        ],
        LEFT,
        HEIGHT - 100,
    )
    y = _lines(
        c, ["\u2022 Works with up to four lamps", "\u2022 Needs fresh batteries"], LEFT, y - 10
    )
    c.setFont("Courier", 10.5)
    c.drawString(LEFT, y - 10, "# generated file, do not edit")
    c.setFont("Helvetica", 10.5)
    x = LEFT
    for word in GLUED_SENTENCE.split():
        c.drawString(x, y - 40, word)
        x += c.stringWidth(word, "Helvetica", 10.5) + 2.8  # a word gap under pdfplumber's 3 pt
    c.showPage()
    c.save()
    return buf.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
