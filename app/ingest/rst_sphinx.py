"""Sphinx's directives and roles for plain docutils, reduced to what a reader sees.

Nothing here renders: each directive leaves docutils nodes the RST writer (`app.ingest.rst`)
turns into markdown blocks, and each role leaves readable text (`:guilabel:` as bold words,
`:menuselection:` as "A → B", `:ref:`/`:doc:` as a link to the page and section they name).
A directive or role docutils does not know is registered before a page is parsed: its content
is kept and its argument shown, so no markup reaches a reader and no text is lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes, statemachine, utils
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en

from app.ingest.rst_project import Project, plain

_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]*)>\s*$", re.DOTALL)
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w.+:-]*)::", re.MULTILINE)
_ROLE = re.compile(r"(?<![\w`]):([A-Za-z][\w.+:-]*):`")
_FOREIGN = re.compile(r"^[\w.-]+:(?!/)")  # `:doc:` through intersphinx: `sphinx:usage/...`
_MAX_INCLUDES = 50
_BOOLEAN = {"and", "or", "not"}
_WEB_TAGS = {"html", "format_html", "builder_html", "dirhtml", "singlehtml", "readthedocs"}
_OTHER_BUILDERS = {
    "latex", "format_latex", "builder_latex", "epub", "builder_epub", "man", "texinfo", "text",
    "pdf", "rinoh", "xml", "builder_man", "builder_text",
}  # fmt: skip


@dataclass(frozen=True)
class Page:
    """The page being parsed: its project and its path from the project root."""

    project: Project
    doc: str
    path: Path


CURRENT: ContextVar[Page | None] = ContextVar("rst_page", default=None)


# node classes are lower case, as docutils names its own
class tab_panel(nodes.General, nodes.Element):
    """One tab of a tab set; its first child is the tab's label."""


class tab_label(nodes.Inline, nodes.TextElement):
    """A tab's label (inline text, substitutions resolved)."""


class _AnyOptions(dict[str, Callable[[str], Any]]):
    """Accepts every option name (Sphinx's and extensions' options are not ours to check)."""

    def __missing__(self, key: str) -> Callable[[str], Any]:
        return _unchanged


def _unchanged(value: str) -> str:
    """An option's value as written."""
    return value or ""


def _any_options() -> _AnyOptions:
    return _AnyOptions({"class": _unchanged})


class _Base(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[Any] = _any_options()

    def nested(self) -> list[nodes.Node]:
        holder = nodes.container()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, holder)
        return list(holder.children)

    def argument_nodes(self, text: str) -> list[nodes.Node]:
        parsed, messages = self.state.inline_text(text, self.lineno)
        return [*parsed, *messages]


class _Dropped(_Base):
    """A directive that shows nothing to a reader (a table of contents, an index entry)."""

    def run(self) -> list[nodes.Node]:
        return []


class _PassThrough(_Base):
    """A wrapper whose content is read as written (`only`, a grid, an `ifconfig`)."""

    def run(self) -> list[nodes.Node]:
        return self.nested()


class _Only(_Base):
    """`only`: its content when the expression can hold for a web page (not `latex`-only)."""

    def run(self) -> list[nodes.Node]:
        words = set(re.findall(r"[\w-]+", " ".join(self.arguments).lower())) - _BOOLEAN
        if words and not words & _WEB_TAGS and words <= _OTHER_BUILDERS:
            return []
        return self.nested()


class _Unknown(_Base):
    """A directive of an extension the loader does not know: its content with its argument as
    a bold line; without content, nothing (the argument is then a file, a URL or an id)."""

    def run(self) -> list[nodes.Node]:
        if not self.content:
            return []
        out: list[nodes.Node] = []
        if self.arguments:
            label = self.argument_nodes(" ".join(self.arguments))
            out.append(nodes.paragraph("", "", nodes.strong("", "", *label)))
        return out + self.nested()


class _Signature(_Base):
    """An entry with a name and a description (`envvar`, `http:get`, an unknown directive):
    the name as a bold line, then its content."""

    def run(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        if self.arguments:
            out.append(
                nodes.paragraph(
                    "", "", nodes.strong("", "", *self.argument_nodes(" ".join(self.arguments)))
                )
            )
        return out + self.nested()


class _Callout(_Base):
    """A titled callout (`seealso`, `versionadded`, `dropdown`): an admonition with a label."""

    label: ClassVar[str] = ""

    def run(self) -> list[nodes.Node]:
        arg = "\n".join(self.arguments).strip()
        title, extra = self.title(arg)
        node = nodes.admonition("", nodes.title("", "", *self.argument_nodes(title)))
        if extra:
            node += nodes.paragraph("", "", *self.argument_nodes(extra))
        node.extend(self.nested())
        return [node]

    def title(self, arg: str) -> tuple[str, str]:
        return (arg or self.label), ""


class _SeeAlso(_Callout):
    """`seealso`: takes no argument, so text right under it is its content (as in Sphinx)."""

    label = "See also"
    optional_arguments = 0


class _Version(_Callout):
    def title(self, arg: str) -> tuple[str, str]:
        version, _, rest = arg.partition("\n") if "\n" in arg else arg.partition(" ")
        words = {
            "versionadded": "New in version",
            "versionchanged": "Changed in version",
            "deprecated": "Deprecated since version",
            "versionremoved": "Removed in version",
        }
        return f"{words.get(self.name, 'Version')} {version}".strip(), rest.strip()


class _Code(_Base):
    """A literal block with its language (`code-block`, `sourcecode`, `code`, `prompt`)."""

    def run(self) -> list[nodes.Node]:
        language = (self.arguments[0].split()[0].rstrip(",") if self.arguments else "").strip()
        text = "\n".join(self.content)
        node = nodes.literal_block(text, text, classes=["code", language] if language else [])
        node["language"] = language
        return [node]


class _TabSet(_Base):
    """A group of tabs (`tabs`, `tab-set`): its tabs in order."""

    def run(self) -> list[nodes.Node]:
        return [nodes.container("", *self.nested(), classes=["tab-set"])]


class _Tab(_Base):
    """One tab (`tab`, `group-tab`, `tab-item`), named by its label."""

    def run(self) -> list[nodes.Node]:
        label = tab_label("", "", *self.argument_nodes(" ".join(self.arguments) or "Tab"))
        return [tab_panel("", label, *self.nested())]


class _CodeTab(_Base):
    """A tab holding one code sample (`code-tab:: py [label]`), named by label or language."""

    optional_arguments = 2

    def run(self) -> list[nodes.Node]:
        language = self.arguments[0] if self.arguments else ""
        name = " ".join(self.arguments[1:]) or language or "Code"
        text = "\n".join(self.content)
        code = nodes.literal_block(text, text, classes=["code", language])
        code["language"] = language
        return [tab_panel("", tab_label("", "", *self.argument_nodes(name)), code)]


class _Card(_Signature):
    """A card (`card`, `grid-item-card`): its title as a bold line, then its content."""


class _TocTree(_Base):
    """A visible `toctree`: the pages it lists, as links titled by each page's title."""

    def run(self) -> list[nodes.Node]:
        if "hidden" in self.options:
            return []
        items = []
        for line in self.content:
            entry = line.strip()
            if (
                not entry
                or "*" in entry
                or entry == "self"
                or ("glob" in self.options and "?" in entry)
            ):
                continue
            title, target = _split(entry)
            if "://" in target:
                link: nodes.Node = nodes.reference(entry, title or target, refuri=target)
            else:
                link = _doc_role("doc", entry, entry)[0][0]
            items.append(nodes.list_item("", nodes.paragraph("", "", link)))
        return [nodes.bullet_list("", *items, bullet="-")] if items else []


class _Include(_Base):
    """`include` of another file of the same project (a path from the root starts with `/`);
    a file outside the project, or missing, is left out."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        page = CURRENT.get()
        document = self.state.document
        count = getattr(document, "rst_includes", 0)
        if page is None or count >= _MAX_INCLUDES or not self.arguments:
            return []
        target = self.arguments[0].strip()
        base = page.project.root if target.startswith("/") else page.path.parent
        path = (base / target.lstrip("/")).resolve()
        if not path.is_file() or not path.is_relative_to(page.project.root.resolve()):
            return []
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return []
        document.rst_includes = count + 1
        lines = statemachine.string2lines(text, 8, convert_whitespace=True)
        self.state_machine.insert_input(lines, str(path))
        return []


_DROPPED = (
    "contents index highlight literalinclude nbgallery autosummary tabularcolumns "
    "sectionauthor codeauthor moduleauthor currentmodule raw todolist graphviz mermaid "
    "automodule autoclass autofunction automethod autoattribute autodata autoexception "
    "program-output command-output jinja"
)
_PASSED = "ifconfig hlist container rst-class cssclass grid grid-item glossary centered"
_SIGNATURES = (
    "envvar confval option describe object program cmdoption function class method attribute "
    "data exception module py:function py:class py:method py:attribute py:data py:module "
    "http:get http:post http:put http:patch http:delete http:head http:options"
)
_CALLOUTS: dict[str, type[Directive]] = {
    "seealso": _SeeAlso,
    "versionadded": _Version,
    "versionchanged": _Version,
    "versionremoved": _Version,
    "deprecated": _Version,
    "dropdown": _Callout,
}
_OWN: dict[str, type[Directive]] = {
    **{name: _Dropped for name in _DROPPED.split()},
    **{name: _PassThrough for name in _PASSED.split()},
    **{name: _Signature for name in _SIGNATURES.split()},
    **_CALLOUTS,
    **{name: _Code for name in ("code-block", "sourcecode", "code", "prompt", "doctest")},
    **{name: _TabSet for name in ("tabs", "tab-set")},
    **{name: _Tab for name in ("tab", "group-tab", "tab-item")},
    "code-tab": _CodeTab,
    "card": _Card,
    "grid-item-card": _Card,
    "include": _Include,
    "only": _Only,
    "toctree": _TocTree,
}


# -- roles ----------------------------------------------------------------------------------

_RoleResult = tuple[list[nodes.Node], list[nodes.system_message]]


def _split(text: str) -> tuple[str | None, str]:
    """`Title <target>` as (title, target); a bare target as (None, target)."""
    text = utils.unescape(text)
    m = _EXPLICIT.match(text)
    if m and m.group(1).strip():
        return m.group(1).strip(), m.group(2).strip()
    return None, (m.group(2) if m else text).strip()


def _literal_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    title, target = _split(text)
    return [nodes.literal(rawtext, title or target)], []


def _label_text(text: str) -> str:
    return re.sub(r"(?<!&)&(?!&)", "", utils.unescape(text)).replace("&&", "&").strip()


def _gui_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    label = _label_text(text)
    if name == "menuselection":
        label = " → ".join(part.strip() for part in label.split("-->"))
    return [nodes.strong(rawtext, label)], []


def _text_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    """Any other role: its title when it has one, else its target's readable part."""
    title, target = _split(text)
    if title is None and target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return [nodes.Text(title or target.lstrip("!"))], []


def _icon_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    return [], []


def _ref_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    """`:ref:` to a label or `page:Section`: a link to that section, titled as Sphinx would."""
    title, target = _split(text)
    page = CURRENT.get()
    found = page.project.label(target) if page else None
    if page is None or found is None:
        shown = title or target.split(":", 1)[-1]
        return [nodes.Text(shown)], []
    shown = title or plain(found.title) or page.project.titles.get(found.doc, target)
    link = page.project.page_link(found.doc, page.doc, found.title)
    return [nodes.reference(rawtext, shown, refuri=link)], []


def _doc_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    """`:doc:` to a page: a link to it, titled by the page's title."""
    title, target = _split(text)
    page = CURRENT.get()
    if page is None or _FOREIGN.match(target):  # no project, or another project's page
        return [nodes.Text(title or target.rsplit("/", 1)[-1])], []
    doc = page.project.resolve_doc(target, page.doc)
    shown = title or page.project.titles.get(doc) or target.rsplit("/", 1)[-1]
    link = page.project.page_link(doc, page.doc)
    return [nodes.reference(rawtext, shown, refuri=link)], []


def _abbr_role(name: str, rawtext: str, text: str, *_: Any, **__: Any) -> _RoleResult:
    return [nodes.Text(utils.unescape(text))], []


_LITERAL_ROLES = (
    "kbd code samp file command program option envvar makevar regexp mimetype manpage "
    "literal keyword"
)
_ROLES: dict[str, Callable[..., _RoleResult]] = {
    **{name: _literal_role for name in _LITERAL_ROLES.split()},
    "guilabel": _gui_role,
    "menuselection": _gui_role,
    "ref": _ref_role,
    "doc": _doc_role,
    "abbr": _abbr_role,
    **{name: _icon_role for name in ("octicon", "fa", "fas", "far", "fab", "material-regular")},
    **{name: _text_role for name in ("term", "numref", "download", "any", "index", "dfn")},
}


def _known_directive(name: str) -> bool:
    canonical = en.directives.get(name, name)
    return name in _OWN or canonical in directives._directive_registry


def _known_role(name: str) -> bool:
    canonical = en.roles.get(name, name)
    return name in _ROLES or canonical in roles._role_registry or canonical in roles._roles


def register(text: str) -> None:
    """Make every directive and role the page uses known to docutils (idempotent)."""
    _register_own()
    for name in set(_DIRECTIVE.findall(text)):
        if not _known_directive(name.lower()):
            directives.register_directive(name.lower(), _Unknown)
            _OWN[name.lower()] = _Unknown
    for name in set(_ROLE.findall(text)):
        if not _known_role(name.lower()):
            roles.register_local_role(name.lower(), _text_role)
            _ROLES[name.lower()] = _text_role


_registered: list[bool] = []


def _register_own() -> None:
    if _registered:
        return
    for name, directive in _OWN.items():
        directives.register_directive(name, directive)
    for name, role in _ROLES.items():
        roles.register_local_role(name, role)
    _registered.append(True)
