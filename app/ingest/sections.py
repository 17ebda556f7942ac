"""An article's section tree: its headings, and under each the typed blocks it holds. Pure.

Every format reaches ingestion as markdown (PDF, HTML and Zendesk loaders convert first), so this
one builder serves them all. Sections follow the chunker's headings (H1–H3; a later H1 counts as
H2; an H1 on the first line is the title), so a chunk's breadcrumb names exactly one section.
Inside a section, blocks are read as a help-center reader sees them:

- paragraph: lines up to a blank line (in a page without blank lines, a line that ends a sentence
  ends the paragraph: pages converted to plain text put one paragraph on each line);
- list: ordered or not, each item whole with its nested items and continuation lines;
- table: header cells and row cells (`\\|` is a pipe inside a cell);
- code: a fenced block, its info string as `label`;
- callout: a blockquote, its leading bold label ("**Warning:**") as `label`;
- tab: a heading below section level (H4–H6; the dialects layer writes a tab panel as a
  heading one level down named by its tab) with everything under it up to the next heading or
  thematic break (`---`, which ends a tab set), the heading as `label`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from app.store.models import Block, Section

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_ITEM = re.compile(r"^( *)([-*+•]|\d{1,3}[.)])[ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
_LABEL = re.compile(r"^\*\*([^*]{1,40}?):?\*\*:?\s*")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?: *\1){2,} *$")  # a thematic break: it ends a tab panel
_SENTENCE_END = re.compile(r"[.!?:][\"'”’)\]]?\s*$")
_ANCHOR_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


@dataclass(slots=True)
class _Raw:
    path: list[str]
    lines: list[str] = field(default_factory=list)


def anchor_of(heading: str) -> str:
    """The fragment a docs site gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[*_`]", "", heading.strip().lower())
    return _ANCHOR_DROP.sub("", text).replace(" ", "-")


def build_sections(title: str, body: str) -> list[Section]:
    """The article's sections in order (the text before the first heading is `s0`, path [])."""
    raws = _split(body)
    plain = "\n\n" not in body.replace("\r\n", "\n")
    out: list[Section] = []
    anchors: dict[str, int] = {}
    for n, raw in enumerate(raws):
        sid = f"s{n}"
        blocks = [
            b.model_copy(update={"id": f"{sid}.b{k}"})
            for k, b in enumerate(_blocks(raw.lines, plain))
        ]
        if not blocks and n > 0 and not raw.path:
            continue
        base = anchor_of(raw.path[-1]) if raw.path else ""
        seen = anchors.get(base, 0)
        anchors[base] = seen + 1
        anchor = f"{base}-{seen}" if seen and base else base
        out.append(Section(id=sid, path=raw.path, anchor=anchor, blocks=blocks))
    return out


def _split(body: str) -> list[_Raw]:
    """The body's lines grouped under their section headings (code fences are not headings)."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and (m := _HEADING.match(lines[first])) and len(m.group(1)) == 1:
        lines = lines[first + 1 :]
    raws = [_Raw([])]
    h2: str | None = None
    fence: str | None = None
    for line in lines:
        if fence is not None:
            fence = None if closes_fence(line, fence) else fence
        elif f := _FENCE.match(line):
            fence = f.group(1)
        m = _HEADING.match(line) if fence is None else None
        if m and len(m.group(1)) <= 3:
            text = m.group(2).strip()
            if max(len(m.group(1)), 2) == 2:
                h2, path = text, [text]
            else:
                path = [h2, text] if h2 else [text]
            raws.append(_Raw(path))
        else:
            raws[-1].lines.append(line)
    return raws


def _blocks(lines: list[str], plain: bool) -> list[Block]:
    """A section's lines as typed blocks, in order (ids are set by the caller). In a page
    converted to plain text, a menu line is dropped and a line that heads what follows (a short
    title-like line, or one question: an FAQ entry) becomes the label of the block under it."""
    blocks: list[Block] = []
    label: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _COMMENT.match(line) or _RULE.match(line):
            i += 1
            continue
        if plain and _navigation(line):
            i += 1
            continue
        if plain and _bare_heading(line):
            label, i = line.strip(), i + 1
            continue
        start = _number(line)
        block, i = _reader(lines, i)(lines, i, plain)
        if block is not None:
            if label and block.label is None:
                block = block.model_copy(update={"label": label})
            if not _resumed(blocks, block, start):
                blocks.append(block)
            label = None
    if label:  # a last short line heads nothing: it is said, not a heading
        blocks.append(Block(id="", kind="paragraph", text=label))
    return blocks


def _number(line: str) -> int:
    """The number of a numbered list item ("2. Use …" is 2), else 0."""
    m = _ITEM.match(line)
    return int(m.group(2)[:-1]) if m and m.group(2)[0].isdigit() else 0


def _resumed(blocks: list[Block], block: Block, start: int) -> bool:
    """A numbered list that goes on from the last one ("2." after a list ending at 1., with a
    link, a paragraph or code written unindented in between) joins it: the blocks between belong
    to the last step. Merged in place; False when it starts a list of its own."""
    if not (block.ordered and start > 1):
        return False
    for back in range(1, min(3, len(blocks)) + 1):
        prev, between = blocks[-back], blocks[len(blocks) - back + 1 :]
        if prev.kind == "list" and prev.ordered and len(prev.items or []) == start - 1:
            if any(b.kind not in ("paragraph", "code") for b in between):
                return False
            said = [f"```\n{b.text}\n```" if b.kind == "code" else b.text for b in between]
            items = [*(prev.items or [])]
            items[-1] = "\n".join([items[-1], *said])
            items += block.items or []
            text = "\n".join(f"{k}. {t}" for k, t in enumerate(items, 1))
            del blocks[len(blocks) - back :]
            blocks.append(prev.model_copy(update={"items": items, "text": text}))
            return True
    return False


_CLOSING = re.compile(r"[.!:;,)\]\"'”’…]\s*$")
_BAR = re.compile(r"\s\|\s")


def _navigation(line: str) -> bool:
    """A menu or breadcrumb trail written out as text ("Home | Plans | FAQ")."""
    text = line.strip()
    return (
        bool(_BAR.search(line))
        and not text.startswith("|")
        and not _ITEM.match(line)
        and not _CLOSING.search(line)
    )


def _bare_heading(line: str) -> bool:
    """A plain line that heads what follows: at most 8 words, capitalised, with no closing
    punctuation; or one question of at most 20 words (an FAQ entry's question)."""
    text = line.strip()
    if _ITEM.match(line) or text.startswith(("|", "#", ">")):
        return False
    words = text.split()
    if text.endswith("?"):
        return len(words) <= 20 and text.count("? ") == 0 and ". " not in text
    if _CLOSING.search(text) or not (text[0].isupper() or text[0].isdigit()):
        return False
    return len(words) <= 8


_Read = Callable[[list[str], int, bool], tuple[Block | None, int]]


def _reader(lines: list[str], i: int) -> _Read:
    """The reader for the block that starts at line `i`."""
    line = lines[i]
    if _FENCE.match(line):
        return _code
    if (m := _HEADING.match(line)) and len(m.group(1)) > 3:
        return _tab
    if _is_table(lines, i):
        return _table
    if (item := _ITEM.match(line)) and len(item.group(1)) <= 3:
        return _list
    if _QUOTE.match(line):
        return _callout
    return _paragraph


def closes_fence(line: str, fence: str) -> bool:
    """A line closes a fence: the same character, at least as many, nothing after (a shorter
    fence, or one with an info string, is the example's own code inside a longer one)."""
    m = _FENCE.match(line)
    return bool(m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)) and (
        not line.strip().strip(fence[0])
    )


def _code(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    opening = _FENCE.match(lines[i])
    assert opening is not None
    marker, label = opening.group(1), opening.group(2)
    j = i + 1
    while j < len(lines) and not closes_fence(lines[j], marker):
        j += 1
    text = "\n".join(lines[i + 1 : j]).strip("\n")
    return Block(id="", kind="code", text=text, label=label or None), j + 1


def _tab(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    m = _HEADING.match(lines[i])
    assert m is not None
    level, label = len(m.group(1)), m.group(2).strip()
    j = i + 1
    while j < len(lines):
        h = _HEADING.match(lines[j])
        if (h and len(h.group(1)) <= level) or (_RULE.match(lines[j]) and not lines[j - 1].strip()):
            break
        j += 1
    text = "\n".join(lines[i + 1 : j]).strip()  # the panel as written: its lists stay lists
    return (Block(id="", kind="tab", text=text, label=label) if text else None), j


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    cells = re.split(r"(?<!\\)\|", row)
    return [c.strip().replace("\\|", "|") for c in cells]


def _is_table(lines: list[str], i: int) -> bool:
    return (
        "|" in lines[i]
        and i + 1 < len(lines)
        and "|" in lines[i + 1]
        and bool(_TABLE_RULE.match(lines[i + 1]))
    )


def _table(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    header = _cells(lines[i])
    j = i + 2
    rows: list[list[str]] = []
    while j < len(lines) and lines[j].strip() and "|" in lines[j]:
        rows.append(_cells(lines[j]))
        j += 1
    text = "\n".join(s.strip() for s in lines[i:j])
    return Block(id="", kind="table", text=text, header=header, rows=rows), j


def _list(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    first = _ITEM.match(lines[i])
    assert first is not None
    base = len(first.group(1))
    ordered = first.group(2)[0].isdigit()
    items: list[list[str]] = []
    j = i
    while j < len(lines):
        line = lines[j]
        m = _ITEM.match(line)
        indent = len(line) - len(line.lstrip(" "))
        same = m is not None and m.group(2)[0].isdigit() == ordered
        if m and len(m.group(1)) == base and same:
            items.append([m.group(3).strip()])
        elif m and len(m.group(1)) == base and ordered and items:
            items[-1].append(f"- {m.group(3).strip()}")  # a step's options, written unindented
        elif m and len(m.group(1)) == base:
            break  # a numbered list after a bulleted one: a list of its own
        elif line.strip() and items and (indent > base or not _starts_block(lines, j)):
            if indent <= base and _SENTENCE_END.search(items[-1][-1]) and not m:
                break  # an unindented sentence after a closed item: a paragraph
            items[-1].append(line.strip() if not m else line[base:].rstrip())
        elif not line.strip() and j + 1 < len(lines) and _continues(lines[j + 1], base):
            pass  # a loose list: a blank line between items or inside one
        else:
            break
        j += 1
    texts = ["\n".join(parts) for parts in items]
    marks = [f"{k}. " if ordered else "- " for k in range(1, len(texts) + 1)]
    text = "\n".join(m + t for m, t in zip(marks, texts, strict=True))
    return Block(id="", kind="list", text=text, items=texts, ordered=ordered), j


def _continues(line: str, base: int) -> bool:
    m = _ITEM.match(line)
    indent = len(line) - len(line.lstrip(" "))
    return bool(line.strip()) and (indent > base or bool(m and len(m.group(1)) == base))


def _starts_block(lines: list[str], j: int) -> bool:
    line = lines[j]
    return bool(
        _FENCE.match(line) or _HEADING.match(line) or _QUOTE.match(line) or _is_table(lines, j)
    )


def _callout(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    body: list[str] = []
    j = i
    while j < len(lines) and (m := _QUOTE.match(lines[j])):
        body.append(m.group(1))
        j += 1
    text = "\n".join(body).strip()
    label = None
    if m := _LABEL.match(text):
        label, text = m.group(1).strip(), text[m.end() :].strip()
    return Block(id="", kind="callout", text=text, label=label), j


def _paragraph(lines: list[str], i: int, plain: bool) -> tuple[Block | None, int]:
    j = i
    parts: list[str] = []
    while j < len(lines) and lines[j].strip():
        if j > i and (_starts_block(lines, j) or _ITEM.match(lines[j])):
            break
        if _COMMENT.match(lines[j]):
            j += 1
            continue
        parts.append(lines[j].strip())
        j += 1
        if plain:
            break  # one paragraph a line in a page converted to plain text
    text = " ".join(parts).strip()
    return (Block(id="", kind="paragraph", text=text) if text else None), j


def block_ids_in(chunk_text: str, section: Section) -> list[str]:
    """The ids of the section's blocks whose text the chunk carries (by their opening words)."""
    said = " ".join(chunk_text.split())
    out = []
    for b in section.blocks:
        first = (b.items or [""])[0] if b.kind == "list" else b.label if b.kind == "tab" else b.text
        opening = " ".join((first or "").split())[:60]
        if opening and opening in said:
            out.append(b.id)
    return out
