"""A Sphinx project as its pages' links see it: where it starts, its substitutions, and what
each `:doc:` path and `:ref:` label names. Read from the files, never executed.

- root: the nearest folder above a page holding `conf.py`, else the highest folder above it
  that still holds `.rst` files;
- `rst_prolog` / `rst_epilog`: string literals assigned in that `conf.py` (read with `ast`;
  a computed value is ignored), added before / after every page as Sphinx does;
- titles: each page's first section title, by its path from the root without `.rst`;
- labels: `.. _label:` before a section names that section; every section is also named
  `<page>:<title>` and, when no label says otherwise, `<title>` (sphinx.ext.autosectionlabel
  with or without its page prefix). Labels compare case- and space-folded.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from fnmatch import fnmatchcase as fnmatch
from functools import lru_cache
from pathlib import Path

from app.links import heading_anchor

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+\s*$")
_LABEL = re.compile(r"^\.\.\s+_([^:`][^:]*|`[^`]+`):\s*$")
_INLINE = re.compile(
    r":[\w.+:-]+:`([^`<]*?)\s*(?:<[^`>]*>)?`|``([^`]+)``|`([^`<]*?)\s*(?:<[^`>]*>)?`_{0,2}"
)
_SUBSTITUTION = re.compile(r"\|([^|\s][^|]*)\|_{0,2}")
_REPLACE = re.compile(r"^\.\.\s+\|([^|]+)\|\s+replace::\s*(.+)$", re.MULTILINE)
_EMPHASIS = re.compile(r"\*{1,2}([^*]+)\*{1,2}")
_MAX_CLIMB = 6


@dataclass(frozen=True)
class Target:
    """Where a label or page points: the page's path from the root, and a section title."""

    doc: str
    title: str | None = None


@dataclass
class Project:
    """One Sphinx source tree: its root, the text around every page, and its link targets."""

    root: Path
    prolog: str = ""
    epilog: str = ""
    titles: dict[str, str] = field(default_factory=dict)
    labels: dict[str, Target] = field(default_factory=dict)
    sections: dict[str, Target] = field(default_factory=dict)  # bare section titles
    excluded: tuple[str, ...] = ()  # conf.py's exclude_patterns
    subs: dict[str, str] = field(default_factory=dict)  # text substitutions of any page

    def excludes(self, path: Path) -> bool:
        """Whether conf.py's `exclude_patterns` leaves this file out of the site."""
        try:
            parts = path.resolve().relative_to(self.root.resolve()).parts
        except ValueError:
            return False
        prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
        return any(fnmatch(p, pat) for pat in self.excluded for p in prefixes)

    def doc_of(self, path: Path) -> str:
        """A page's path from the root, without `.rst` (how `:doc:` names it)."""
        try:
            rel = path.resolve().relative_to(self.root.resolve())
        except ValueError:
            return path.stem
        return rel.with_suffix("").as_posix()

    def page_link(self, doc: str, here: str, title: str | None = None) -> str:
        """The link from page `here` to page `doc` (and its section `title`), as a relative
        path the folder's link resolver understands."""
        if title and plain(title) == self.titles.get(doc):
            title = None  # the page's own title: its top
        anchor = f"#{heading_anchor(plain(title))}" if title else ""
        if doc == here:
            return anchor  # a section of the same page (nothing: the page itself)
        return posixpath.relpath(doc + ".rst", posixpath.dirname(here) or ".") + anchor

    def resolve_doc(self, target: str, here: str) -> str:
        """The page a `:doc:` target names, seen from page `here`."""
        target = target.strip().removesuffix(".rst")
        if target.startswith("/"):
            return posixpath.normpath(target.lstrip("/"))
        return posixpath.normpath(posixpath.join(posixpath.dirname(here), target))

    def label(self, name: str) -> Target | None:
        """What a `:ref:` label names, if any page of the project defines it."""
        return self.labels.get(fold(name)) or self.sections.get(fold(name))


def fold(label: str) -> str:
    """A label as Sphinx compares it: lower case, runs of space as one."""
    return " ".join(label.lower().split())


def plain(text: str | None, subs: dict[str, str] | None = None) -> str:
    """Section title text without inline markup (roles, literals, links, emphasis), its
    substitutions replaced by their text (`subs`) or their name."""
    if not text:
        return ""
    text = _INLINE.sub(lambda m: next(g for g in m.groups() if g is not None), text)
    text = _SUBSTITUTION.sub(lambda m: (subs or {}).get(m.group(1), m.group(1)), text)
    return " ".join(_EMPHASIS.sub(r"\1", text).replace("\\", "").split())


def substitutions(text: str) -> dict[str, str]:
    """The text substitutions (`.. |name| replace:: text`) a page or conf.py string defines."""
    return {m.group(1): plain(m.group(2)) for m in _REPLACE.finditer(text)}


def headings(lines: list[str]) -> list[tuple[int, str]]:
    """(line index of the title text, title) for each section title in a page's lines."""
    out: list[tuple[int, str]] = []
    for i in range(len(lines) - 1):
        text, under = lines[i], lines[i + 1]
        if not text.strip() or text[0].isspace() or _ADORNMENT.match(text):
            continue
        m = _ADORNMENT.match(under)
        if m and len(under.rstrip()) >= min(len(text.rstrip()), 3):
            out.append((i, text.strip()))
    return out


def scan_page(doc: str, text: str, project: Project) -> None:
    """Add one page's title and labels to the project."""
    lines = text.splitlines()
    found = headings(lines)
    if found:
        project.titles.setdefault(doc, plain(found[0][1], project.subs))
    starts = {i: title for i, title in found}
    for _, title in found:
        shown = plain(title, project.subs)
        project.labels.setdefault(fold(f"{doc}:{shown}"), Target(doc, shown))
        project.sections.setdefault(fold(shown), Target(doc, shown))
    for i, line in enumerate(lines):
        m = _LABEL.match(line)
        if m:
            name = m.group(1).strip("`")
            after = _next_title(lines, i, starts)
            named = plain(after, project.subs) if after else None
            project.labels.setdefault(fold(name), Target(doc, named))


def _next_title(lines: list[str], i: int, starts: dict[int, str]) -> str | None:
    """The section title right after a label (blank lines, other labels, overlines between)."""
    j = i + 1
    while j < len(lines):
        if j in starts:
            return starts[j]
        line = lines[j]
        if line.strip() and not _LABEL.match(line) and not _ADORNMENT.match(line):
            return None
        j += 1
    return None


def find_root(page: Path, folder: Path | None = None) -> tuple[Path, Path | None]:
    """The project root above a page and the `conf.py` that configures it (None when there is
    none). The conf.py is the nearest at or above the page; the root is its folder when that lies
    inside the folder being loaded, else the loaded folder (a docs set served from a repository
    whose conf.py sits a level up), else, with no folder given, the highest folder above the page
    that still holds `.rst` files."""
    here = page.resolve().parent
    conf = next(
        (d / "conf.py" for d in [here, *here.parents][:_MAX_CLIMB] if (d / "conf.py").is_file()),
        None,
    )
    loaded = folder.resolve() if folder is not None else None
    if conf is not None and (loaded is None or conf.parent.is_relative_to(loaded)):
        return conf.parent, conf
    if loaded is not None and here.is_relative_to(loaded):
        return loaded, conf
    root = here
    for _ in range(_MAX_CLIMB):
        parent = root.parent
        if parent == root or not any(parent.glob("*.rst")):
            break
        root = parent
    return root, conf


def conf_values(conf: Path) -> dict[str, object]:
    """The literal values a conf.py assigns at its top level (nothing is run)."""
    try:
        tree = ast.parse(conf.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                found[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return found


def conf_strings(conf: Path) -> tuple[str, str]:
    """`rst_prolog` and `rst_epilog` from a conf.py, when it assigns them string literals (the
    epilog also defines `|version|` and `|release|` when those are literals)."""
    values = conf_values(conf)
    found = {k: v if isinstance(v := values.get(k), str) else "" for k in _TEXTS}
    epilog = found["rst_epilog"]
    for name in ("version", "release"):  # Sphinx's own |version| and |release|
        if found[name] and f"|{name}|" not in found["rst_prolog"] + epilog:
            epilog += f"\n.. |{name}| replace:: {found[name]}\n"
    return found["rst_prolog"], epilog


_TEXTS = ("rst_prolog", "rst_epilog", "version", "release")


def _pages(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.rst")
        if p.is_file()
        and not any(
            part.startswith(".") or part == "node_modules" for part in p.relative_to(root).parts
        )
    )


_LOAD: ContextVar[dict[tuple[Path, Path | None], Project] | None] = ContextVar(
    "rst_load", default=None
)


@contextmanager
def one_load() -> Iterator[None]:
    """Within: each project is read once (the files of one load do not change under it)."""
    token = _LOAD.set({})
    try:
        yield
    finally:
        _LOAD.reset(token)


def project_for(page: Path, folder: Path | None = None) -> Project:
    """The project a page belongs to (rebuilt when a page of it changes; once per `one_load`);
    `folder` is the folder being loaded, the root when no `conf.py` says otherwise."""
    root, conf = find_root(page, folder)
    memo = _LOAD.get()
    if memo is not None and (root, conf) in memo:
        return memo[(root, conf)]
    project = _current(root, conf)
    if memo is not None:
        memo[(root, conf)] = project
    return project


def _current(root: Path, conf: Path | None) -> Project:
    pages = _pages(root)
    stamp = tuple((str(p), *_signature(p)) for p in pages)
    conf_stamp = _signature(conf) if conf else (0, 0)
    return _build(root, conf, (*stamp, conf_stamp))


def _signature(path: Path) -> tuple[int, int]:
    """A file's modification time and size; (0, 0) when it cannot be read (a dangling link)."""
    try:
        info = path.stat()
    except OSError:
        return 0, 0
    return info.st_mtime_ns, info.st_size


@lru_cache(maxsize=8)
def _build(root: Path, conf: Path | None, stamp: tuple[object, ...]) -> Project:
    project = Project(root)
    if conf is not None:
        project.prolog, project.epilog = conf_strings(conf)
        patterns = conf_values(conf).get("exclude_patterns")
        if isinstance(patterns, (list, tuple)):
            project.excluded = tuple(p.strip("/") for p in patterns if isinstance(p, str))
    texts: list[tuple[str, str]] = []
    for path in _pages(root):
        try:
            texts.append((project.doc_of(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    for text in (project.prolog, project.epilog, *(t for _, t in texts)):
        for name, value in substitutions(text).items():
            project.subs.setdefault(name, value)
    for doc, text in texts:
        scan_page(doc, text, project)
    return project
