"""The docs say only what exists: links resolve, commands exist, generated parts are current."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from scripts import docs as docs_script

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = sorted(
    [ROOT / "README.md", ROOT / "scripts" / "README.md", *(ROOT / "docs").rglob("*.md")]
)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
# a command in code: after a backtick, a shell prompt or at a line's start, env assignments allowed
MAKE = re.compile(r"(?:^|`|\$ )\s*(?:[A-Z_]+=\S*\s+)*make ([a-z][a-z0-9-]*)", re.M)
PYTHON_M = re.compile(r"\bpython3? -m ([A-Za-z_][\w.]*)")
TARGET = re.compile(r"^([a-z][a-z0-9-]*):", re.M)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def links(text: str) -> list[str]:
    """Relative link targets of a Markdown text (URLs, mail and in-page anchors left out)."""
    found = [a or b for a, b in LINK.findall(text)]
    return [t for t in found if not re.match(r"[a-z]+:|#|<", t)]


def make_targets() -> set[str]:
    return set(TARGET.findall((ROOT / "Makefile").read_text(encoding="utf-8")))


def module_exists(name: str) -> bool:
    """A module of this repository (by file) or an installed one (by import spec)."""
    parts = name.split(".")
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
        return True
    if (ROOT / parts[0]).exists():
        return False  # our package, but no such module in it
    return importlib.util.find_spec(parts[0]) is not None


def test_the_docs_checker_sees_what_it_should() -> None:
    text = "[a](docs/x.md#y) ![i](img/p.png) [w](https://x.org) [t](#z) `make fit` python -m a.b"
    assert links(text) == ["docs/x.md#y", "img/p.png"]
    assert MAKE.findall(text + " to make it\n`X=1 make run`") == ["fit", "run"]
    assert PYTHON_M.findall(text) == ["a.b"]
    assert not module_exists("scripts.no_such_module")
    assert module_exists("scripts.eval") and module_exists("pytest")


@pytest.mark.parametrize("path", DOC_FILES, ids=_rel)
def test_relative_links_resolve(path: Path) -> None:
    missing = []
    for target in links(path.read_text(encoding="utf-8")):
        file = target.split("#", 1)[0]
        if file and not (path.parent / file).exists():
            missing.append(target)
    assert not missing, f"{_rel(path)} links to missing files: {missing}"


@pytest.mark.parametrize("path", DOC_FILES, ids=_rel)
def test_named_commands_exist(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    targets = make_targets()
    bad_make = {t for t in MAKE.findall(text) if t not in targets}
    bad_modules = {m.rstrip(".") for m in PYTHON_M.findall(text)}
    bad_modules = {m for m in bad_modules if not module_exists(m)}
    assert not bad_make, f"{_rel(path)} names make targets the Makefile lacks: {bad_make}"
    assert not bad_modules, f"{_rel(path)} names modules that do not exist: {bad_modules}"


def test_readme_fits_on_a_screen_or_two() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200


def test_generated_parts_match_the_code() -> None:
    for rel, text in docs_script.render_all(ROOT).items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, (
            f"{rel} differs from what the code generates: run `make docs`"
        )


def test_fill_replaces_only_the_named_block() -> None:
    text = "a\n<!-- generated:x:begin -->\nold\n<!-- generated:x:end -->\nb\n"
    assert docs_script.fill(text, "x", "new") == text.replace("old", "new")
    with pytest.raises(ValueError):
        docs_script.fill(text, "y", "new")
