"""Count the rules of the offline language layer: lines, regexes, alternations, listed words.

    python -m scripts.count_rules [--json]

The layer is `app/language/` (its Python; the data files there are rows, not rules) plus what
remains of the word-reading modules listed in `LAYER`. Counted by reading the source with `ast`:

- `lines`: physical lines of those Python files;
- `regexes`: calls of `re.compile/search/match/fullmatch/sub/findall/finditer/split` (and of
  the router's `_rx` helper);
- `branches`: for every raw string literal (the project writes its patterns raw), its `|` count
  plus one — so a pattern of three alternatives counts three;
- `words`: string constants that are a word or short phrase (letters, no digits) listed in a set,
  list, tuple or dict, plus the words of `"..." .split()` literals.

The ratchet test (tests/language/test_language_ratchet.py) fails when any count rises above its
ceiling.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYER = (
    "app/turn/condense.py",
    "app/turn/router.py",
    "app/turn/outline.py",
    "app/turn/confidence.py",
    "app/providers/chat/offline.py",
    "app/search/answer_types.py",
    "app/language/synonyms.py",
)
KINDS = ("lines", "regexes", "branches", "words")
_RE_CALLS = {"compile", "search", "match", "fullmatch", "sub", "findall", "finditer", "split"}
_WORD = re.compile(r"^[^\W\d_][^\W\d_' -]*(?:['\- ][^\W\d_]+)*$")


def layer_files(root: Path = ROOT) -> list[Path]:
    """The Python files of the language layer that exist under `root`."""
    package = sorted((root / "app" / "language").rglob("*.py"))
    return package + [root / p for p in LAYER if (root / p).exists()]


def _branches(source: str) -> int:
    total = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING:
            continue
        prefix = re.match(r"[A-Za-z]*", tok.string).group(0).lower()
        if "r" in prefix:
            total += tok.string.count("|") + 1
    return total


def _listed(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Set | ast.List | ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [k for k in node.keys if k is not None] + list(node.values)
    return []


def _is_word(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(_WORD.match(node.value))
    )


def _words(tree: ast.AST) -> int:
    total = 0
    for node in ast.walk(tree):
        total += sum(1 for e in _listed(node) if _is_word(e))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            total += len(node.func.value.value.split())
    return total


def _is_regex_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "_rx"  # the router's compile helper
    return (
        isinstance(func, ast.Attribute)
        and func.attr in _RE_CALLS
        and isinstance(func.value, ast.Name)
        and func.value.id == "re"
    )


def _regexes(tree: ast.AST) -> int:
    return sum(1 for n in ast.walk(tree) if _is_regex_call(n))


def count_file(path: Path) -> dict[str, int]:
    """The four counts for one source file."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    return {
        "lines": len(source.splitlines()),
        "regexes": _regexes(tree),
        "branches": _branches(source),
        "words": _words(tree),
    }


def count(root: Path = ROOT) -> dict[str, object]:
    """Per-file counts and their totals over the layer."""
    files = {str(p.relative_to(root)): count_file(p) for p in layer_files(root)}
    totals = {k: sum(c[k] for c in files.values()) for k in KINDS}
    return {"total": totals, "files": files}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = count()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'file':<42} {'lines':>6} {'regexes':>8} {'branches':>9} {'words':>6}")
    rows = [*result["files"].items(), ("total", result["total"])]  # type: ignore[union-attr]
    for name, c in rows:
        print(f"{name:<42} {c['lines']:>6} {c['regexes']:>8} {c['branches']:>9} {c['words']:>6}")


if __name__ == "__main__":
    main()
