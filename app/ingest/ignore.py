"""The files a docs folder's own generator does not publish as pages, so they are not served.

Mintlify reads `.mintignore` from the root of the docs (beside `docs.json`), written in
`.gitignore` syntax: comments, blank lines, `dir/`, `*.ext`, `**/`, a leading `/` anchoring a
pattern to the folder, `!negation`; the last matching line decides. Matching is gitignore's own
(`pathspec.GitIgnoreSpec`), including that a file under an excluded folder cannot be re-included.
A Mintlify project also leaves out a documented default list without any configuration, renders
only `.md`/`.mdx` files as pages (a PDF or a JSON file beside them is a static file it serves for
download), and never renders a file in its `snippets/` folder as a page. These apply only where
the folder is a Mintlify project (a `.mintignore`, a `mint.json`, or a `docs.json` that is
Mintlify's), since `build/`, `CHANGELOG.md` or a PDF can be real help pages elsewhere. Each
`.mintignore` applies to the folder holding it, deeper files taking precedence, as nested
`.gitignore` files do, so pointing at a folder above the docs still works.

MkDocs has the same in its config: `exclude_docs` and `draft_docs` (gitignore-style lines,
relative to `docs_dir`) leave files out of the built site; they are read from a `mkdocs.yml` in
the walked folder or the one above it (where it sits when the docs folder itself is served).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pathspec import GitIgnoreSpec

MINTIGNORE = ".mintignore"
# what Mintlify ignores without configuration (its `.mintignore` page, "Default ignored patterns")
MINTLIFY_DEFAULTS = (
    ".git",
    ".github",
    ".claude",
    ".agents",
    ".idea",
    ".vscode",
    "node_modules",
    "build",
    "dist",
    "coverage",
    ".cache",
    "tmp",
    "temp",
    "README.md",
    "LICENSE.md",
    "CHANGELOG.md",
    "CONTRIBUTING.md",
)
MINTLIFY_PAGES = frozenset({".md", ".mdx"})
_CONFIGS = ("docs.json", "mint.json")


@dataclass(frozen=True, slots=True)
class _RuleSet:
    folder: PurePosixPath  # relative to the walked root; its patterns are relative to it
    spec: GitIgnoreSpec
    source: str  # named in the skip reason


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """Every ignore rule set of one walked folder, shallowest first, and its Mintlify roots."""

    sets: tuple[_RuleSet, ...] = ()
    mintlify: tuple[PurePosixPath, ...] = ()

    def reason(self, rel: PurePosixPath) -> str | None:
        """Why the file at `rel` (relative to the walked root) is not a page, or None."""
        decided: str | None = None
        for rules in self.sets:
            if not _under(rel, rules.folder):
                continue
            inner = PurePosixPath(*rel.parts[len(rules.folder.parts) :]).as_posix()
            result = rules.spec.check_file(inner)
            if result.include is not None:
                decided = f"left out by {rules.source}" if result.include else None
        static = rel.suffix.lower() not in MINTLIFY_PAGES
        if decided is None and static and any(_under(rel, r) for r in self.mintlify):
            decided = "a static file of a Mintlify project (its pages are .md and .mdx)"
        return decided


def _under(rel: PurePosixPath, folder: PurePosixPath) -> bool:
    return rel.parts[: len(folder.parts)] == folder.parts


def ignore_rules(root: Path) -> IgnoreRules:
    """The rules under `root`: Mintlify's defaults and the `.mintignore` of each Mintlify root."""
    roots = sorted(_mintlify_roots(root), key=lambda p: len(p.parts))
    sets: list[_RuleSet] = []
    for folder in roots:
        defaults = GitIgnoreSpec.from_lines(MINTLIFY_DEFAULTS)
        sets.append(_RuleSet(folder, defaults, "Mintlify's default ignore list"))
        file = root / folder / MINTIGNORE
        if file.is_file():
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            shown = (folder / MINTIGNORE).as_posix()
            sets.append(_RuleSet(folder, GitIgnoreSpec.from_lines(lines), shown))
    return IgnoreRules(tuple(_mkdocs_sets(root) + sets), tuple(roots))


def _mkdocs_sets(root: Path) -> list[_RuleSet]:
    """`exclude_docs` and `draft_docs` of the MkDocs project whose docs are (under) `root`."""
    for folder in (root, root.parent):
        for name in ("mkdocs.yml", "mkdocs.yaml"):
            config = _mkdocs_config(folder / name)
            if config is None:
                continue
            docs = (folder / str(config.get("docs_dir") or "docs")).resolve()
            if docs != root.resolve() and root.resolve() not in docs.parents:
                continue
            at = PurePosixPath(docs.relative_to(root.resolve()).as_posix())
            return [
                _RuleSet(at, GitIgnoreSpec.from_lines(lines.splitlines()), f"{name} {key}")
                for key in ("exclude_docs", "draft_docs")
                if isinstance(lines := config.get(key), str)
            ]
    return []


class _AnyTag(yaml.SafeLoader):
    """YAML that reads `!ENV`, `!!python/name:` and other tags of MkDocs configs as nothing."""


_AnyTag.add_multi_constructor("", lambda loader, suffix, node: None)


def _mkdocs_config(file: Path) -> dict[str, Any] | None:
    """A `mkdocs.yml` as a mapping, or None when there is none or it cannot be read."""
    if not file.is_file():
        return None
    try:
        data = yaml.load(file.read_text(encoding="utf-8"), Loader=_AnyTag)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def mintlify_snippet(rel: PurePosixPath, root: Path) -> bool:
    """Whether the file is in the `snippets/` folder of a Mintlify project: never a page."""
    return any(
        part == "snippets" and is_mintlify_root(root.joinpath(*rel.parts[:i]))
        for i, part in enumerate(rel.parts[:-1])
    )


def mintlify_hidden(rel: PurePosixPath, root: Path, meta: dict[str, Any]) -> bool:
    """Whether the page says `hidden: true` in a Mintlify project, which leaves it out of the
    navigation, search indexing and the AI context (Mintlify's "Hidden pages"). GitBook's
    `hidden: true` only takes a page out of the table of contents and keeps it in the site's
    AI context, so there it stays a page."""
    return meta.get("hidden") is True and any(
        is_mintlify_root(root.joinpath(*rel.parts[:i])) for i in range(len(rel.parts))
    )


def _mintlify_roots(root: Path) -> set[PurePosixPath]:
    """Folders (relative to `root`) that are the root of a Mintlify project."""
    found: set[PurePosixPath] = set()
    for name in (MINTIGNORE, *_CONFIGS):
        for file in root.rglob(name):
            rel = PurePosixPath(file.relative_to(root).as_posix())
            hidden = any(p == "node_modules" or p.startswith(".") for p in rel.parts[:-1])
            if not hidden and is_mintlify_root(file.parent):
                found.add(rel.parent)
    return found


def is_mintlify_root(folder: Path) -> bool:
    """Whether `folder` holds a `.mintignore`, a `mint.json` or Mintlify's `docs.json`."""
    if (folder / MINTIGNORE).is_file() or (folder / "mint.json").is_file():
        return True
    config = folder / "docs.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    # Mintlify's schema URL, or the keys its docs.json requires
    return "mintlify" in str(data.get("$schema", "")) or {"theme", "navigation"} <= data.keys()
