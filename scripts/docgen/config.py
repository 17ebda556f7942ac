"""docs/configuration.md's tables, read from `app.settings.Settings` and `tuning.py` itself."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.settings import Settings
from tuning import FITTED_FILES, TUNING, OfflineWeights

SECTION = re.compile(r"#\s*---\s*(.+?)\s*---")
ENV_LINE = re.compile(r"#?\s*([A-Z][A-Z0-9_]+)=([^#]*)(?:#\s*(.*))?$")
MAX_WHY = 320


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _short(text: str) -> str:
    """At most MAX_WHY characters, cut at a sentence end when one is near."""
    text = " ".join(text.split())
    if len(text) <= MAX_WHY:
        return text
    cut = text.rfind(". ", 0, MAX_WHY)
    return text[: cut + 1] if cut > MAX_WHY // 3 else text[:MAX_WHY].rstrip() + " …"


def env_comments(env_example: Path) -> dict[str, str]:
    """The comment each variable of .env.example carries (the block above it, or inline)."""
    notes: dict[str, str] = {}
    block: list[str] = []
    header = ""  # a section header names the choice its first variable makes
    for raw in env_example.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        match = ENV_LINE.match(line)
        section = SECTION.match(line)
        if match:
            note = " ".join([*block, match.group(3) or ""]).strip()
            notes.setdefault(match.group(1), note or header)
            block, header = [], ""
        elif section:
            block, header = [], section.group(1)
        elif line.startswith("#"):
            block.append(line.lstrip("# ").strip())
        else:
            block = []
    return notes


def _setting_default(value: Any, root: Path) -> str:
    if isinstance(value, SecretStr):
        return "published demo value (refused outside `DEMO=1`)"
    if isinstance(value, Path):
        try:
            return f"`./{value.relative_to(root)}`"
        except ValueError:
            return f"`{value}`"
    if value is None or value == [] or value == {}:
        return "unset"
    if isinstance(value, list):
        return f"`{','.join(map(str, value))}`"
    return f"`{value}`"


def settings_table(root: Path) -> str:
    """One row per `Settings` field: variable, default, what it does."""
    notes = env_comments(root / ".env.example")
    rows = ["| variable | default | what |", "|---|---|---|"]
    for name, info in Settings.model_fields.items():
        env = (info.alias or name).upper()
        default = info.get_default(call_default_factory=True)
        what = info.description or notes.get(env, "")
        rows.append(f"| `{env}` | {_cell(_setting_default(default, root))} | {_cell(what)} |")
    return "\n".join(rows)


def _comments(source: str) -> dict[int, tuple[str, bool]]:
    """line number → (comment text, whether the line holds only that comment)."""
    out: dict[int, tuple[str, bool]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            alone = not tok.line[: tok.start[1]].strip()
            out[tok.start[0]] = (tok.string, alone)
    return out


def _why(lineno: int, end: int, comments: Mapping[int, tuple[str, bool]]) -> str:
    """A field's reason: its inline comment, else the comment block right above it."""
    for line in range(lineno, end + 1):
        text, alone = comments.get(line, ("", True))
        if text and not alone:
            return text.lstrip("# ")
    block: list[str] = []
    line = lineno - 1
    while line in comments and comments[line][1] and not SECTION.match(comments[line][0]):
        block.insert(0, comments[line][0].lstrip("#").strip())
        line -= 1
    return " ".join(block)


def _value(value: Any) -> str:
    if is_dataclass(value) and not isinstance(value, type):
        parts = [f"{f.name}={_value(getattr(value, f.name))}" for f in fields(value)]
        return ", ".join(p for p in parts if not p.endswith("=None"))
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_value(v)}" for k, v in value.items())
    if isinstance(value, (frozenset, set)):
        return ", ".join(sorted(map(str, value)))
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return repr(value)


def _tuning_fields(
    tuning_py: Path, class_name: str = "Tuning", section: str = "general"
) -> list[tuple[str, str, int, int]]:
    """(section, field name, first line, last line) of every field of a class of tuning.py."""
    tree = ast.parse(tuning_py.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    lines = tuning_py.read_text(encoding="utf-8").splitlines()
    out: list[tuple[str, str, int, int]] = []
    cursor = cls.lineno
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        for text in lines[cursor : node.lineno]:
            match = SECTION.search(text)
            if match:
                section = match.group(1)
        cursor = node.lineno
        out.append((section, node.target.id, node.lineno, node.end_lineno or node.lineno))
    return out


def tuning_tables(tuning_py: Path) -> str:
    """`tuning.py` as one table per stage: knob, value, why (fitted values name their file)."""
    comments = _comments(tuning_py.read_text(encoding="utf-8"))
    fitted = {name: path for path, names in FITTED_FILES.items() for name in names}
    parts: list[str] = []
    current = None
    weights_section = "offline reranker (`OfflineWeights`, set by hand, checked on the seed)"
    rows = [(s, n, a, b, TUNING) for s, n, a, b in _tuning_fields(tuning_py)]
    rows += [
        (s, n, a, b, OfflineWeights())
        for s, n, a, b in _tuning_fields(tuning_py, "OfflineWeights", weights_section)
    ]
    for section, name, first, last, owner in rows:
        if section != current:
            current = section
            parts += ["", f"### {section}", "", "| knob | value | why |", "|---|---|---|"]
        why = _short(_why(first, last, comments))
        if name in fitted and owner is TUNING:
            why = f"fitted by `make fit` into `{fitted[name]}`. {why}".strip()
        value = _value(getattr(owner, name))
        parts.append(f"| `{name}` | `{_cell(value)}` | {_cell(why)} |")
    return "\n".join(parts).strip("\n")
