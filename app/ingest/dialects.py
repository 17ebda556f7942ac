"""Help-center markdown dialects rewritten to plain CommonMark at load time. Pure: no I/O.

What is rewritten (everything outside fenced code and inline code spans; code is never touched):
- HTML comments `<!-- … -->`, Obsidian comments `%% … %%` and inline `<script>`/`<style>`
  elements are removed.
- Obsidian callouts `> [!note] Title` (foldable `-`/`+`, nested), MkDocs admonitions
  (`!!! note "Title"`, `??? tip`, indented body) and content tabs (`=== "macOS"`), and
  Docusaurus and VitePress containers (`:::tip Title` …
  `:::`, `:::tip[Title]`, `::: warning`) become a bold title line followed by their body as
  ordinary paragraphs, so the body is searchable and quotable like any other text. VitePress's
  `::: details Title` is a section named by its title, `::: code-group` one tab per fence
  (named by its `[label]`); `[[toc]]` and a fence's line marks (`js{2}`) are dropped.
- MyST (Sphinx's Markdown) directives, in colon or backtick fences (`:::{note}`,
  ```` ```{warning} ````): Sphinx's admonitions and version notes become callouts,
  `{dropdown} Title` a section, `{tab-set}` of `{tab-item} Label` tabs, `{code-block} py` a
  code fence; `{toctree}`, `{include}`, `{image}`, `{raw}` … show nothing (counted); any other
  keeps its body; a directive's options (`:class: tip`) are dropped. Roles (`{ref}`Billing
  <billing>``) become their text and target lines (`(install)=`) vanish.
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
- MDX: `import`/`export` statements (to the blank line that ends them) and `{/* comments */}`
  are dropped; Mintlify-style components (`<Steps>`, `<Accordion>`, `<Card>`, `<Prompt>`,
  `<Visibility>`, `<ResponseField>`) are rendered by `templates.jsx_blocks`; JSX components
  (`<Tabs>`, `<TabItem label="macOS">`) lose their tags and keep their text (a tab's label
  becomes a bold line); lowercase HTML tags are dropped with their text kept, since help pages
  render markdown with raw HTML disabled; a raw HTML heading alone on its line (`<h3>…</h3>`)
  becomes the Markdown heading of its level, so the page's sections stay sections.

Anything the rewrite could not resolve (an embed of a missing note or heading) is returned as a
warning for the ingest report; the text falls back to the link's label.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

from app.ingest.sections import closes_fence
from app.ingest.tables import fix_tables
from app.ingest.templates import (
    ICON,
    TAB,
    TABS_CLOSE,
    TABS_OPEN,
    Rendering,
    jsx_blocks,
    render_templates,
    tab_block,
)

# a link's target and the linking page's folder → the help-page URL, "" for plain text (a local
# target that is not a page of the folder), None to keep the link as written (external)
LinkResolver = Callable[[str, str], "str | None"]

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
    r"(?:[ \t]+\"(.*)\"|[ \t]+([^\"\s][^\"]*?))?[ \t]*$"
)
_MKDOCS_TAB = re.compile(r"^===[+!]?[ \t]+\"(.*)\"[ \t]*$")
_ICON = re.compile(r":(?:material|octicons|fontawesome|simple)-[\w-]+:")
_ATTR = r"(?:[.#][\w-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+))"
_ATTR_LIST = re.compile(rf"[ \t]*\{{:?[ \t]*{_ATTR}(?:[ \t]+{_ATTR})*[ \t]*\}}")
_DOCUSAURUS_OPEN = re.compile(
    r"^ {0,3}(:{3,})[ \t]*([A-Za-z][\w-]*)(?:\[(.*)\])?(?:\{[^{}]*\})?(?:[ \t]+(.*))?$"
)
_DOCUSAURUS_CLOSE = re.compile(r"^ {0,3}(:{3,})[ \t]*$")
# MyST (Sphinx's Markdown): a directive in a colon or backtick fence, `{name}` then its argument;
# its options (`:class: tip`, or a `---` block of them) open its body; a role `{ref}`text``; a
# target line `(label)=`
_MYST_OPEN = re.compile(r"^ {0,3}(:{3,}|`{3,}|~{3,})\{([A-Za-z][\w:-]*)\}[ \t]*(.*)$")
_MYST_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")
_MYST_ROLE = re.compile(r"\{[A-Za-z][\w:-]*\}\x00(\d+)\x00")  # its code span already hidden
_MYST_TARGET = re.compile(r"^ {0,3}\([\w.:-]+\)=[ \t]*$")
# a fence's info after its language: VitePress line marks (`{2,4-5}`, `:line-numbers=3`)
_FENCE_INFO = re.compile(
    r"^( {0,3}(?:`{3,}|~{3,}))[ \t]*([\w+#.-]+)(?:[ \t]*(?:\{[\d,\s-]*\}|:(?:no-)?line-numbers"
    r"(?:=\d+)?))+[ \t]*$"
)
_FENCE_LABEL = re.compile(r"[ \t]*\[([^\]\n]+)\][ \t]*$")
_TOC_MARKER = re.compile(r"^[ \t]*(?:\[\[toc\]\]|\$\{toc\})[ \t]*$", re.IGNORECASE)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_SCRIPT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_OBSIDIAN_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.DOTALL)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_MDX_IMPORT = re.compile(r"^(?:import|export)\s.*$")
_ESM_IMPORT = re.compile(r"""^import\s+[\w${}*,\s]+\s+from\s+["'][^"'\s]+["'];?[ \t]*$""", re.M)
_MDX_SNIPPET_IMPORT = re.compile(
    r"""^import\s+([A-Z]\w*)\s+from\s+["'](/?[^"'\s]+\.mdx?)["'];?[ \t]*$"""
)
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
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1\s*>\s*$", re.IGNORECASE)
# a definition list's term opening its line (closed there or on a later line): an FAQ's
# question, a glossary's word
_HTML_TERM = re.compile(r"^\s*<dt\b[^>]*>(.*?)(?:</dt\s*>)?\s*$", re.IGNORECASE)
_TAG = re.compile(r"</?([A-Za-z][\w.:-]*)(?:\s(?:[^<>{}]|\{[^{}]*\})*)?/?>")
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)\s")
_SPACE_BEFORE_PUNCT = re.compile(r"(?<=\S)[ \t]+([.,;:!?)])(?=\s|$)")
_SPACES = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
_BLANKS = re.compile(r"\n{3,}")
_BLOCK_IAL = re.compile(r"^ {0,3}\{:\s*(?:\.([\w-]+))?[^}]*\}\s*$")
_CALLOUT_CLASSES = frozenset(
    [
        "note",
        "tip",
        "info",
        "warning",
        "danger",
        "caution",
        "important",
        "highlight",
        "success",
        "error",
    ]
)
_SNIPPET = re.compile(r"^ {0,3}-{1,2}8<-{1,2}[ \t]*(.*)$")
_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]\n]|\[[^\]\n]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"([^\"]*)\")?\s*\)"
)
_MULTILINE_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*\n(?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?"
    r"(?:\s+\"([^\"]*)\")?\s*\)"
)
BOLD_LABEL_WORDS = 10  # a longer bold line is an emphasised sentence, not a sub-heading
# a heading whose whole text is bold (`### **Billing**`, as GitBook's editor exports it)
_BOLD_HEADING = re.compile(r"^(\*\*|__)(?=\S)(.+?)(?<=\S)\1((?:[ \t]*<a\b[^>]*>\s*</a>)?)$")
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*)<?(\S+?)>?((?:[ \t]+.*)?)$")
_TEXT_PROP = re.compile(
    r"\b(?:k|keys?|label|title|text|children|name|shortcut|value)="
    r"(?:\"([^\"]*)\"|'([^']*)'|\{[\"'`]([^\"'`]*)[\"'`]\})"
)


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
    links: LinkResolver | None = None
    removed: Counter[str] = field(default_factory=Counter)


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
    meta: Mapping[str, Any] | None = None,
    links: LinkResolver | None = None,
    removed: Counter[str] | None = None,
) -> str:
    """`body` in plain CommonMark; unresolved embeds and links are appended to `warnings`,
    template tags that could not be rendered are counted in `removed` (never shown).

    `meta` is the page's front matter (for `page.*` and `param`), `links` resolves a link's
    target to a help page (`LinkResolver`); without it local links keep their target."""
    ctx = _Context(
        index=index or NoteIndex(),
        folder=folder,
        warnings=warnings if warnings is not None else [],
        seen=(self_slug,) if self_slug else (),
        depth=0,
        links=links,
        removed=removed if removed is not None else Counter(),
    )
    text = body.replace("\r\n", "\n")
    text = _strip_comments(_snippet_embeds(text) if mdx else text, mdx=mdx)
    state = Rendering(meta=meta or {}, removed=ctx.removed, mdx=mdx)
    text = jsx_blocks(render_templates(text, state), mdx=mdx)
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
            if closes_fence(line, fence):
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
                seg = _drop_esm(seg)
            seg = _restore(seg, spans)
        parts.append(seg)
    return "\n".join(parts)


def imports_modules(text: str) -> bool:
    """A Markdown page written as MDX: outside code, a line imports a module (`import useBaseUrl
    from '@docusaurus/useBaseUrl';`). Docusaurus reads `.md` files as MDX, and a statement of
    that shape is never prose, so such a page is read as MDX whatever its extension."""
    return any(not code and _ESM_IMPORT.search(seg) for code, seg in _segments(text))


def snippet_imports(text: str, folder: str = "") -> list[str]:
    """The files an MDX page imports as snippets, as paths from the docs root ("/snippets/a.mdx"
    from the root, "./_a.mdx" from the page's folder)."""
    found = (_MDX_SNIPPET_IMPORT.match(line) for line in text.split("\n"))
    targets = [m.group(2) for m in found if m]
    return [
        t.lstrip("/") if t.startswith("/") else posixpath.normpath(posixpath.join(folder, t))
        for t in targets
    ]


def _snippet_embeds(text: str) -> str:
    """An MDX page's imported Markdown snippet (`import Setup from "/snippets/setup.mdx"`) used
    alone on its line (`<Setup />`) becomes an embed of that file (`![[snippets/setup.mdx]]`),
    read where it is used; the import itself is dropped with the other ESM."""
    found = (_MDX_SNIPPET_IMPORT.match(line) for line in text.split("\n"))
    names = {m.group(1): m.group(2).lstrip("/") for m in found if m}
    if not names:
        return text
    use = re.compile(rf"^([ \t]*)<({'|'.join(names)})\b[^<>]*/>[ \t]*$", re.MULTILINE)
    parts = []
    for code, seg in _segments(text):
        if not code:
            seg = use.sub(lambda m: f"{m.group(1)}![[{names[m.group(2)]}]]", seg)
        parts.append(seg)
    return "\n".join(parts)


def _drop_esm(text: str) -> str:
    """MDX `import`/`export` statements removed: each runs from its first line to a blank line
    where its brackets are closed (an exported component's body spans lines)."""
    out: list[str] = []
    depth: int | None = None  # open brackets of the statement being dropped
    for line in text.split("\n"):
        if depth is None and _MDX_IMPORT.match(line):
            depth = 0
        if depth is None:
            out.append(line)
            continue
        if not line.strip() and depth <= 0:
            depth = None
            out.append(line)
            continue
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
    return "\n".join(out)


def _blocks(text: str, ctx: _Context, *, nested: bool = False) -> str:
    """Rewrite block-level dialects; hand every other line to the inline pass (`nested`: the
    body of a callout, whose own lines head nothing outside it)."""
    state = _BlockState(text.split("\n"), ctx, nested)
    while state.i < len(state.lines):
        line = state.lines[state.i]
        if state.mkdocs_run and line.strip() and not _MKDOCS_TAB.match(line):
            state.flush()
            state.close_tab_runs(mkdocs_only=True)
        if not any(handler(state, line) for handler in _BLOCK_HANDLERS):
            state.prose_line(line)
    state.flush()
    state.close_tab_runs()
    return "\n".join(state.out)


class _BlockState:
    """Where the block pass is: its output, the prose waiting for the inline pass, the heading
    level it sits under (1 = the title) and the open tab groups (their base levels)."""

    def __init__(self, lines: list[str], ctx: _Context, nested: bool = False) -> None:
        self.lines, self.ctx, self.nested = lines, ctx, nested
        self.out: list[str] = []
        self.prose: list[str] = []
        self.level = self.heading = 1  # `heading`: the level of the last real heading
        self.i = 0
        self.tab_bases: list[int] = []
        self.mkdocs_run = False  # inside a run of MkDocs `===` tabs (one group)
        # the level a titled section outside any tab group sits under (`<details>`, expand):
        # the next such section is its sibling, not its child, until a real heading
        self.loose_base: int | None = None

    def flush(self) -> None:
        if self.prose:
            text = fix_tables("\n".join(self.prose))
            self.out.append(_inline(text, self.ctx, self.level))
            self.prose.clear()

    def emit(self, block: str) -> None:
        self.flush()
        self.out.append(block)

    def prose_line(self, line: str) -> None:
        if h := _HEADING.match(line):
            self.level = self.heading = len(h.group(1))
            self.loose_base = None
            if bold := _BOLD_HEADING.match(h.group(2)):
                line = f"{h.group(1)} {bold.group(2)}{bold.group(3)}"
        elif (label := self._bold_label(line)) is not None:
            self.level = self.heading + 1
            line = f"{'#' * self.level} {label}"
        self.prose.append(line)
        self.i += 1

    def _bold_label(self, line: str) -> str | None:
        """A paragraph that is one short bold phrase ("**Once the billing period ends**") heads
        the paragraphs after it, as a heading one level below the page's last heading would:
        help centers write sub-headings so. Not a sentence or a lead-in (ending in ".", "!", ":",
        ";" or ","), not a text's first or last line, not inside a callout or a tab, and only while
        that level is still a section (H2, H3)."""
        text = line.rstrip()
        bold = (
            _BOLD_HEADING.match(text.lstrip(" "))
            if len(text) - len(text.lstrip(" ")) <= 3
            else None
        )
        if bold is None or bold.group(3) or set(bold.group(2)) & set("*_\n"):
            return None
        if self.nested or self.i == 0 or self.heading + 1 > 3 or self.tab_bases or self.mkdocs_run:
            return None
        label = bold.group(2).strip()
        after = self.lines[self.i + 1 : self.i + 3]
        if self.lines[self.i - 1].strip() or len(after) < 2:
            return None
        if after[0].strip() or not after[1].strip():
            return None
        if label[-1] in ".!:;," or len(label.split()) > BOLD_LABEL_WORDS:
            return None
        return label

    def open_tabs(self) -> None:
        self.tab_bases.append(self.level if self.loose_base is None else self.loose_base)

    def tab_heading(self, label: str) -> None:
        if self.tab_bases:
            base = self.tab_bases[-1]
        else:
            base = self.level if self.loose_base is None else self.loose_base
            self.loose_base = base
        self.level = min(base + 1, 6)
        if bold := _BOLD_HEADING.match(label.strip()):
            label = bold.group(2)
        text = _inline(label, self.ctx, self.level, heading=True).strip() or "Tab"
        self.emit(f"\n{'#' * self.level} {text}\n")

    def close_tabs(self) -> None:
        if self.tab_bases:
            self.level = self.tab_bases.pop()

    def close_tab_runs(self, *, mkdocs_only: bool = False) -> None:
        if self.mkdocs_run:
            self.mkdocs_run = False
            self.close_tabs()
        if not mkdocs_only:
            while self.tab_bases:
                self.close_tabs()

    def indented_block(self, start: int) -> tuple[str, int]:
        """The indented body after line `start` (blank lines inside it kept), dedented."""
        j = start + 1
        lines = self.lines
        while j < len(lines) and (not lines[j].strip() or lines[j][:1] in (" ", "\t")):
            j += 1
        while j > start + 1 and not lines[j - 1].strip():
            j -= 1
        return "\n".join(_dedent(ln) for ln in lines[start + 1 : j]), j


def _fenced_block(state: _BlockState, line: str) -> bool:
    if not (fence := _FENCE.match(line)):
        return False
    last = _fence_end(state.lines, state.i, fence.group(1))
    opening = _FENCE_INFO.sub(r"\1\2", line)  # `js{2}`, `ts:line-numbers`: the language
    state.emit("\n".join([opening, *state.lines[state.i + 1 : last + 1]]))
    state.i = last + 1
    return True


def _tab_marker(state: _BlockState, line: str) -> bool:
    stripped = line.strip()
    if stripped == TABS_OPEN:
        state.flush()
        state.open_tabs()
    elif stripped == TABS_CLOSE:
        state.flush()
        state.close_tabs()
    elif stripped.startswith(TAB):
        state.tab_heading(stripped[len(TAB) :])
    else:
        return False
    state.i += 1
    return True


def _footnote(state: _BlockState, line: str) -> bool:
    if not (m := _FOOTNOTE_DEF.match(line)):
        return False
    rest, j = state.indented_block(state.i)
    inner = "\n".join([m.group(2), rest])
    state.emit(f"\n{_blocks(inner.strip(), state.ctx).strip()}\n")
    state.i = j
    return True


def _obsidian_callout(state: _BlockState, line: str) -> bool:
    if not (m := _CALLOUT.match(line)):
        return False
    j = state.i + 1
    while j < len(state.lines) and state.lines[j].lstrip().startswith(">"):
        j += 1
    inner = "\n".join(_unquote(ln) for ln in state.lines[state.i + 1 : j])
    block = _admonition(m.group(1), m.group(2), inner, state.ctx)
    indent = line[: len(line) - len(line.lstrip(" "))]  # inside a list item it stays there
    state.emit("\n".join(f"{indent}{ln}" if ln.strip() else ln for ln in block.split("\n")))
    state.i = j
    return True


def _mkdocs(state: _BlockState, line: str) -> bool:
    m = _MKDOCS.match(line)
    tab = None if m else _MKDOCS_TAB.match(line)
    if not (m or tab):
        return False
    inner, j = state.indented_block(state.i)
    if tab:
        state.flush()
        if not state.mkdocs_run or line.startswith("===!"):
            state.close_tab_runs(mkdocs_only=True)
            state.open_tabs()
            state.mkdocs_run = True
        state.tab_heading(_ICON.sub("", tab.group(1)).strip())
        state.emit(_blocks(inner, state.ctx).strip("\n"))
    else:
        assert m is not None
        # `!!! note ""` asks for no title at all; unquoted words after the type are its title
        kind = "" if m.group(2) == "" else m.group(1)
        state.emit(_admonition(kind, m.group(2) or m.group(3) or "", inner, state.ctx))
    state.i = j
    return True


def _docusaurus(state: _BlockState, line: str) -> bool:
    if not (m := _DOCUSAURUS_OPEN.match(line)):
        return False
    close = _docusaurus_end(state.lines, state.i, len(m.group(1)))
    if close is None:
        return False
    title = m.group(3) or m.group(4) or ""
    inner = "\n".join(state.lines[state.i + 1 : close])
    kind = m.group(2).lower()
    if kind == "details":  # VitePress's collapsible block: a section named by its title
        state.flush()
        state.tab_heading(title.strip() or "Details")
        state.emit(_blocks(inner, state.ctx).strip("\n"))
    elif kind == "code-group":  # VitePress's tabs of code, each named by its fence's label
        _code_group(state, inner)
    else:
        state.emit(_admonition(m.group(2), title, inner, state.ctx))
    state.i = close + 1
    return True


def _code_group(state: _BlockState, inner: str) -> None:
    """Each fenced block of a code group under a tab heading named by its `[label]`."""
    lines = inner.split("\n")
    state.flush()
    state.open_tabs()
    j = 0
    while j < len(lines):
        fence = _FENCE.match(lines[j])
        if not fence:
            j += 1
            continue
        last = _fence_end(lines, j, fence.group(1))
        label = _FENCE_LABEL.search(lines[j])
        info = _FENCE_INFO.sub(r"\1\2", _FENCE_LABEL.sub("", lines[j]))
        state.tab_heading(label.group(1).strip() if label else info.strip("`~ ") or "Code")
        state.emit("\n".join([info, *lines[j + 1 : last + 1]]))
        j = last + 1
    state.flush()
    state.close_tabs()


def _kramdown_ial(state: _BlockState, line: str) -> bool:
    """`{: .warning }` before or after a paragraph makes it a callout; other IALs vanish."""
    if not (m := _BLOCK_IAL.match(line)):
        return False
    kind = (m.group(1) or "").removesuffix("-title")
    para: list[str] = []
    if kind in _CALLOUT_CLASSES and state.prose and state.prose[-1].strip():
        while state.prose and state.prose[-1].strip():
            para.insert(0, state.prose.pop())
        state.i += 1
    elif kind in _CALLOUT_CLASSES:
        j = state.i + 1
        while j < len(state.lines) and state.lines[j].strip():
            para.append(state.lines[j])
            j += 1
        state.i = j
    else:
        state.i += 1
        return True
    body = "\n".join(_unquote(ln) for ln in para)
    state.emit(_admonition(kind, "", body, state.ctx))
    return True


def _snippet(state: _BlockState, line: str) -> bool:
    """MkDocs `--8<-- "file.md"`: that file's text, or nothing (with a warning)."""
    if not (m := _SNIPPET.match(line)):
        return False
    name = m.group(1).strip().strip("\"'")
    state.i += 1
    if not name:
        return True
    note = state.ctx.index.resolve(PurePosixPath(name).with_suffix("").as_posix())
    note = note or state.ctx.index.resolve(PurePosixPath(name).stem)
    if note is None or note.slug in state.ctx.seen or state.ctx.depth >= MAX_EMBED_DEPTH:
        state.ctx.warnings.append(f"snippet --8<-- {name!r}: no such file in the folder")
        return True
    inner = _Context(
        state.ctx.index,
        note.folder,
        state.ctx.warnings,
        (*state.ctx.seen, note.slug),
        state.ctx.depth + 1,
        state.ctx.links,
        state.ctx.removed,
    )
    raw = _shift_headings(note.body, _shift(note.body, state.level))
    state.emit(_blocks(_strip_comments(raw, mdx=False), inner))
    return True


# MyST directives that show no text of their own: a table of contents, an include resolved at
# build time, raw output, an image, autodoc
_MYST_SILENT = frozenset(
    ["toctree", "contents", "index", "include", "literalinclude", "raw", "eval-rst", "image"]
)
# MyST's callouts (Sphinx's admonitions and version notes)
_MYST_CALLOUTS = frozenset(
    [
        *("admonition", "note", "tip", "hint", "important", "warning", "caution", "attention"),
        *("danger", "error", "seealso", "versionadded", "versionchanged", "deprecated"),
    ]
)


def _myst(state: _BlockState, line: str) -> bool:
    """A MyST directive: a callout (`{note}`, `{warning}`, `{admonition} Title`, `{seealso}`,
    `{versionadded} 2.1` …), a titled section (`{dropdown} Title`), tabs (`{tab-set}` of
    `{tab-item} Label`), a code block (`{code-block} python`); the silent ones are dropped and
    counted, any other keeps its body. Its options are not text."""
    if not (m := _MYST_OPEN.match(line)):
        return False
    fence, name, arg = m.group(1), m.group(2).lower(), m.group(3).strip()
    if fence[0] == ":":
        close = _docusaurus_end(state.lines, state.i, len(fence))
        if close is None:
            return False
    else:
        close = _fence_end(state.lines, state.i, fence)
    body = state.lines[state.i + 1 : close]
    if body and body[0].strip() == "---" and "---" in (b.strip() for b in body[1:]):
        body = body[[b.strip() for b in body].index("---", 1) + 1 :]
    while body and _MYST_OPTION.match(body[0]):
        body = body[1:]
    inner = "\n".join(body)
    rest = state.lines[close + 1 :]
    if name in ("code-block", "code", "sourcecode", "code-cell"):
        state.emit("\n".join([f"```{arg.split()[0] if arg else ''}", inner, "```"]))
    elif name in _MYST_SILENT:
        state.ctx.removed[f"myst:{name}"] += 1
    elif name in ("tab-set", "tab-set-code"):
        state.lines = [*state.lines[: state.i], TABS_OPEN, *body, TABS_CLOSE, *rest]
        return True
    elif name in ("tab-item", "dropdown"):
        state.lines = [*state.lines[: state.i], *tab_block(arg, inner).split("\n"), *rest]
        return True
    elif name in _MYST_CALLOUTS:
        title = arg if name == "admonition" or name.startswith(("version", "deprecated")) else ""
        if title and name != "admonition":
            title = f"{name.replace('version', 'version ').capitalize()} {title}"
        if arg and not title:
            inner = f"{arg}\n{inner}"  # `{note} text`: the note's first line
        state.emit(_admonition(name, title, inner, state.ctx))
    else:  # a directive of its own (`{figure}`, `{list-table}` …): what it says, without it
        state.lines = [*state.lines[: state.i], *body, *rest]
        return True
    state.lines = [*state.lines[: state.i], *rest]
    return True


_BLOCK_HANDLERS = (
    _myst,
    _fenced_block,
    _tab_marker,
    _footnote,
    _obsidian_callout,
    _mkdocs,
    _docusaurus,
    _kramdown_ial,
    _snippet,
)


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    for j in range(start + 1, len(lines)):
        if closes_fence(lines[j], fence):
            return j
    return len(lines) - 1


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


def _admonition(kind: str, title: str, inner: str, ctx: _Context) -> str:
    """A callout as the section tree reads it: a blockquote led by its bold label,
    `> **Warning:** text` (the label alone on its line before a list, table or code)."""
    label = _ICON.sub("", title).strip() or kind.replace("-", " ").replace("_", " ").capitalize()
    label = _inline(label, ctx, 6, heading=True).strip()
    label = label.strip("*").strip() if label.startswith("**") else label
    body = _blocks(inner, ctx, nested=True).strip("\n")
    if not label:
        return f"\n{body}\n"
    head = label if label[-1:] in ":?!." else f"{label}:"
    lines = body.split("\n") if body.strip() else []
    first = lines[0] if lines else ""
    if first.strip() and not (
        _LIST_OR_QUOTE.match(first) or first.lstrip().startswith(("|", "#", "```", "~~~", ">"))
    ):
        lines[0] = f"**{head}** {first.strip()}"
    else:
        lines = [f"**{head}**", *([""] if lines else []), *lines]
    quoted = "\n".join(f"> {ln}" if ln.strip() else ">" for ln in lines)
    return f"\n{quoted}\n"


def _inline(text: str, ctx: _Context, level: int, *, heading: bool = False) -> str:
    """Inline rewrites on prose; inline code spans are protected."""
    text = _ESCAPED_WIKILINK.sub(r"`[[\1]]`", text)  # syntax the author meant to show
    text, spans = _hide_code(text)
    text = _MYST_ROLE.sub(lambda m: _myst_role(spans[int(m.group(1))]), text)
    lines = []
    for line in text.split("\n"):
        if (
            _BLOCK_ID_LINE.match(line)
            or _MYST_TARGET.match(line)
            or (_TOC_MARKER.match(line) and ctx.index.resolve("toc", ctx.folder) is None)
        ):
            continue  # a block id, or a table-of-contents marker (VitePress `[[toc]]`)
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
        line = _tags(line, ctx, level)
        line = ICON.sub("", line)
        if ctx.links is not None:
            line = _LINK.sub(partial(_link, ctx=ctx, plain=is_heading), line)
            line = _REF_DEF.sub(partial(_ref_def, ctx=ctx), line)
        if not _LIST_OR_QUOTE.match(line) and line.strip():
            line = _SPACES.sub(" ", line)
        if line.strip() and not line.lstrip().startswith("|"):
            line = _SPACE_BEFORE_PUNCT.sub(r"\1", line)  # where a removed tag or icon stood
        lines.append(line.rstrip() if line.strip() else "")
    text = "\n".join(lines)
    if ctx.links is not None and "](" in text:  # a link whose text runs over a line break
        text = _MULTILINE_LINK.sub(partial(_link, ctx=ctx, plain=False), text)
    return _restore(text, spans)


def _myst_role(span: str) -> str:
    """A MyST role as its text, from its code span: `{ref}`Billing <billing-page>`` →
    "Billing", `{kbd}`Ctrl+C`` → "Ctrl+C", `{doc}`~guides/setup`` → "guides/setup"."""
    content = span.strip("`").strip()
    if (cut := content.rfind(" <")) > 0 and content.endswith(">"):
        return content[:cut].strip()
    return content.lstrip("~!").strip()


def _tags(line: str, ctx: _Context, level: int = 1) -> str:
    """Drop HTML/JSX tags, keep their text. A self-closing component with a text prop
    (`<Key k="ctrl" />`) becomes that text; other empty components vanish, counted. An HTML
    heading heads a section at its level, and a definition list's term (`<dt>`, an FAQ's
    question) one below the heading it sits under (`level`), its `<dd>` then its section."""

    def repl(m: re.Match[str]) -> str:
        tag = m.group(0)
        if tag.startswith("</") or not m.group(1)[:1].isupper():
            return ""
        prop = _TEXT_PROP.search(tag)
        if prop:
            return next((g for g in prop.groups() if g is not None), "")
        if tag.endswith("/>"):
            ctx.removed[f"jsx:<{m.group(1)} />"] += 1
        return ""

    if not _TAG.search(line):
        return line
    if heading := _HTML_HEADING.match(line):  # "<h3>Limits</h3>" heads a section as "### Limits"
        text = _tags(heading.group(2), ctx).strip()
        return f"{'#' * int(heading.group(1))} {text}" if text else ""
    if term := _HTML_TERM.match(line):
        text = _tags(term.group(1), ctx).strip()
        return f"{'#' * min(level + 1, 6)} {text}" if text else ""
    replaced = _TAG.sub(repl, line)
    return replaced if replaced.strip() else ""


def _link(m: re.Match[str], *, ctx: _Context, plain: bool) -> str:
    text, target = m.group(1), m.group(2)
    if m.group(3) == "mention":
        text = _mention_text(text, target, ctx.folder)
    assert ctx.links is not None
    url = ctx.links(target, ctx.folder)
    if url is None:
        return m.group(0)
    if not url:
        if target and not target.startswith("#"):
            ctx.warnings.append(f"link to {target!r}: no such page in the folder (kept as text)")
        return text
    return text if plain else f"[{text}]({url})"


def _mention_text(text: str, target: str, folder: str) -> str:
    """A GitBook mention (`[page.md](page.md "mention")`) shows the page's name where its
    reader sees the title: the file (or folder, for a README) named in words."""
    path = PurePosixPath(target.split("#", 1)[0].rstrip("/"))
    if text.strip() not in (path.name, path.stem, target.strip()):
        return text
    where = PurePosixPath(posixpath.normpath(PurePosixPath(folder or ".") / path))
    stem = where.parent.name if where.stem.lower() in ("readme", "index") else where.stem
    words = re.sub(r"[-_]+", " ", unquote(stem)).strip()
    return words[:1].upper() + words[1:] if words else text


def _ref_def(m: re.Match[str], *, ctx: _Context) -> str:
    assert ctx.links is not None
    url = ctx.links(m.group(2), ctx.folder)
    if url is None:
        return m.group(0)
    return f"{m.group(1)}{url or '#'}{m.group(3)}"


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
    inner = _Context(
        ctx.index,
        note.folder,
        ctx.warnings,
        (*ctx.seen, note.slug),
        ctx.depth + 1,
        ctx.links,
        ctx.removed,
    )
    mdx = note_name.lower().endswith(".mdx")
    raw = _strip_comments(_shift_headings(raw, shift), mdx=mdx)
    raw = render_templates(raw, Rendering(mdx=mdx))
    text = _blocks(jsx_blocks(raw, mdx=mdx), inner)
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
            if closes_fence(line, fence):
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
    parts: list[str] = []
    for code, seg in _segments(text):
        # prose before a code block ends with one blank line, as between any two blocks
        if not code:
            seg = re.sub(r"\n{2,}$", "\n", _BLANKS.sub("\n\n", seg))
            seg = re.sub(r"^\n{2,}", "\n", seg) if parts else seg  # and after one, one too
        parts.append(seg)
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
