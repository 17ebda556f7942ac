"""reStructuredText pages (Sphinx, Read the Docs) to the markdown every other format becomes.

docutils parses the page (with Sphinx's directives and roles from `app.ingest.rst_sphinx`);
this module writes the tree as the markdown `app.ingest.sections` reads, so an RST page gets
the same section tree as a Markdown or HTML one:

- title: the page's first section title; its sections become `##`, deeper ones `###`;
- paragraphs, bullet and numbered lists (nested items under their parent, `#.` numbered),
  tables (grid, simple, `list-table`, `csv-table`) as pipe tables with their header row,
  literal blocks and `code-block` as fenced code with the language;
- admonitions (`note`, `warning`, …, `seealso`, `versionadded`, `admonition`) as callouts
  (`> **Note:** …`), tabs (sphinx-tabs, sphinx-design) as `####` headings named by the tab;
- definition and field lists as "**term:** text" lines, figures by caption (an image by its
  explicit alt text);
- comments, targets, substitution definitions, `toctree`/`contents` and whatever docutils
  could not resolve leave no markup: an unresolved reference reads as its words.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from docutils import nodes, utils
from docutils.core import publish_doctree

from app.ingest.rst_project import plain, project_for
from app.ingest.rst_sphinx import CURRENT, Page, register, tab_label, tab_panel
from app.links import heading_anchor

_SPACE = re.compile(r"\s+")
_SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "input_encoding": "unicode",
    "_disable_config": True,
    "language_code": "en",
}
_CALLOUT_LABELS = {
    "note": "Note",
    "warning": "Warning",
    "tip": "Tip",
    "important": "Important",
    "attention": "Attention",
    "caution": "Caution",
    "danger": "Danger",
    "error": "Error",
    "hint": "Hint",
}
_BLOCK_STARTS = ("- ", "1. ", "```", "> ", "|", "#")
_SILENT = (
    nodes.comment,
    nodes.target,
    nodes.substitution_definition,
    nodes.system_message,
    nodes.pending,
    nodes.raw,
    nodes.meta,
    nodes.docinfo,
    nodes.transition,
    nodes.label,
)


LOADING: ContextVar[Path | None] = ContextVar("rst_loading", default=None)


@contextmanager
def loading_folder(folder: Path) -> Iterator[None]:
    """Within: pages are read as part of `folder` (a Sphinx project's root without conf.py)."""
    token = LOADING.set(folder)
    try:
        yield
    finally:
        LOADING.reset(token)


def rst_page(text: str, path: Path, folder: Path | None = None) -> tuple[dict[str, Any], str]:
    """Metadata (title, summary, tags) and a markdown body for one RST page of the loaded
    `folder`. Raises `RstError` when docutils cannot read the page at all."""
    project = project_for(path, folder)
    source = "\n".join(part for part in (project.prolog, text, project.epilog) if part)
    register(source)
    token = CURRENT.set(Page(project, project.doc_of(path), path))
    try:
        settings = {**_SETTINGS, "warning_stream": io.StringIO()}
        tree = publish_doctree(source, source_path=str(path), settings_overrides=settings)
        writer = _Writer(tree)
        blocks = writer.render()
    except (RecursionError, ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise RstError(f"could not read it as reStructuredText ({problem})") from exc
    finally:
        CURRENT.reset(token)
    meta: dict[str, Any] = {}
    if writer.title:
        meta["title"] = writer.title
    if writer.summary:
        meta["summary"] = writer.summary
    if writer.keywords:
        meta["tags"] = writer.keywords
    return meta, "\n\n".join(b for b in blocks if b.strip())


def excluded(path: Path, folder: Path | None = None) -> bool:
    """Whether the project's conf.py leaves this page out (`exclude_patterns`)."""
    return project_for(path, folder).excludes(path)


class RstError(ValueError):
    """A page docutils could not read (reported for the file; the rest of the folder loads)."""


class _Writer:
    """One parsed page as markdown blocks."""

    def __init__(self, tree: nodes.document) -> None:
        self.tree = tree
        tops = [c for c in tree.children if isinstance(c, nodes.section)]
        self.title = _plain(tops[0].next_node(nodes.title)) if tops else ""
        # one top section holds the page: its title is the page's, its sections are `##`
        self.offset = 1 if len(tops) == 1 else 0
        self.first = tops[0] if tops else None
        self.anchors = {  # the page's own title has no anchor: a link to it is its words
            i: heading_anchor(_plain(s.next_node(nodes.title)))
            for s in tree.findall(nodes.section)
            if s is not self.first
            for i in s["ids"]
        }
        self.summary = _meta(tree, "description")
        self.keywords = [k.strip() for k in _meta(tree, "keywords").split(",") if k.strip()]

    def render(self) -> list[str]:
        return self.blocks(self.tree, 0)

    def blocks(self, node: nodes.Node, depth: int) -> list[str]:
        out: list[str] = []
        children = list(node.children)
        for k, child in enumerate(children):
            said = self.block(child, depth)
            out.extend(said)
            following = next((c for c in children[k + 1 :] if not isinstance(c, _SILENT)), None)
            ends_tabs = said and _holds_tabs(child) and following is not None
            if ends_tabs and not isinstance(following, (nodes.section, tab_panel)):
                out.append("---")  # what follows a tab set is not in its last tab
        return out

    def block(self, node: nodes.Node, depth: int) -> list[str]:
        if isinstance(node, _SILENT):
            return []
        for kind, handler in self.handlers():
            if isinstance(node, kind):
                return handler(node, depth)
        if isinstance(node, nodes.TextElement):
            text = self.inline(node)
            return [text] if text else []
        if isinstance(node, nodes.Element):
            return self.blocks(node, depth)
        return []

    def handlers(self) -> list[tuple[type, Callable[[Any, int], list[str]]]]:
        return [
            (nodes.section, self.section),
            (nodes.paragraph, self.paragraph),
            ((nodes.bullet_list, nodes.enumerated_list), self.listing),
            ((nodes.literal_block, nodes.doctest_block, nodes.math_block), self.code),
            ((nodes.Admonition, nodes.topic, nodes.sidebar), self.callout),
            (tab_panel, self.tab),
            (nodes.table, self.table),
            (nodes.definition_list, self.definitions),
            (nodes.field_list, self.fields),
            (nodes.option_list, self.options),
            (nodes.figure, self.figure),
            (nodes.image, self.image),
            (nodes.rubric, lambda n, d: [f"**{self.inline(n)}**"] if self.inline(n) else []),
            (
                nodes.line_block,
                lambda n, d: ["\n".join(self.inline(x) for x in n.findall(nodes.line))],
            ),
            ((nodes.footnote, nodes.citation), lambda n, d: self.blocks(n, d)),
            ((nodes.title, tab_label), lambda n, d: []),
        ]

    def section(self, node: nodes.section, depth: int) -> list[str]:
        level = depth + 1 - self.offset
        title = self.inline(node.next_node(nodes.title))
        first = node is self.first  # the page's title: not repeated as a heading
        head = [f"{'#' * min(max(level, 1) + 1, 3)} {title}"] if level >= 1 and title else []
        head = [] if first else head
        return head + self.blocks(node, depth + 1)

    def paragraph(self, node: nodes.paragraph, depth: int) -> list[str]:
        text = self.inline(node)
        return [text] if text else []

    def listing(self, node: nodes.Element, depth: int) -> list[str]:
        ordered = isinstance(node, nodes.enumerated_list)
        start = int(node.get("start", 1)) if ordered else 1
        lines: list[str] = []
        for n, item in enumerate(node.children, start=start):
            marker = f"{n}. " if ordered else "- "
            parts = self.blocks(item, depth)
            body = "\n".join(parts).split("\n") if parts else [""]
            lines.append((marker + body[0]).rstrip())
            lines.extend(" " * len(marker) + line if line else "" for line in body[1:])
        return ["\n".join(lines)]

    def code(self, node: nodes.Element, depth: int) -> list[str]:
        text = node.astext().strip("\n")
        if not text.strip():
            return []
        language = node.get("language") or next(
            (c for c in node.get("classes", []) if c not in ("code", "literal-block")), ""
        )
        fence = "````" if "```" in text else "```"
        return [f"{fence}{language}\n{text}\n{fence}"]

    def callout(self, node: nodes.Element, depth: int) -> list[str]:
        if "contents" in node.get("classes", []):
            return []
        title = node.next_node(nodes.title)
        label = self.inline(title) if title is not None and title.parent is node else ""
        if not label:
            label = _CALLOUT_LABELS.get(type(node).__name__, "")
        inner = "\n\n".join(self.blocks(node, depth)).strip()
        if not inner and not label:
            return []
        apart = inner.startswith(_BLOCK_STARTS)  # a list or code under the label, not in its line
        text = f"**{label}:**{chr(10) if apart else ' '}{inner}" if label else inner
        return ["\n".join(f"> {line}" if line else ">" for line in text.split("\n"))]

    def tab(self, node: tab_panel, depth: int) -> list[str]:
        label_node = node.next_node(tab_label)
        label = self.inline(label_node) if label_node is not None else "Tab"
        level = 5 if isinstance(node.parent.parent, tab_panel) else 4
        return [f"{'#' * level} {label or 'Tab'}", *self.blocks(node, depth)]

    def table(self, node: nodes.table, depth: int) -> list[str]:
        rows: list[list[str]] = []
        for row in node.findall(nodes.row):
            cells: list[str] = []
            for entry in row.children:
                text = " ".join(" ".join(self.blocks(entry, depth)).split())
                cells.append(text.replace("|", "\\|"))
                cells.extend("" for _ in range(int(entry.get("morecols", 0))))
            rows.append(cells)
        if not rows:
            return []
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        lines.extend("| " + " | ".join(r) + " |" for r in rows[1:])
        title = node.next_node(nodes.title)
        caption = [self.inline(title)] if title is not None and title.parent is node else []
        return [*caption, "\n".join(lines)]

    def definitions(self, node: nodes.definition_list, depth: int) -> list[str]:
        entries = []
        for item in node.children:
            term = " ".join(self.inline(t) for t in item.findall(nodes.term))
            definition = item.next_node(nodes.definition)
            entries.append((term, self.blocks(definition, depth) if definition else []))
        return [_entries(entries)]

    def fields(self, node: nodes.field_list, depth: int) -> list[str]:
        entries = []
        for field in node.children:
            name = self.inline(field.next_node(nodes.field_name))
            body = field.next_node(nodes.field_body)
            entries.append((name, self.blocks(body, depth) if body is not None else []))
        return [_entries(entries)]

    def options(self, node: nodes.option_list, depth: int) -> list[str]:
        lines = []
        for item in node.children:
            group = item.next_node(nodes.option_group)
            names = group.astext() if group is not None else ""
            description = item.next_node(nodes.description)
            text = " ".join(self.blocks(description, depth)) if description is not None else ""
            lines.append(f"- `{names}` {text}".rstrip())
        return ["\n".join(lines)]

    def figure(self, node: nodes.figure, depth: int) -> list[str]:
        parts = [self.inline(c) for c in node.findall(nodes.caption)]
        for legend in node.findall(nodes.legend):
            parts.extend(self.blocks(legend, depth))
        if not any(parts):
            image = node.next_node(nodes.image)
            return self.image(image, depth) if image is not None else []
        return [p for p in parts if p]

    def image(self, node: nodes.image, depth: int) -> list[str]:
        alt = _image_alt(node)
        return [alt] if alt else []

    # -- inline --------------------------------------------------------------------------

    def inline(self, node: nodes.Node | None) -> str:
        if node is None:
            return ""
        return _SPACE.sub(" ", self.span(node)).strip()

    def span(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return str(utils.unescape(str(node)))  # a backslash escape is kept as a NUL mark
        if isinstance(node, (*_SILENT, nodes.footnote_reference, nodes.citation_reference)):
            return ""
        if isinstance(node, nodes.problematic):
            return _unmarked(node.astext())
        inner = "".join(self.span(c) for c in node.children)
        return self.wrap(node, inner)

    def wrap(self, node: nodes.Node, inner: str) -> str:
        if not inner.strip():
            return inner if not isinstance(node, nodes.image) else _image_alt(node)
        if isinstance(node, nodes.literal):
            if "`" in inner:  # a code span holding backticks: a longer fence, spaced
                return f"`` {inner.strip()} ``"
            return f"`{inner.strip()}`"
        if isinstance(node, nodes.strong):
            return f"**{inner.strip()}**"
        if isinstance(node, nodes.reference):
            return self.link(node, inner)
        return inner

    def link(self, node: nodes.reference, inner: str) -> str:
        uri = str(node.get("refuri") or "")
        if not uri and node.get("refid"):
            anchor = self.anchors.get(str(node["refid"]))
            uri = f"#{anchor}" if anchor else ""
        if not uri or inner.strip() == uri:
            return inner if inner.strip() != uri or not uri else uri
        return f"[{inner.strip()}]({uri.strip().replace(' ', '%20')})"


def _holds_tabs(node: nodes.Node) -> bool:
    return isinstance(node, tab_panel) or (
        isinstance(node, nodes.Element) and any(isinstance(c, tab_panel) for c in node.children)
    )


def _entries(entries: list[tuple[str, list[str]]]) -> str:
    """A definition or field list as a bulleted list: "- **term:** text", more blocks under it."""
    lines: list[str] = []
    for label, body in entries:
        label = label.replace("**", "").strip()
        head = f"**{label}:**" if label and body else f"**{label}**" if label else ""
        text = "\n\n".join(body).split("\n") if body else [""]
        inline = not text[0].startswith(_BLOCK_STARTS)
        first = f"{head} {text[0]}".strip() if inline else head
        rest = text[1:] if inline else text
        lines.append(f"- {first}".rstrip())
        lines.extend(f"  {line}" if line else "" for line in rest)
    return "\n".join(lines)


def _plain(node: nodes.Node | None) -> str:
    return _SPACE.sub(" ", utils.unescape(node.astext())).strip() if node is not None else ""


def _unmarked(raw: str) -> str:
    """What an unresolved piece of markup says, without its marks (`|name|`, `word`_, …)."""
    text = raw.strip()
    text = re.sub(r"^:[\w.+:-]+:`|^`+|`+_{0,2}$|^\||\|_{0,2}$|_{1,2}$|^\*+|\*+$", "", text)
    text = re.sub(r"\s*<[^<>]*>$", "", text).strip("`")
    return text.replace("_", " ") if re.fullmatch(r"[\w-]+", text) else text


def _image_alt(node: nodes.Node) -> str:
    """An image's alt text when the author wrote one (roles in it read as their words)."""
    alt = node.get("alt") if isinstance(node, nodes.Element) else None
    return plain(str(alt)) if alt else ""


def _meta(tree: nodes.document, name: str) -> str:
    """The content of a `.. meta::` field (`:description:`, `:keywords:`)."""
    for meta in tree.findall(nodes.meta):
        if str(meta.get("name", "")).lower() == name:
            return str(meta.get("content", "")).strip()
    return ""
