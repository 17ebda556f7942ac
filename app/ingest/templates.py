"""Site-generator template syntax rewritten to plain Markdown, per family, not per site. Pure.

Families: Liquid (Jekyll, GitBook: `{% tag %}`, block tags with `{% endtag %}`, `{{ output |
filter }}`, captures, assigns, `site.*`/`page.*` variables, `{% link %}`), Hugo shortcodes
(`{{< name >}}`, `{{% name %}}`, closed by `{{< /name >}}`), and the HTML tab widget (a
`ul.nav-tabs` list naming `div.tab-pane` panels), and GitBook's HTML blocks (a `<table>` as a
Markdown table, a card view as a list, `<pre><code>` as fenced code; a stepper is a numbered
list). What a tag means is read from its name, in
`ROLES`: a callout keeps its body as an Obsidian-style callout (`> [!warning] Title`, which the
block pass turns into `> **Title:** body`), a tab or an expandable section becomes a section
named by its label (`TAB` markers, turned into a heading one level below the current one), an
image becomes its alt text, a link tag becomes the path it names (resolved to a help page later),
a key becomes its text. A paired tag of unknown name keeps its content; any other tag that
cannot be rendered is removed and counted in `Rendering.removed` — never shown.
"""

from __future__ import annotations

import html
import re
import shlex
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag

# markers the block pass turns into headings: a group of tabs and one tab (or titled section)
TABS_OPEN = "\x04TABS\x04"
TABS_CLOSE = "\x04/TABS\x04"
TAB = "\x04TAB\x04"
ICON = re.compile("\x05([\\w-]*)\x05")

_CALLOUT_KINDS = frozenset(
    [
        "note",
        "tip",
        "tips",
        "info",
        "information",
        "warning",
        "warn",
        "danger",
        "caution",
        "important",
        "success",
        "error",
        "question",
        "example",
        "attention",
        "abstract",
        "summary",
        "bug",
        "failure",
        "hint",
        "check",
        "todo",
        "quote",
    ]
)
ROLES: dict[str, frozenset[str]] = {
    "callout": _CALLOUT_KINDS
    | frozenset(
        ["callout", "alert", "notice", "admonition", "message", "panel", "box", "highlight-box"]
    ),
    "tabs": frozenset(
        ["tabs", "tabset", "tab-group", "tabgroup", "codetabs", "code-tabs", "tabpane"]
    ),
    "tab": frozenset(["tab", "tabitem", "tab-item"]),
    "section": frozenset(
        [
            "expand",
            "details",
            "faq",
            "accordion",
            "accordion-item",
            "collapse",
            "collapsible",
            "spoiler",
            "toggle",
        ]
    ),
    "container": frozenset(
        [
            "code",
            "content-ref",
            "stepper",
            "step",
            "steps",
            "columns",
            "column",
            "center",
            "markdown",
            "md",
            "div",
            "section",
            "group",
            "card",
            "cards",
            "grid",
            "row",
            "col",
            "swagger-description",
            "updates",
        ]
    ),
    "image": frozenset(["image", "img", "figure", "picture", "screenshot"]),
    "icon": frozenset(
        ["icon", "fa", "fas", "far", "fab", "octicon", "glyph", "emoji", "material-icon", "bi"]
    ),
    "key": frozenset(["kbd", "key", "keys", "shortcut", "keyboard", "button", "btn"]),
    "link": frozenset(
        [
            "link",
            "post_url",
            "relref",
            "ref",
            "url",
            "asset",
            "absurl",
            "relurl",
            "static",
            "resource",
        ]
    ),
    "param": frozenset(["param", "siteparam", "site-param", "var", "variable"]),
    "embed": frozenset(["embed", "file"]),
}
CHECK_ICONS = frozenset(
    ["check", "check-circle", "check-square", "check-mark", "checkmark", "tick", "ok", "yes"]
)
CROSS_ICONS = frozenset(
    ["x", "times", "close", "cross", "ban", "minus-circle", "times-circle", "xmark", "no"]
)
_TEXT_KEYS = ("title", "header", "heading", "label", "name", "summary", "text")
_KIND_KEYS = ("style", "type", "kind", "level", "class", "variant", "theme")

_TAG = re.compile(
    r"\{%-?[ \t]*(?P<ltag>[A-Za-z_][\w-]*)(?P<largs>(?:(?!%\}|\{%).)*?)-?%\}"
    r"|\{\{(?P<hd>[<%])[ \t]*(?P<hclose>/)?[ \t]*(?P<hname>[\w./-]+)"
    r"(?P<hargs>(?:(?![>%]\}\}).)*?)[ \t]*(?:/[ \t]*)?[>%]\}\}"
    r"|\{\{-?(?P<out>(?:(?!\}\}|\{\{)[^\n])*?)-?\}\}",
    re.DOTALL,
)
# what a Liquid output looks like: a site/page variable, a literal, or a filter; anything else
# in `{{ }}` (a product's own template fields, a cloze, maths) is text the author shows
_LIQUID_OUT = re.compile(
    r"^\s*-?\s*(?:(?:site|page|include|layout|jekyll|paginator|forloop)\.[\w.\[\]'\"-]+"
    r"|\"[^\"]*\"|'[^']*')\s*(?:\|.*)?-?\s*$|^\s*[\w.]+\s*\|\s*[a-z_]+"
)
_KRAMDOWN_EXT = re.compile(
    r"\{::comment\}.*?\{:/(?:comment)?\}|\{::(?:options|toc)\b[^}]*/?\}", re.DOTALL
)
_KRAMDOWN_NOMARKDOWN = re.compile(r"\{::nomarkdown\}(.*?)\{:/(?:nomarkdown)?\}", re.DOTALL)
_COMMENT = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.DOTALL)
_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}(.*?)\{%-?\s*endraw\s*-?%\}", re.DOTALL)
_HIGHLIGHT = re.compile(
    r"\{%-?\s*highlight\s+([\w+-]+)[^%]*%\}\n?(.*?)\{%-?\s*endhighlight\s*-?%\}"
    r"|\{\{<\s*highlight\s+([\w+-]+)[^>]*>\}\}\n?(.*?)\{\{<\s*/highlight\s*>\}\}",
    re.DOTALL,
)
_ESCAPED_SHORTCODE = re.compile(r"\{\{([<%])/\*(.*?)\*/([>%])\}\}", re.DOTALL)
_ENCODED = re.compile(r"%7B(?:%7B|%25)(?:(?!%7D).)*?(?:%7D|%25)%7D", re.IGNORECASE)
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ANY_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_HOLE = re.compile("\x02(\\d+)\x02")
_ARG = re.compile(
    r"""([\w-]+)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^\s"']+)|("(?:[^"\\]|\\.)*"|'[^']*'|\S+)"""
)
_ICON_HTML = re.compile(
    r"<(?:i|span|em)\b[^>]*\bclass=\"[^\"]*?\b(?:fa[srbl]?|icon|glyphicon|bi|octicon|material-icons)"
    r"[- ]([\w-]+)[^\"]*\"[^>]*>\s*(?::[\w+-]+:\s*)?(?:</(?:i|span|em)>)?"
)
_EMOJI = {
    "white_check_mark": "✓",
    "heavy_check_mark": "✓",
    "ballot_box_with_check": "✓",
    "check": "✓",
    "x": "✗",
    "heavy_multiplication_x": "✗",
    "negative_squared_cross_mark": "✗",
    "no_entry": "⛔",
    "warning": "⚠",
    "information_source": "ℹ",
    "bulb": "💡",
    "star": "★",
    "lock": "🔒",
    "key": "🔑",
}
_EMOJI_SHORTCODE = re.compile(r"(?<![\w:]):([a-z0-9_+-]+):(?![\w:])")
_SYMBOLS = {"✔": "✓", "✅": "✓", "☑": "✓", "✓": "✓", "❌": "✗", "✖": "✗", "✘": "✗", "✗": "✗"}
_KEEP_ENTITIES = ("&lt;", "&gt;", "&amp;")
# GitBook's export writes a stray `\&#xNAN;` after a hard line break
_GITBOOK_NAN = re.compile(r"\\?&#xNAN;")
# a content-ref's link named by its file (`[plans.md](plans.md)`): GitBook shows the page's
# name there, as for a mention; the link pass names it
_MENTION = re.compile(r"\[([^\[\]\n]+)\]\(([^()\s]+)\)")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")


@dataclass
class Rendering:
    """What one page's template pass knows and found: its variables and what it removed."""

    meta: Mapping[str, Any] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    removed: Counter[str] = field(default_factory=Counter)
    holes: list[str] = field(default_factory=list)  # code hidden from the pass, by placeholder
    mdx: bool = False  # MDX has no indented code: indentation inside components is layout


@dataclass
class _Node:
    kind: str  # "text" | "tag" | "out"
    text: str = ""
    name: str = ""
    args: str = ""
    family: str = ""  # liquid | hugo
    children: list[_Node] | None = None


def render_templates(text: str, state: Rendering) -> str:
    """`text` with every template construct rendered to Markdown (fenced code is untouched)."""
    text = _ENCODED.sub(lambda m: unquote(m.group(0)), text)
    text = _COMMENT.sub("", _KRAMDOWN_EXT.sub("", text))
    text = _KRAMDOWN_NOMARKDOWN.sub(lambda m: m.group(1), text)
    text = _ESCAPED_SHORTCODE.sub(r"`{{\1\2\3}}`", text)
    text = _HIGHLIGHT.sub(_fenced, text)
    text = _RAW.sub(lambda m: m.group(1), text)
    text, holes = _hide(text, mdx=state.mdx)
    state.holes = holes
    flush = state.mdx
    text = html_code_blocks(text, holes)
    text = html_tables(_GITBOOK_NAN.sub("", text))
    if "{{" in text or "{%" in text:
        text = _render(_tree(_tokens(text)), state)
    text = html_tabs(text)
    text = _ICON_HTML.sub(lambda m: icon_marker(m.group(1)), text)
    text = _EMOJI_SHORTCODE.sub(_emoji, text)
    text = _ENTITY.sub(_entity, text)
    if flush:
        _reindent_holes(text, holes)
    return _unhide(text, holes)


def _fenced(m: re.Match[str]) -> str:
    lang, code = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return f"```{lang}\n{code.rstrip()}\n```\n"


def _hide(text: str, *, mdx: bool = False) -> tuple[str, list[str]]:
    """Fenced code blocks and inline code spans swapped for placeholders. In MDX a fence may
    sit at any indentation (inside a component) and stands where its fence line stands, and
    nothing is indented code."""
    holes: list[str] = []

    def hole(content: str) -> str:
        return _stash(holes, content)

    out: list[str] = []
    lines = text.split("\n")
    code = set() if mdx else indented_code(lines)
    fence_line = _ANY_FENCE_LINE if mdx else _FENCE_LINE
    i = 0
    while i < len(lines):
        if i in code:
            out.append(hole(lines[i]))
            i += 1
            continue
        m = fence_line.match(lines[i])
        if m:
            fence = m.group(1)
            j = i + 1
            while j < len(lines) and not (
                lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])
            ):
                j += 1
            block = lines[i : j + 1]
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" \t"))] if mdx else ""
            block = [_unindent(ln, len(indent)) for ln in block]
            out.append(indent + hole("\n".join(block)))
            i = j + 1
            continue
        out.append(_INLINE_CODE.sub(lambda c: hole(c.group(0)), lines[i]))
        i += 1
    return "\n".join(out), holes


def _reindent_holes(text: str, holes: list[str]) -> None:
    """Each multi-line hidden block's lines after the first indented as its placeholder's line
    is (a list item's content column, a quote's `>`): in MDX a fence is stored flush."""
    for line in text.split("\n"):
        for m in _HOLE.finditer(line):
            k = int(m.group(1))
            if "\n" in holes[k]:
                prefix = re.sub(r"[^\s>]", " ", line[: m.start()])
                holes[k] = holes[k].replace("\n", "\n" + prefix)


def _unindent(line: str, width: int) -> str:
    """`line` with at most `width` leading spaces removed."""
    return line[min(width, len(line) - len(line.lstrip(" "))) :]


def _stash(holes: list[str], content: str) -> str:
    """A placeholder for `content`, restored by `_unhide`."""
    holes.append(content)
    return f"\x02{len(holes) - 1}\x02"


_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])[ \t]")


def indented_code(lines: list[str]) -> set[int]:
    """Line numbers of CommonMark indented code blocks (4+ spaces after a blank line, not
    inside a list item)."""
    code: set[int] = set()
    in_list = False
    previous_blank = True
    for k, line in enumerate(lines):
        stripped = line.strip()
        indented = line.startswith(("    ", "\t"))
        if stripped and not indented:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and not previous_blank)
        if (stripped and indented and not in_list and (previous_blank or k - 1 in code)) or (
            not stripped and k - 1 in code
        ):
            code.add(k)
        previous_blank = not stripped
    return code


def _unhide(text: str, holes: list[str]) -> str:
    while _HOLE.search(text):
        text = _HOLE.sub(lambda m: holes[int(m.group(1))], text)
    return text


def _tokens(text: str) -> list[_Node]:
    nodes: list[_Node] = []
    pos = 0
    for m in _TAG.finditer(text):
        if m.start() > pos:
            nodes.append(_Node("text", text[pos : m.start()]))
        pos = m.end()
        if m.group("ltag"):
            nodes.append(
                _Node(
                    "tag",
                    name=m.group("ltag").lower(),
                    args=m.group("largs").strip(),
                    family="liquid",
                )
            )
        elif m.group("hname"):
            name = m.group("hname").lower()
            closing = "/" if m.group("hclose") else ""
            nodes.append(
                _Node("tag", name=closing + name, args=m.group("hargs").strip(), family="hugo")
            )
        else:
            nodes.append(_Node("out", text=m.group("out").strip(), args=m.group(0)))
    if pos < len(text):
        nodes.append(_Node("text", text[pos:]))
    return nodes


def _closer(node: _Node) -> str:
    return f"end{node.name}" if node.family == "liquid" else f"/{node.name}"


def _tree(tokens: list[_Node]) -> list[_Node]:
    """Pair opening and closing tags (a name with a closer somewhere later is a block)."""
    closers = Counter(t.name for t in tokens if t.kind == "tag")
    root = _Node("tag", name="", children=[])
    stack = [root]
    for tok in tokens:
        if tok.kind == "tag" and _is_close(tok):
            opener = tok.name[3:] if tok.family == "liquid" else tok.name[1:]
            depth = next((i for i in range(len(stack) - 1, 0, -1) if stack[i].name == opener), None)
            if depth is None:
                continue  # a closer with no opener: nothing to render
            del stack[depth:]
            continue
        assert stack[-1].children is not None
        stack[-1].children.append(tok)
        if tok.kind == "tag" and closers[_closer(tok)] > 0:
            tok.children = []
            stack.append(tok)
    assert root.children is not None
    return root.children


def _is_close(tok: _Node) -> bool:
    if tok.family == "hugo":
        return tok.name.startswith("/")
    return tok.name.startswith("end") and tok.name not in ("endpoint",)


def _render(nodes: list[_Node], state: Rendering) -> str:
    parts: list[str] = []
    for node in nodes:
        if node.kind == "text":
            parts.append(node.text)
        elif node.kind == "out":
            liquid = _LIQUID_OUT.match(node.text) or node.text.split("|")[0].strip() in (
                state.variables
            )
            parts.append(_output(node.text, state) if liquid else f"`{node.args}`")
        else:
            parts.append(_tag(node, state))
    return "".join(parts)


def parse_args(raw: str) -> tuple[list[str], dict[str, str]]:
    """Positional and named arguments of a tag: `warning "Title" style="info"`."""
    positional: list[str] = []
    named: dict[str, str] = {}
    for m in _ARG.finditer(raw):
        if m.group(1):
            named[m.group(1).lower()] = _unquote(m.group(2))
        else:
            positional.append(_unquote(m.group(3)))
    return positional, named


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        try:
            return shlex.split(value)[0] if value[0] == '"' else value[1:-1]
        except ValueError:
            return value[1:-1]
    return value


def role_of(name: str) -> str | None:
    """What a tag of this name means (`ROLES`), or None when its name says nothing known."""
    for role, names in ROLES.items():
        if name in names:
            return role
    return None


def _tag(node: _Node, state: Rendering) -> str:
    name = node.name
    positional, named = parse_args(node.args)
    body = _render(node.children, state) if node.children is not None else None
    handled = _liquid_control(node, body, positional, state)
    if handled is not None:
        return handled
    if name == "stepper" and node.family == "liquid" and node.children is not None:
        return _stepper(node.children, state)
    if name == "update" and node.family == "liquid" and body is not None:
        return _dated(body, named.get("date", ""))
    role = role_of(name)
    if role == "callout" and body is not None:
        return callout_block(
            _callout_kind(name, positional, named), _title(positional, named, skip_kind=True), body
        )
    if role in ("tabs",) and body is not None:
        return f"\n{TABS_OPEN}\n{body}\n{TABS_CLOSE}\n"
    if role in ("tab", "section") and body is not None:
        return tab_block(_title(positional, named) or name.capitalize(), body)
    if role == "container" and body is not None:
        return _MENTION.sub(r'[\1](\2 "mention")', body) if name == "content-ref" else body
    if role == "image":
        return (
            named.get("alt")
            or named.get("caption")
            or named.get("title")
            or " ".join(positional[1:])
        )
    if role == "icon":
        return icon_marker(positional[0] if positional else named.get("name", ""))
    if role == "key":
        return body.strip() if body else " ".join(positional) or named.get("text", "")
    if role == "link" and positional:
        return _link_target(positional[0], node)
    if role == "embed" and (named.get("url") or named.get("src") or positional):
        return _embedded(named.get("url") or named.get("src") or positional[0], body)
    if role == "param" and positional:
        value = _lookup(state.meta, positional[0])
        if value is not None:
            return value
    state.removed[f"{node.family}:{name}"] += 1
    return body if body is not None else ""


def _stepper(children: list[_Node], state: Rendering) -> str:
    """GitBook's stepper: its steps as one numbered list (as GitBook numbers them), each step's
    title (a heading or a bold line) on its number and the rest of the step under it."""
    items: list[str] = []
    for child in children:
        if child.kind == "tag" and child.name == "step" and child.children is not None:
            body = _dedent(_render(child.children, state)).strip("\n")
            items.append(_step_item(len(items) + 1, body, state.holes))
    return "\n\n" + "\n\n".join(items) + "\n\n" if items else ""


_STEP_TITLE = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*$")


def _dated(body: str, date: str) -> str:
    """A GitBook changelog entry (`{% update date=… %}`): its text with its date under its
    heading (or first), so the date stays with the entry."""
    lines = _dedent(body).strip("\n").split("\n")
    if not date.strip():
        return "\n".join(lines)
    at = 1 if lines and _STEP_TITLE.match(lines[0].strip()) else 0
    return "\n\n" + "\n".join([*lines[:at], "", date.strip(), "", *lines[at:]]).strip() + "\n\n"


def _step_item(number: int, body: str, holes: list[str], *, shift: bool = True) -> str:
    return _marked_item(f"{number}. ", body, holes, shift=shift)


def _marked_item(mark: str, body: str, holes: list[str], *, shift: bool = True) -> str:
    """`body` as one list item after `mark`: its first line on the mark, the rest under it
    (with `shift`, a hidden code block's lines too; else `_reindent_holes` does it later)."""
    lines = body.split("\n") if body.strip() else [""]
    pad = " " * len(mark)
    first = lines[0].strip()
    if title := _STEP_TITLE.match(first):
        first = f"**{title.group(1).strip('*')}**"
    code = _HOLE.fullmatch(first)
    if first.startswith((">", "|")) or (code and "\n" in holes[int(code.group(1))]):
        first = ""  # a step opening with a quote, a table or code: all of it under its number
    else:
        lines = lines[1:]
    out = [f"{mark}{first}".rstrip()]
    for line in lines:
        for k in _HOLE.findall(line) if shift else ():  # a code block moves in with its step
            holes[int(k)] = holes[int(k)].replace("\n", "\n" + pad)
        out.append(f"{pad}{line}" if line.strip() else "")
    return "\n".join(out)


def _liquid_control(
    node: _Node, body: str | None, positional: list[str], state: Rendering
) -> str | None:
    """Liquid's own tags: capture, assign, if/unless/case (first branch), for (dropped)."""
    if node.family != "liquid":
        return None
    name = node.name
    if name == "capture" and positional and body is not None:
        state.variables[positional[0]] = _dedent(body)
        return ""
    if name == "assign":
        var, _, expr = node.args.partition("=")
        state.variables[var.strip()] = _output(expr.strip(), state)
        return ""
    if name in ("if", "unless", "case") and node.children is not None:
        first: list[_Node] = []
        for child in node.children:
            if child.kind == "tag" and child.name in ("else", "elsif", "when"):
                if name != "case" or first:
                    break
                continue
            first.append(child)
        return _render(first, state)
    if name in ("for", "tablerow", "include", "include_relative", "render", "section"):
        state.removed[f"liquid:{name}"] += 1
        return ""
    if name in ("else", "elsif", "when", "break", "continue", "cycle", "increment", "decrement"):
        return ""
    return None


def _callout_kind(name: str, positional: list[str], named: dict[str, str]) -> str:
    for key in _KIND_KEYS:
        if named.get(key):
            return named[key].split()[0].lower()
    if positional and positional[0].lower() in _CALLOUT_KINDS:
        return positional[0].lower()
    return name if name in _CALLOUT_KINDS else "note"


def _title(positional: list[str], named: dict[str, str], *, skip_kind: bool = False) -> str:
    for key in _TEXT_KEYS:
        if named.get(key):
            return named[key]
    words = [p for p in positional if not (skip_kind and p.lower() in _CALLOUT_KINDS)]
    return " ".join(words).strip()


def callout_block(kind: str, title: str, body: str, holes: list[str] | None = None) -> str:
    """An Obsidian-style callout, which the block pass renders as `> **Title:** body`; a code
    block hidden in `holes` is quoted with it."""
    lines = _dedent(body).strip("\n").split("\n")
    if holes is not None:
        for k in _HOLE.findall(body):
            holes[int(k)] = holes[int(k)].replace("\n", "\n> ")
    quoted = "\n".join(f"> {ln}" if ln.strip() else ">" for ln in lines)
    return f"\n\n> [!{kind}] {title}\n{quoted}\n\n"


def tab_block(label: str, body: str) -> str:
    """A tab or titled section: a heading named by its label, one level below the current."""
    return f"\n\n{TAB}{label.strip()}\n\n{_dedent(body).strip(chr(10))}\n\n"


def icon_marker(name: str) -> str:
    """An icon: check/cross become the symbol; others a marker a table cell may name."""
    base = re.sub(r"^(?:fa[srbl]?|bi|icon|octicon|material|mdi)[-_]", "", name.lower())
    base = re.sub(r"[-_](?:solid|regular|outline|filled|fill|alt|o|\d+)$", "", base)
    if base in CHECK_ICONS:
        return "✓"
    if base in CROSS_ICONS:
        return "✗"
    return f"\x05{base}\x05"


def _emoji(m: re.Match[str]) -> str:
    return _EMOJI.get(m.group(1), m.group(0))


def _entity(m: re.Match[str]) -> str:
    if m.group(0) in _KEEP_ENTITIES:
        return m.group(0)
    text = html.unescape(m.group(0))
    return " " if text == "\xa0" else _SYMBOLS.get(text, text)


def _embedded(target: str, caption: str | None) -> str:
    """An embedded URL or file: a link to an outside URL, else the file's name (its caption
    when it has one); a local asset is not a help page, so it is never linked."""
    label = " ".join((caption or "").split())
    if target.startswith(("http://", "https://")):
        return f"[{label or target}]({target})"
    return label or unquote(target.rstrip("/").rsplit("/", 1)[-1])


def _link_target(target: str, node: _Node) -> str:
    """A link tag's path: Liquid's are from the site root; Hugo's keep their form."""
    if node.family == "liquid" and not target.startswith(("/", "http")):
        return "/" + target
    return target


def _lookup(meta: Mapping[str, Any], dotted: str) -> str | None:
    value: Any = meta
    for part in dotted.split("."):
        if isinstance(value, Mapping):
            found = {str(k).lower(): v for k, v in value.items()}.get(part.lower())
            if found is None and "params" in value and isinstance(value["params"], Mapping):
                found = {str(k).lower(): v for k, v in value["params"].items()}.get(part.lower())
            value = found
        else:
            return None
    return str(value) if isinstance(value, (str, int, float)) and value != "" else None


def _output(expr: str, state: Rendering) -> str:
    """`{{ value | filter: arg }}`: literals, variables, page.* from front matter; site.* and
    anything unknown are empty (unknowns counted)."""
    pieces = _split_filters(expr)
    base, filters = pieces[0].strip(), pieces[1:]
    value = _value(base, state)
    for f in filters:
        fname, _, farg = f.partition(":")
        fname, arg = fname.strip().lower(), _unquote(farg.strip()) if farg else ""
        if fname in ("append",):
            value = (value or "") + arg
        elif fname == "prepend":
            value = arg + (value or "") if not arg.startswith("{{") else value
        elif fname == "default" and not value:
            value = arg
        elif fname in ("upcase", "downcase", "capitalize") and value:
            value = {"upcase": value.upper(), "downcase": value.lower()}.get(
                fname, value[:1].upper() + value[1:]
            )
    return value or ""


def _value(base: str, state: Rendering) -> str | None:
    if len(base) >= 2 and base[0] == base[-1] and base[0] in "\"'":
        return base[1:-1]
    if base in state.variables:
        return state.variables[base]
    if base.startswith("page."):
        found = _lookup(state.meta, base[5:])
        if found is not None:
            return found
    if base in ("site.baseurl", "site.url", "site.github.url", "base_path", "baseurl"):
        return ""
    if base:
        state.removed[f"liquid:{{{{ {base[:40]} }}}}"] += 1
    return None


def _split_filters(expr: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for ch in expr:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "|":
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def _dedent(text: str) -> str:
    lines = text.split("\n")
    indents = [len(ln) - len(ln.lstrip(" \t")) for ln in lines if ln.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(ln[cut:] for ln in lines)


# -- the HTML tab widget (ul.nav-tabs + div.tab-pane) --------------------------------------

_NAV_TABS = re.compile(
    r"<ul\b[^>]*class=\"[^\"]*\bnav-tabs\b[^\"]*\"[^>]*>(.*?)</ul>", re.DOTALL | re.IGNORECASE
)
_TAB_LINK = re.compile(
    r"<a\b[^>]*href=\"#([^\"]+)\"[^>]*>(.*?)</a>|<(?:li|button)\b[^>]*(?:data-target|data-bs-target"
    r"|aria-controls)=\"#?([^\"]+)\"[^>]*>(.*?)</(?:li|button)>",
    re.DOTALL | re.IGNORECASE,
)
_DIV = re.compile(r"<div\b([^>]*)>|</div\s*>", re.IGNORECASE)
_CLASS = re.compile(r"\bclass=\"([^\"]*)\"", re.IGNORECASE)
_ID = re.compile(r"\bid=\"([^\"]*)\"", re.IGNORECASE)
_STRIP_TAGS = re.compile(r"<[^>]+>")


def html_tabs(text: str) -> str:
    """`ul.nav-tabs` labels + `div.tab-content > div.tab-pane#id` → tab markers by label."""
    if "tab-pane" not in text:
        return text
    labels: dict[str, str] = {}
    for nav in _NAV_TABS.finditer(text):
        for link in _TAB_LINK.finditer(nav.group(1)):
            target = link.group(1) or link.group(3)
            label = _STRIP_TAGS.sub("", link.group(2) or link.group(4) or "")
            labels[target] = " ".join(html.unescape(label).split())
    text = _NAV_TABS.sub("", text)
    out: list[str] = []
    stack: list[tuple[str, int]] = []  # (role of an open div, where its content starts in out)
    pos = 0
    for m in _DIV.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
        if m.group(0).startswith("</"):
            role, start = stack.pop() if stack else ("", len(out))
            if role == "pane":
                inner = _dedent("".join(out[start:])).strip("\n")
                del out[start:]
                out.append(f"{inner}\n\n")
            elif role == "group":
                out.append(f"\n{TABS_CLOSE}\n")
            continue
        classes = (_CLASS.search(m.group(1)) or _EMPTY).group(1).split()
        ident = (_ID.search(m.group(1)) or _EMPTY).group(1)
        if "tab-content" in classes:
            out.append(f"\n\n{TABS_OPEN}\n")
            stack.append(("group", len(out)))
        elif "tab-pane" in classes:
            label = labels.get(ident) or ident.replace("-", " ").replace("_", " ").strip()
            out.append(f"\n\n{TAB}{label.capitalize() if label == ident else label}\n\n")
            stack.append(("pane", len(out)))
        else:
            stack.append(("", len(out)))
    out.append(text[pos:])
    return "".join(out)


class _Empty:
    @staticmethod
    def group(_: int) -> str:
        return ""


_EMPTY = _Empty()


# -- GitBook's HTML blocks: code with highlighted lines, tables, card views ------------------

_PRE = re.compile(
    r"^([ \t]*)<pre\b([^>]*)>\s*<code\b([^>]*)>(.*?)</code>\s*</pre>",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)
_CODE_LANG = re.compile(r"\b(?:language|lang)-([\w+#.-]+)")
_HTML_TABLE = re.compile(r"^([ \t]*)<table\b.*?</table>", re.DOTALL | re.MULTILINE | re.IGNORECASE)
_CELL_BLOCKS = frozenset(["p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "figure", "figcaption"])
_SENTENCE_END = (".", "!", "?", ":", ";")


def html_code_blocks(text: str, holes: list[str]) -> str:
    """`<pre><code class="lang-x">` (GitBook's code block with highlighted lines) → a fenced
    block, stashed in `holes` so no later pass reads its braces or tags as markup."""
    if "<pre" not in text:
        return text

    def fence(m: re.Match[str]) -> str:
        indent = m.group(1)
        lang = _CODE_LANG.search(m.group(3)) or _CODE_LANG.search(m.group(2))
        code = html.unescape(_STRIP_TAGS.sub("", m.group(4))).rstrip()
        lines = [ln[len(indent) :] if ln.startswith(indent) else ln for ln in code.split("\n")]
        ticks = "`" * max([3, *(len(r) + 1 for r in re.findall(r"`{3,}", code))])
        block = [f"{ticks}{lang.group(1) if lang else ''}", *lines, ticks]
        return _stash(holes, "\n".join(f"{indent}{ln}" if ln else ln for ln in block))

    return _PRE.sub(fence, text)


def html_tables(text: str) -> str:
    """An HTML `<table>` → a Markdown table; a GitBook card view (`data-view="cards"`) → one
    list item per card. Hidden columns (cover images) are left out; a card's target links."""
    if "<table" not in text.lower():
        return text

    def convert(m: re.Match[str]) -> str:
        table = BeautifulSoup(m.group(0), "html.parser").find("table")
        if not isinstance(table, Tag):
            return m.group(0)
        lines = _cards(table) if table.get("data-view") == "cards" else _pipe_table(table)
        return "\n".join(f"{m.group(1)}{ln}" for ln in lines) if lines else ""

    return _HTML_TABLE.sub(convert, text)


def _rows(table: Tag) -> tuple[list[Tag], list[list[Tag]]]:
    """The header cells (first row when it holds `th`) and each body row's cells."""
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    cells = [[c for c in tr.find_all(["th", "td"], recursive=False)] for tr in rows]
    if cells and cells[0] and all(c.name == "th" for c in cells[0]):
        return cells[0], [r for r in cells[1:] if r]
    return [], [r for r in cells if r]


def _pipe_table(table: Tag) -> list[str]:
    head, body = _rows(table)
    shown = [i for i, th in enumerate(head) if not th.has_attr("data-hidden")] if head else None
    rows = [[_cell(c) for c in head]] if head else []
    rows += [[_cell(c) for c in row] for row in body]
    if shown is not None:
        rows = [[r[i] if i < len(r) else "" for i in shown] for r in rows]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    return ["", *out, *("| " + " | ".join(r) + " |" for r in rows[1:]), ""]


def _cards(table: Tag) -> list[str]:
    head, body = _rows(table)
    hidden = {i for i, th in enumerate(head) if th.has_attr("data-hidden")}
    targets = {i for i, th in enumerate(head) if th.has_attr("data-card-target")}
    items = []
    for row in body:
        texts = [_cell(c) for i, c in enumerate(row) if i not in hidden]
        texts = [t for t in texts if ICON.sub("", t).strip()]  # a card's icon alone is no text
        link = next((_href(row[i]) for i in targets if i < len(row) and _href(row[i])), "")
        if not texts:
            continue
        title = texts[0].strip("*")
        head_text = f"[**{title}**]({link})" if link else f"**{title}**"
        rest = " ".join(t if t.endswith(_SENTENCE_END) else f"{t}." for t in texts[1:])
        items.append(f"- {head_text}: {rest}" if rest else f"- {head_text}")
    return ["", *items, ""] if items else []


def _href(cell: Tag) -> str:
    link = cell.find("a", href=True)
    href = link.get("href") if isinstance(link, Tag) else None
    return href.replace(" ", "%20") if isinstance(href, str) else ""


def _cell(node: Tag | NavigableString) -> str:
    """A cell's text as inline Markdown on one line."""
    return " ".join(_inline_html(node).split())


def _inline_html(node: Tag | NavigableString) -> str:
    if isinstance(node, NavigableString):
        return str(node)
    name = node.name
    if name in ("br", "select", "source", "script", "style"):
        return " "
    if name == "img":
        return str(node.get("alt") or "")
    if name == "i" and node.get("class"):
        classes = node.get("class") or [""]
        return icon_marker(str(list(classes)[-1]))
    if name in ("ul", "ol"):
        items = [_cell(li) for li in node.find_all("li", recursive=False)]
        return " " + ", ".join(i for i in items if i) + " "
    inner = "".join(_inline_html(c) for c in node.children if isinstance(c, (Tag, NavigableString)))
    text = " ".join(inner.split())
    if not text:
        return " " if name in _CELL_BLOCKS else ""
    if name in ("strong", "b"):
        return f"**{text}**"
    if name == "code":
        return f"`{text}`"
    href = node.get("href") if name == "a" else None
    if isinstance(href, str) and not href.startswith(("#", "javascript:")):
        return f"[{text}]({href.replace(' ', '%20')})"
    return f" {text} " if name in _CELL_BLOCKS else inner


# -- MDX / JSX block components ------------------------------------------------------------

_JSX_CALLOUTS = (
    "Admonition|Callout|Aside|Alert|Note|Tip|Info|Warning|Caution|Danger|Important|Check"
)
# components rewritten here, innermost first: a match holds none of them
_JSX_HANDLED = (
    f"{_JSX_CALLOUTS}|Steps|Step|Accordion|Card|ResponseField|ParamField|Prompt|Visibility"
    "|Tabs|TabItem|Tab|details"
)
_JSX_CALLOUT = re.compile(
    rf"<({_JSX_CALLOUTS})\b([^>]*)>((?:(?!<(?:{_JSX_CALLOUTS})\b).)*?)</\1\s*>", re.DOTALL
)
_JSX_TAB = re.compile(r"<(TabItem|Tab)\b([^>]*)>((?:(?!<(?:TabItem|Tab)\b).)*?)</\1\s*>", re.DOTALL)
_JSX_TABS = re.compile(r"<Tabs\b[^>]*>((?:(?!<Tabs\b).)*?)</Tabs\s*>", re.DOTALL)
_DETAILS = re.compile(
    r"<details\b[^>]*>\s*(?:<summary\b[^>]*>(.*?)</summary>)?((?:(?!<details\b).)*?)</details\s*>",
    re.DOTALL | re.IGNORECASE,
)
_JSX_ATTR = re.compile(r"([\w-]+)=(?:\"([^\"]*)\"|'([^']*)'|\{[\"'`]([^\"'`]*)[\"'`]\})")
# an attribute's expression, up to three levels deep (`args={[{ fields: [{ name: 'id' }] }]}`)
_JSX_BRACES = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
_JSX_OPEN_ATTRS = rf"((?:\"[^\"\n]*\"|'[^'\n]*'|[^<>{{}}\"']|{_JSX_BRACES})*)"


def _jsx_component(names: str) -> re.Pattern[str]:
    """A paired component of one of `names` holding none of the handled components."""
    return re.compile(
        rf"<({names})\b{_JSX_OPEN_ATTRS}>((?:(?!<(?:{_JSX_HANDLED})\b).)*?)</\1\s*>", re.DOTALL
    )


_JSX_STEP = _jsx_component("Step")
_JSX_STEPS = re.compile(rf"<Steps\b{_JSX_OPEN_ATTRS}>(\s*(?:\x06\d+\x06\s*)*)</Steps\s*>")
_STEP_MARK = re.compile("\x06(\\d+)\x06")
_JSX_ACCORDION = _jsx_component("Accordion")
_JSX_VISIBILITY = _jsx_component("Visibility")
_JSX_PROMPT = _jsx_component("Prompt")
_JSX_FIELD = _jsx_component("ResponseField|ParamField")
_JSX_CARD = _jsx_component("Card")
# a component whose tags stand alone on their lines: in MDX its children are laid out by
# indentation only, so they are dedented (a card group, a code group, a frame, columns)
_JSX_CONTAINER = re.compile(
    rf"^([ \t]*)<([A-Z][\w.]*)\b{_JSX_OPEN_ATTRS}>[ \t]*\n"
    rf"((?:(?!<\2\b).)*?)\n[ \t]*</\2\s*>[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
# an MDX tag, maybe over several lines (`<img\n  src=…\n  style={{…}}\n/>`), and an attribute
# holding an object (`style={{…}}`)
_JSX_ANY_TAG = re.compile(rf"<[A-Za-z][\w.:-]*\b(?:\"[^\"]*\"|[^<>{{}}\"]|{_JSX_BRACES})*/?>")
_JSX_OBJECT_ATTR = re.compile(rf"\s[\w-]+=(?=\{{\s*[{{\[]){_JSX_BRACES}")
_REQUIRED = re.compile(r"(?<![\w-])required(?![\w-]|\s*=\s*\{?\s*false)")


def _one_line_tag(m: re.Match[str]) -> str:
    """An MDX tag on one line and without object or array attributes (`style={{…}}`,
    `args={[…]}`), which are code."""
    return _JSX_OBJECT_ATTR.sub("", " ".join(m.group(0).split()))


def _jsx_attrs(raw: str) -> dict[str, str]:
    return {
        m.group(1).lower(): next((g for g in m.groups()[1:] if g is not None), "")
        for m in _JSX_ATTR.finditer(raw)
    }


@dataclass
class _Jsx:
    """One page's component pass: code hidden by placeholder, steps waiting for their group."""

    holes: list[str]
    mdx: bool = False  # code blocks stay flush until the end (`_reindent_holes`)
    steps: list[tuple[str, str]] = field(default_factory=list)


def jsx_blocks(text: str, *, mdx: bool = False) -> str:
    """MDX/JSX components → Markdown, innermost first so nesting holds; code is untouched.
    `<Tabs>`/`<TabItem label>` become tab markers, `<Admonition type title>`, `<Note>` and the
    like callouts, `<details><summary>` and `<Accordion title>` sections named by their title,
    `<Steps>` of `<Step title>` one numbered list, `<Card title href>` a list item linking its
    title, `<ResponseField name type>` a list item naming its field, `<Prompt>` a code block
    (text to copy into an AI tool), and `<Visibility for="agents">` nothing (it is written for
    AI agents, not shown to readers). A tag written over several lines is read as one line first,
    in Markdown as in MDX (VitePress renders Vue components in `.md`). In MDX (`mdx`) a
    component's children are dedented."""
    if "<" not in text:
        return text
    text, holes = _hide(text, mdx=mdx)
    jsx = _Jsx(holes, mdx)
    text = _JSX_ANY_TAG.sub(_one_line_tag, text)
    for _ in range(12):  # nesting depth
        before = text
        text = _component_pass(text, jsx, mdx=mdx)
        if text == before:
            break
    text = _STEP_MARK.sub(lambda m: _lone_step(jsx, int(m.group(1))), text)
    if mdx:
        _reindent_holes(text, holes)
    return _unhide(text, holes)


def _component_pass(text: str, jsx: _Jsx, *, mdx: bool) -> str:
    def sub(pattern: re.Pattern[str], fn: Callable[[re.Match[str]], str], text: str) -> str:
        return pattern.sub(lambda m: _in_place(m, fn(m)) if mdx else fn(m), text)

    text = sub(_JSX_VISIBILITY, _jsx_visibility, text)
    text = sub(_JSX_PROMPT, _jsx_prompt, text)
    text = sub(_JSX_FIELD, lambda m: _jsx_field(m, jsx), text)
    text = sub(_JSX_CARD, lambda m: _jsx_card(m, jsx), text)
    text = sub(_JSX_STEP, lambda m: _jsx_step(m, jsx), text)
    text = sub(_JSX_STEPS, lambda m: _jsx_steps(m, jsx), text)
    text = sub(
        _JSX_ACCORDION,
        lambda m: tab_block(_jsx_attrs(m.group(2)).get("title", ""), m.group(3)),
        text,
    )
    text = sub(_JSX_CALLOUT, lambda m: _jsx_callout(m, None if jsx.mdx else jsx.holes), text)
    text = _JSX_TAB.sub(_jsx_tab, text)
    text = _JSX_TABS.sub(lambda m: f"\n\n{TABS_OPEN}\n{m.group(1)}\n{TABS_CLOSE}\n\n", text)
    text = _DETAILS.sub(
        lambda m: tab_block(_STRIP_TAGS.sub("", m.group(1) or "Details"), m.group(2)), text
    )
    if mdx:
        text = _JSX_CONTAINER.sub(_jsx_container, text)
    return text


def _in_place(m: re.Match[str], out: str) -> str:
    """A component's rendering indented as the component stood (inside a step, a tab), so its
    parent's children keep one indentation."""
    start = m.string.rfind("\n", 0, m.start()) + 1
    indent = m.string[start : m.start()]
    if not indent or indent.strip():
        return out
    return "\n".join(
        ln if k == 0 or not ln.strip() else indent + ln for k, ln in enumerate(out.split("\n"))
    )


def _jsx_callout(m: re.Match[str], holes: list[str] | None) -> str:
    attrs = _jsx_attrs(m.group(2))
    name = m.group(1).lower()
    kind = next((attrs[k] for k in _KIND_KEYS if attrs.get(k)), "")
    kind = kind.lower() or (name if name in _CALLOUT_KINDS else "note")
    return callout_block(kind, attrs.get("title", ""), m.group(3), holes)


def _jsx_tab(m: re.Match[str]) -> str:
    attrs = _jsx_attrs(m.group(2))
    label = attrs.get("label") or attrs.get("title") or attrs.get("value") or "Tab"
    return tab_block(label, m.group(3))


def _jsx_visibility(m: re.Match[str]) -> str:
    audience = _jsx_attrs(m.group(2)).get("for", "").strip().lower()
    return "" if audience == "agents" else f"\n\n{_dedent(m.group(3)).strip(chr(10))}\n\n"


def _jsx_prompt(m: re.Match[str]) -> str:
    title = _jsx_attrs(m.group(2)).get("description", "").strip()
    head = f"**{title}**\n\n" if title else ""
    return f"\n\n{head}````text\n{_dedent(m.group(3)).strip(chr(10))}\n````\n\n"


def _jsx_field(m: re.Match[str], jsx: _Jsx) -> str:
    attrs = _jsx_attrs(m.group(2))
    name = next((attrs[k] for k in ("name", "path", "query", "body", "header") if k in attrs), "")
    facts = [f"`{attrs['type']}`"] if attrs.get("type") else []
    if _REQUIRED.search(m.group(2)):
        facts.append("required")
    if attrs.get("default"):
        facts.append(f"default: {attrs['default']}")
    head = f"`{name}`" if name else ""
    if facts:
        head = f"{head} ({', '.join(facts)})".strip()
    return "\n\n" + _item_with_head("- ", head, m.group(3), jsx) + "\n\n"


def _jsx_card(m: re.Match[str], jsx: _Jsx) -> str:
    attrs = _jsx_attrs(m.group(2))
    title, href = attrs.get("title", "").strip(), attrs.get("href", "").strip()
    head = f"[{title}]({href})" if title and href else (f"**{title}**" if title else "")
    return "\n\n" + _item_with_head("- ", head, m.group(3), jsx) + "\n\n"


def _item_with_head(mark: str, head: str, body: str, jsx: _Jsx) -> str:
    """One list item: `head: ` and the body's first line on the mark, the rest under it."""
    lines = _dedent(body).strip("\n").split("\n")
    if head and lines[0].strip() and not _HOLE.fullmatch(lines[0].strip()):
        lines[0] = f"{head}: {lines[0].strip()}"
    elif head:
        lines.insert(0, head)
    return _marked_item(mark, "\n".join(lines), jsx.holes, shift=not jsx.mdx)


def _jsx_step(m: re.Match[str], jsx: _Jsx) -> str:
    jsx.steps.append((_jsx_attrs(m.group(2)).get("title", "").strip(), m.group(3)))
    return f"\x06{len(jsx.steps) - 1}\x06"


def _jsx_steps(m: re.Match[str], jsx: _Jsx) -> str:
    """A group of steps: one numbered list, each step's title bold on its number."""
    items: list[str] = []
    for k in _STEP_MARK.findall(m.group(2)):
        title, body = jsx.steps[int(k)]
        body = _dedent(body).strip("\n")
        text = (
            f"**{title}**\n\n{body}"
            if title and body.strip()
            else (title and f"**{title}**") or body
        )
        items.append(_step_item(len(items) + 1, text, jsx.holes, shift=not jsx.mdx))
    return "\n\n" + "\n\n".join(items) + "\n\n"


def _lone_step(jsx: _Jsx, k: int) -> str:
    """A step outside any group: its title as a bold line over its text."""
    title, body = jsx.steps[k]
    head = f"**{title}**\n\n" if title else ""
    return f"\n\n{head}{_dedent(body).strip(chr(10))}\n\n"


def _jsx_container(m: re.Match[str]) -> str:
    indent, name, attrs, inner = m.group(1), m.group(2), m.group(3), m.group(4)
    body = "\n".join(
        indent + ln if ln.strip() else "" for ln in _dedent(inner).strip("\n").split("\n")
    )
    return f"{indent}<{name}{attrs}>\n\n{body}\n\n{indent}</{name}>"
