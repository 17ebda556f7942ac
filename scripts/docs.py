"""`make docs`: regenerate the generated parts of README.md and docs/ from the code and reports.

    python -m scripts.docs [--check] [--publish NAME=REPORT.json]

Each generated part sits between `<!-- generated:<name>:begin -->` and `<!-- generated:<name>:end
-->` markers; everything outside them is hand-written. The parts: `headline` (README) and
`eval-tables` (docs/evaluation.md) from the reports committed under docs/eval/, `metrics`
(docs/evaluation.md) from the docstring of scripts/evaluation/report.py, `settings` and
`tuning` (docs/configuration.md) from `app.settings.Settings` and `tuning.py`. `--publish
seed=reports/eval.json` first copies an eval report into docs/eval/seed.json. `--check` writes
nothing and exits 1 when a file is not what the code would generate (tests/test_docs.py runs it).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scripts.docgen.config import settings_table, tuning_tables
from scripts.docgen.evaluation import eval_tables, headline_table, metrics_meaning

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT / "docs" / "eval"

PARTS: dict[str, tuple[str, Callable[[Path], str]]] = {
    "headline": ("README.md", lambda root: headline_table(root / "docs" / "eval")),
    "eval-tables": ("docs/evaluation.md", lambda root: eval_tables(root / "docs" / "eval")),
    "metrics": ("docs/evaluation.md", lambda root: metrics_meaning()),
    "settings": ("docs/configuration.md", lambda root: settings_table(root)),
    "tuning": ("docs/configuration.md", lambda root: tuning_tables(root / "tuning.py")),
}


def _block(name: str) -> re.Pattern[str]:
    tag = re.escape(name)
    begin, end = f"<!-- generated:{tag}:begin -->", f"<!-- generated:{tag}:end -->"
    return re.compile(rf"({begin}\n)(.*?)({end})", re.S)


def fill(text: str, name: str, body: str) -> str:
    """`text` with the named generated block replaced by `body`; a missing block is an error."""
    pattern = _block(name)
    if not pattern.search(text):
        raise ValueError(f"no generated:{name} markers")
    content = body.rstrip("\n") + "\n" if body.strip() else ""
    return pattern.sub(lambda m: m.group(1) + content + m.group(3), text, count=1)


def render_all(root: Path = ROOT) -> dict[str, str]:
    """Every file with generated parts, as the code and reports say it should read."""
    out: dict[str, str] = {}
    for name, (rel, build) in PARTS.items():
        text = out.get(rel) or (root / rel).read_text(encoding="utf-8")
        out[rel] = fill(text, name, build(root))
    return out


def publish(spec: str, eval_dir: Path = EVAL_DIR) -> Path:
    """Copy an eval report into docs/eval/<name>.json after checking it is one."""
    name, _, source = spec.partition("=")
    if not re.fullmatch(r"[a-z0-9-]+", name) or not source:
        raise SystemExit("--publish wants NAME=REPORT.json (NAME: lowercase letters, digits, -)")
    report: Mapping[str, Any] = json.loads(Path(source).read_text(encoding="utf-8"))
    if "retrieval" not in report or "run" not in report:
        raise SystemExit(f"{source} is not a report written by scripts.eval")
    target = eval_dir / f"{name}.json"
    shutil.copyfile(source, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on drift")
    parser.add_argument("--publish", metavar="NAME=REPORT.json", action="append", default=[])
    args = parser.parse_args(argv)
    for spec in args.publish:
        print(f"published {publish(spec).relative_to(ROOT)}")
    stale = []
    for rel, text in render_all().items():
        path = ROOT / rel
        if path.read_text(encoding="utf-8") != text:
            stale.append(rel)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    verb = "out of date (run `make docs`)" if args.check else "rewritten"
    for rel in stale:
        print(f"{rel}: {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
