"""`make fit`: refit every fitted value from the development sets into its data file.

    python -m scripts.fit [--only router,gaps,confidence] [--dump DUMP.jsonl]

The development sets are read from `CONCIERGE_EVAL_DIR`, else `../shared/eval` (MT-RAG and Bitext;
never copied into the repository). Each step runs the fitting script with the options that
produced the committed value, and the script writes its data file:

- router: `scripts.fit_router --write` → app/fitted/router.json (Bitext train → dev);
- gaps: `scripts.cluster_gaps_eval --write` → app/fitted/gaps.json (the gap clustering
  threshold: best ARI on Bitext train, scored on dev);
- confidence: a feature dump of the MT-RAG dev set by `scripts.evaluation.sweep`, then
  `scripts.evaluation.fit_confidence --write` on its tune part → app/fitted/confidence.json.

Nothing is written that did not come out of a fit, so `git diff` after `make fit` is empty when
neither the code nor the data changed. `--dump D` keeps the sweep dump at D, or reuses D when it
exists (the dump is the slow part: it ingests MT-RAG and runs its 273 cases); reuse it only while
the retrieval code is unchanged, since the dump holds that code's features.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.measure_condense import EVAL_DIR

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("router", "gaps", "confidence")
# The answerability fit's options, one per line (scripts.evaluation.fit_confidence --help): the
# model's features are `use`; `weak-at` fixes weak in the one feature's terms, so a model of
# several features drops it (weak is then Youden's J) and takes a new `version`.
CONFIDENCE_OPTIONS: dict[str, str] = {
    "use": "sentence",
    "fit-on": "tune",
    "max-unanswerable-strong": "0.04",
    "passage-floor": "0.55",
    "weak-at": "sentence=0.639",
    "version": "offline-3",
}


GAPS = (
    "scripts.cluster_gaps_eval",
    "--tune",
    str(EVAL_DIR / "bitext_train_cases.jsonl"),
    "--report",
    str(EVAL_DIR / "bitext_dev_cases.jsonl"),
    "--write",
)


def _run(*args: str) -> None:
    command = [sys.executable, "-m", *args]
    print("$ " + " ".join(["python", "-m", *args]), flush=True)
    # one BLAS thread, as `make fit` sets it: threaded sums can differ in their last bits
    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    subprocess.run(command, cwd=ROOT, check=True, env=env)


def sweep_dump(target: Path) -> None:
    """Every MT-RAG case's confidence features, one line each (split and domain included)."""
    _run(
        "scripts.evaluation.sweep",
        "--corpus",
        str(EVAL_DIR / "mtrag_corpus.jsonl"),
        "--cases",
        str(EVAL_DIR / "mtrag_cases.jsonl"),
        "--split",
        "all",
        "--quick",
        "--dump",
        str(target),
    )


def fit_confidence(dump: Path | None) -> None:
    """The sweep dump (kept at `dump` when given and new, reused when it exists), then the fit."""
    with tempfile.TemporaryDirectory(prefix="concierge-fit-") as tmp:
        if dump is None:
            dump = Path(tmp) / "dump.jsonl"
        if not dump.is_file():
            sweep_dump(dump)
        options = [arg for k, v in CONFIDENCE_OPTIONS.items() for arg in (f"--{k}", v)]
        _run("scripts.evaluation.fit_confidence", str(dump), *options, "--write")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.fit", description=__doc__)
    parser.add_argument("--only", default=",".join(STEPS), help="comma-separated steps")
    parser.add_argument("--dump", type=Path, default=None, help="keep or reuse the sweep dump")
    args = parser.parse_args(argv)
    steps = args.only.split(",")
    unknown = set(steps) - set(STEPS)
    if unknown:
        parser.error(f"unknown steps {sorted(unknown)}; known {STEPS}")
    if not (EVAL_DIR / "mtrag_cases.jsonl").is_file():
        print(f"no development sets in {EVAL_DIR} (set CONCIERGE_EVAL_DIR)", file=sys.stderr)
        return 2
    for step in steps:
        started = time.perf_counter()
        if step == "router":
            _run("scripts.fit_router", "--write")
        elif step == "gaps":
            _run(*GAPS)
        else:
            fit_confidence(args.dump)
        print(f"[{step}: {time.perf_counter() - started:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
