"""Help-center markdown dialects rewritten to plain CommonMark at load time. Pure: no I/O.

What is rewritten (everything outside fenced code and inline code spans; code is never touched):
- HTML comments `<!-- … -->`, Obsidian comments `%% … %%` and inline `<script>`/`<style>`
  elements are removed.
- Obsidian callouts `> [!note] Title` (foldable `-`/`+`, nested), MkDocs admonitions
  (`!!! note "Title"`, `??? tip`, indented body) and content tabs (`=== "macOS"`), and
  Docusaurus admonitions (`:::tip Title` …
  `:::`, `:::tip[Title]`) become a bold title line followed by their body as ordinary
  paragraphs, so the body is searchable and quotable like any other text.
- Obsidian embeds: `![[Note]]`, `![[Note#Heading]]` and `![[Note#^block]]` are replaced by that
  note, section or block (itself normalised, headings shifted under the embedding section,
  at most `MAX_EMBED_DEPTH` deep, cycles cut); `![[image.png|alt]]` and local `![alt](img.png)`
  become their alt text (nothing when there is none).
- Escaped brackets `\\[\\[x\\]\\]` (syntax an author shows on purpose) become inline code.
- Footnotes: references `[^1]` are dropped, each definition `[^1]: text` (with its indented
  continuation) becomes a paragraph where it stands.
- MkDocs Material icon shortcodes (`:material-apple:`) and attribute lists (`{ .md-button }`)
  are dropped.
- Wiki-links `[[Note#Heading|text]]` become `[text](/help/<slug>)` when the note is in the
  corpus (plain text otherwise, and always plain inside headings); block ids `^abc` are dropped;
  `==highlights==` lose their markers.
- MDX: `import`/`export` lines and `{/* comments */}` are dropped; JSX components
  (`<Tabs>`, `<TabItem label="macOS">`) lose their tags and keep their text (a tab's label
  becomes a bold line); lowercase HTML tags are dropped with their text kept, since help pages
  render markdown with raw HTML disabled.

Anything the rewrite could not resolve (an embed of a missing note or heading) is returned as a
warning for the ingest report; the text falls back to the link's label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath

MAX_EMBED_DEPTH = 3
MEDIA_SUFFIXES = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "avif", "ico", "tif", "tiff", "mp3"}
    | {"wav", "ogg", "m4a", "flac", "webm", "mp4", "mov", "mkv", "ogv", "pdf"}
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_CALLOUT = re.compile(r"^ {0,3}>[ \t]?\[!([A-Za-z][\w-]*)\][+-]?[ \t]*(.*)$")
_MKDOCS = re.compile(
    r"^(?:!!!|\?\?\?\+?)[ \t]+([A-Za-z][\w-]*)(?:[ \t]+(?:inline|end|annotate))*"
    r"(?:[ \t]+\"(.*)\")?[ \t]*$"
)
_MKDOCS_TAB = re.compile(r"^===[+!]?[ \t]+\"(.*)\"[ \t]*$")
_ICON = re.compile(r":(?:material|octicons|fontawesome|simple)-[\w-]+:")
_ATTR = r"(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+))"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTR}(?:[ \t]+{_ATTR})*[ \t]*\}}")
_DOCUSAURUS_OPEN = re.compile(r"^ {0,3}(:{3,})[ \t]*([A-Za-z][\w-]*)(?:\[(.*)\]|[ \t]+(.*))?$")
_DOCUSAURUS_CLOSE = re.compile(r"^ {0,3}(:{3,})[ \t]*$")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_SCRIPT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_OBSIDIAN_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.DOTALL)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_MDX_IMPORT = re.compile(r"^(?:import|export)\s.*$")
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_EMBED = re.compile(r"!\[\[([^\[\]\n]+?)\]\]")
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_ESCAPED_WIKILINK = re.compile(r"\\\[\\\[([^\[\]\n]+?)\\\]\\\]")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_BLOCK_ID_LINE = re.compile(r"^[ \t]*\^[A-Za-z0-9-]+[ \t]*$")
_BLOCK_ID_TAIL = re.compile(r"(?:[ \t]+|(?<=\]\]))\^[A-Za-z0-9-]+[ \t]*$")
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]*(.*)$")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\]")  # definitions were consumed as blocks
_HIGHLIGHT = re.compile(r"==(?=\S)(.+?)(?<=\S)==")
_JSX_LABEL = re.compile(r"\blabel=(?:\"([^\"]*)\"|'([^']*)'|\{[\"'`]([^\"'`]*)[\"'`]\})")
_TAG = re.compile(r"</?([A-Za-z][\w.:-]*)(?:\s(?:[^<>{}]|\{[^{}]*\})*)?/?>")
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)\s")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<=\S)[ \t]+([.,;:!?)])(?=\s|$)")
_SPACES = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
_BLANKS = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class Note:
    """One document as embeds and wiki-links see it: its slug and its raw (un-normalised) body."""

    slug: str
    body: str
    folder: str = ""


@dataclass
class NoteIndex:
    """Notes by the names a wiki-link may use: file name, path without suffix, aliases."""

    by_name: dict[str, list[tuple[str, Note]]] = field(default_factory=dict)

    def add(self, rel_path: str, note: Note, aliases: Iterable[str] = ()) -> None:
        path = PurePosixPath(rel_path)
        for name in {path.stem, path.with_suffix("").as_posix(), rel_path, *aliases}:
            self.by_name.setdefault(_key(name), []).append((rel_path, note))

    def resolve(self, name: str, from_folder: str = "") -> Note | None:
        """The note a link names; on a tie the one in the linking note's folder, then the
        shortest path (how Obsidian breaks ties)."""
        found = self.by_name.get(_key(name))
        if not found:
            return None
        unique = {rel: note for rel, note in found}
        if len(unique) == 1:
            return next(iter(unique.values()))
        same = [n for n in unique.values() if n.folder == from_folder]
        if len(same) == 1:
            return same[0]
        rel = min(unique, key=lambda r: (r.count("/"), len(r), r))
        return unique[rel]


@dataclass
class _Context:
    index: NoteIndex
    folder: str
    warnings: list[str]
    seen: tuple[str, ...]
    depth: int


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().replace("\\", "/")).lower()


def normalise(
    body: str,
    index: NoteIndex | None = None,
    *,
    folder: str = "",
    self_slug: str = "",
    warnings: list[str] | None = None,
    mdx: bool = False,
) -> str:
    """`body` in plain CommonMark; unresolved embeds are appended to `warnings`."""
    ctx = _Context(
        index=index or NoteIndex(),
        folder=folder,
        warnings=warnings if warnings is not None else [],
        seen=(self_slug,) if self_slug else (),
        depth=0,
    )
    text = _strip_comments(body.replace("\r\n", "\n"), mdx=mdx)
    return _tidy(_blocks(text, ctx))


# -- passes ---------------------------------------------------------------------------------


def _segments(text: str) -> list[tuple[bool, str]]:
    """(is_code, lines) runs: fenced code blocks are their own segments, kept byte for byte."""
    out: list[tuple[bool, list[str]]] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                out.append((True, [line]))
                continue
            if not out or out[-1][0]:
                out.append((False, []))
            out[-1][1].append(line)
        else:
            out[-1][1].append(line)
            if _closes(line, fence):
                fence = None
    return [(code, "\n".join(lines)) for code, lines in out]


def _hide_code(text: str) -> tuple[str, list[str]]:
    """Inline code spans swapped for placeholders (restore with `_restore`)."""
    spans: list[str] = []

    def hide(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return _INLINE_CODE.sub(hide, text), spans


def _restore(text: str, spans: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], text)


def _strip_comments(text: str, *, mdx: bool) -> str:
    parts: list[str] = []
    for code, seg in _segments(text):
        if not code:
            seg, spans = _hide_code(seg)
            seg = _OBSIDIAN_COMMENT.sub("", _HTML_COMMENT.sub("", _SCRIPT.sub("", seg)))
            seg = _MDX_COMMENT.sub("", seg)
            if mdx:
                seg = "\n".join(ln for ln in seg.split("\n") if not _MDX_IMPORT.match(ln))
            seg = _restore(seg, spans)
        parts.append(seg)
    return "\n".join(parts)


def _blocks(text: str, ctx: _Context) -> str:
    """Rewrite block-level dialects; hand every other line to the inline pass."""
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []
    level = 1  # the heading level the current position sits under (1 = the title)

    def flush() -> None:
        if prose:
            out.append(_inline("\n".join(prose), ctx, level))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if fence := _FENCE.match(line):
            flush()
            last = _fence_end(lines, i, fence.group(1))
            out.append("\n".join(lines[i : last + 1]))
            i = last + 1
            continue
        if m := _FOOTNOTE_DEF.match(line):
            flush()
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1] in (" ", "\t")):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            inner = "\n".join([m.group(2), *(_dedent(ln) for ln in lines[i + 1 : j])])
            out.append(f"\n{_blocks(inner.strip(), ctx).strip()}\n")
            i = j
            continue
        if m := _CALLOUT.match(line):
            flush()
            j = i + 1
            while j < len(lines) and lines[j].lstrip().startswith(">"):
                j += 1
            inner = "\n".join(_unquote(ln) for ln in lines[i + 1 : j])
            out.append(_admonition(m.group(1), m.group(2), inner, ctx, level))
            i = j
            continue
        if (m := _MKDOCS.match(line)) or (tab := _MKDOCS_TAB.match(line)):
            flush()
            # `!!! note ""` asks for no title at all; a tab's label is its title
            kind, title = (m.group(1), m.group(2)) if m else ("", tab.group(1) if tab else "")
            if title == "" and m:
                kind = ""
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j][:1] in (" ", "\t")):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            inner = "\n".join(_dedent(ln) for ln in lines[i + 1 : j])
            out.append(_admonition(kind, title or "", inner, ctx, level))
            i = j
            continue
        if m := _DOCUSAURUS_OPEN.match(line):
            close = _docusaurus_end(lines, i, len(m.group(1)))
            if close is not None:
                flush()
                title = m.group(3) or m.group(4) or ""
                inner = "\n".join(lines[i + 1 : close])
                out.append(_admonition(m.group(2), title, inner, ctx, level))
                i = close + 1
                continue
        if h := _HEADING.match(line):
            level = len(h.group(1))
        prose.append(line)
        i += 1
    flush()
    return "\n".join(out)


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    for j in range(start + 1, len(lines)):
        if _closes(lines[j], fence):
            return j
    return len(lines) - 1


def _closes(line: str, fence: str) -> bool:
    """A line closes a fence: the same character, at least as many, nothing after."""
    m = _FENCE.match(line)
    return bool(m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)) and (
        not line.strip().strip(fence[0])
    )


def _docusaurus_end(lines: list[str], start: int, colons: int) -> int | None:
    depth = 0
    for j in range(start + 1, len(lines)):
        if _DOCUSAURUS_OPEN.match(lines[j]):
            depth += 1
        elif (m := _DOCUSAURUS_CLOSE.match(lines[j])) and len(m.group(1)) >= min(colons, 3):
            if depth == 0:
                return j
            depth -= 1
    return None


def _unquote(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith("> "):
        return stripped[2:]
    return stripped[1:] if stripped.startswith(">") else line


def _dedent(line: str) -> str:
    if line.startswith("\t"):
        return line[1:]
    return line[4:] if line.startswith("    ") else line.lstrip(" ")


def _admonition(kind: str, title: str, inner: str, ctx: _Context, level: int) -> str:
    label = _ICON.sub("", title).strip() or kind.replace("-", " ").replace("_", " ").capitalize()
    label = _inline(label, ctx, level, heading=True).strip()
    label = label.strip("*").strip() if label.startswith("**") else label
    body = _blocks(inner, ctx).strip("\n")
    if not label:
        return f"\n{body}\n"
    return f"\n**{label}**\n\n{body}\n" if body.strip() else f"\n**{label}**\n"


def _inline(text: str, ctx: _Context, level: int, *, heading: bool = False) -> str:
    """Inline rewrites on prose; inline code spans are protected."""
    text = _ESCAPED_WIKILINK.sub(r"`[[\1]]`", text)  # syntax the author meant to show
    text, spans = _hide_code(text)
    lines = []
    for line in text.split("\n"):
        if _BLOCK_ID_LINE.match(line):
            continue
        line = _BLOCK_ID_TAIL.sub("", line)
        is_heading = heading or bool(_HEADING.match(line))
        stand_alone = line.strip()
        m = _EMBED.fullmatch(stand_alone)
        if m and not heading and not _is_media(m.group(1)):
            lines.append(_embed_block(m.group(1), ctx, level))
            continue
        if _EMBED.search(line):
            line = _EMBED.sub(lambda e: _embed_inline(e.group(1), ctx), line)
            line = _SPACE_BEFORE_PUNCT.sub(r"\1", line)  # "click the icon ![[x.svg]]." → "icon."
        line = _IMAGE.sub(_image_alt, line)
        line = _WIKILINK.sub(partial(_wikilink_match, ctx=ctx, plain=is_heading), line)
        line = _HIGHLIGHT.sub(r"\1", _ATTR_LIST.sub("", _ICON.sub("", line)))
        line = _FOOTNOTE_REF.sub("", line)
        line = _tags(line)
        if not _LIST_OR_QUOTE.match(line) and line.strip():
            line = _SPACES.sub(" ", line)
        lines.append(line.rstrip() if line.strip() else "")
    return _restore("\n".join(lines), spans)


def _tags(line: str) -> str:
    """Drop HTML/JSX tags, keep their text; a component's `label` becomes a bold line."""

    def repl(m: re.Match[str]) -> str:
        if m.group(0).startswith("</"):
            return ""
        label = _JSX_LABEL.search(m.group(0))
        if label and m.group(1)[:1].isupper():
            text = next(g for g in label.groups() if g is not None)
            return f"**{text}**" if text else ""
        return ""

    if not _TAG.search(line):
        return line
    replaced = _TAG.sub(repl, line)
    return replaced if replaced.strip() else ""


def _link_label(target: str) -> str:
    note, fragment, label = _split_target(target)
    return label or note.rsplit("/", 1)[-1] or fragment.lstrip("^")


def _split_target(target: str) -> tuple[str, str, str]:
    """`Note#Heading|label` → (note, fragment, label); `\\|` is a pipe escaped inside a table."""
    link, _, label = target.replace("\\|", "|").partition("|")
    note, _, fragment = link.partition("#")
    return note.strip(), fragment.strip(), label.strip()


def _is_media(target: str) -> bool:
    note = _split_target(target)[0]
    return "." in note and note.rsplit(".", 1)[1].lower() in MEDIA_SUFFIXES


def _alt_text(label: str) -> str:
    """An image embed's `|alt|300` part without the size: `300`, `300x200` are sizes."""
    parts = [p.strip() for p in label.split("|")]
    words = [p for p in parts if p and not re.fullmatch(r"\d+(?:x\d+)?", p)]
    return " ".join(words)


def _image_alt(m: re.Match[str]) -> str:
    src = m.group(2)
    if re.match(r"^[a-z][a-z0-9+.-]*:", src, re.IGNORECASE):
        return m.group(0)  # a remote image still renders; a vault-relative one would not
    return m.group(1).strip()


def _embed_inline(target: str, ctx: _Context) -> str:
    note, fragment, label = _split_target(target)
    if _is_media(target):
        return _alt_text(label)
    return label or fragment.lstrip("^") or note


def _embed_block(target: str, ctx: _Context, level: int) -> str:
    note_name, fragment, label = _split_target(target)
    fallback = label or note_name
    note = ctx.index.resolve(note_name, ctx.folder) if note_name else None
    if note is None:
        ctx.warnings.append(f"embed ![[{target}]]: no note named {note_name!r}")
        return fallback
    if note.slug in ctx.seen or ctx.depth >= MAX_EMBED_DEPTH:
        return fallback
    if fragment.startswith("^"):
        raw = _block_by_id(note.body, fragment[1:])
        shift = 0
    elif fragment:
        raw = _section(note.body, fragment.split("#")[-1])
        shift = _shift(raw, level)
    else:
        raw = note.body
        shift = _shift(raw, level)
    if raw is None:
        what = "block" if fragment.startswith("^") else "heading"
        ctx.warnings.append(f"embed ![[{target}]]: no such {what} in {note_name!r}")
        return fallback
    inner = _Context(ctx.index, note.folder, ctx.warnings, (*ctx.seen, note.slug), ctx.depth + 1)
    text = _blocks(_strip_comments(_shift_headings(raw, shift), mdx=False), inner)
    return f"\n{text.strip()}\n"


def _section(body: str, heading: str) -> str | None:
    want = _heading_key(heading)
    lines = body.split("\n")
    start: int | None = None
    start_level = 0
    for i, (code, line) in enumerate(_lines_with_code_flag(lines)):
        h = None if code else _HEADING.match(line)
        if h is None:
            continue
        if start is None and _heading_key(h.group(2)) == want:
            start, start_level = i, len(h.group(1))
        elif start is not None and len(h.group(1)) <= start_level:
            return "\n".join(lines[start:i])
    return None if start is None else "\n".join(lines[start:])


def _heading_key(text: str) -> str:
    text = _WIKILINK.sub(
        lambda w: _split_target(w.group(1))[2] or _split_target(w.group(1))[0], text
    )
    return re.sub(r"[^\w]+", " ", text).strip().lower()


def _lines_with_code_flag(lines: list[str]) -> Iterable[tuple[bool, str]]:
    fence: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            yield True, line
        elif fence is not None:
            if _closes(line, fence):
                fence = None
            yield True, line
        else:
            yield False, line


def _block_by_id(body: str, block_id: str) -> str | None:
    """The paragraph, list item, table or callout a `^id` marks (Obsidian block reference)."""
    lines = body.split("\n")
    marker = f"^{block_id}"
    for i, line in enumerate(lines):
        if line.strip() == marker:
            j = i
            while j > 0 and lines[j - 1].strip():
                j -= 1
            return "\n".join(lines[j:i])
        if _BLOCK_ID_TAIL.search(line) and line.rstrip().endswith(marker):
            if _LIST_OR_QUOTE.match(line) and not line.lstrip().startswith(">"):
                return line
            j, k = i, i
            while j > 0 and lines[j - 1].strip():
                j -= 1
            while k + 1 < len(lines) and lines[k + 1].strip():
                k += 1
            return "\n".join(lines[j : k + 1])
    return None


def _shift(raw: str | None, level: int) -> int:
    if raw is None:
        return 0
    levels = [
        len(h.group(1))
        for code, line in _lines_with_code_flag(raw.split("\n"))
        if not code and (h := _HEADING.match(line))
    ]
    return max(level + 1 - min(levels), 0) if levels else 0


def _shift_headings(raw: str, shift: int) -> str:
    if not shift:
        return raw
    out = []
    for code, line in _lines_with_code_flag(raw.split("\n")):
        h = None if code else _HEADING.match(line)
        if h:
            line = "#" * min(len(h.group(1)) + shift, 6) + " " + h.group(2)
        out.append(line)
    return "\n".join(out)


def _wikilink_match(m: re.Match[str], *, ctx: _Context, plain: bool) -> str:
    return _wikilink(m.group(1), ctx, plain=plain)


def _wikilink(target: str, ctx: _Context, *, plain: bool) -> str:
    note_name, fragment, label = _split_target(target)
    text = label or (fragment.lstrip("^") if not note_name else note_name.rsplit("/", 1)[-1])
    if plain or not note_name:
        return text
    note = ctx.index.resolve(note_name, ctx.folder)
    return f"[{text}](/help/{note.slug})" if note else text


def _tidy(text: str) -> str:
    parts = []
    for code, seg in _segments(text):
        parts.append(seg if code else _BLANKS.sub("\n\n", seg))
    return "\n".join(parts).strip() + "\n"


def first_paragraph(body: str, limit: int = 280) -> str:
    """The first paragraph of prose (no heading, list, table, code or label), as plain text."""
    for code, seg in _segments(body):
        if code:
            continue
        for block in re.split(r"\n[ \t]*\n", seg):
            block = block.strip()
            first = block.split("\n", 1)[0]
            if (
                not block
                or first.startswith(("#", "|", "<", "!", ">"))
                or _LIST_OR_QUOTE.match(first)
                or re.fullmatch(r"\*\*[^*]+\*\*", first)
            ):
                continue
            text = _plain(" ".join(block.split()))
            return _clip(text, limit) if text else ""
    return ""


def _plain(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"(\*\*|__|\*|_|`)(\S(?:.*?\S)?)\1", r"\2", text).strip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= limit // 3:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0] + "…"
