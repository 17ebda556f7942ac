"""`make bench`: performance figures measured side by side in one run, printed as ratios.

    python -m scripts.bench [--quick] [--sections 1,2,3,4,5,6,7] [--out reports/bench.json]
                            [--sizes 1000,10000,100000] [--queries 200,150,60]
                            [--clients 1:64,8:16,32:8] [--repeats 3] [--limit N]

Sections (each prints a table and its ratio lines; everything also goes to the JSON report):

1. retrieval latency p50/p95 at 1k / 10k / 100k synthetic chunks in `LocalSearch`, per ranker
   and for the whole `retrieve()`, with build time and growth ratios;
2. full turns through the HTTP API (the real app in a child process on 127.0.0.1, offline
   provider, local MiniLM) at 1, 8 and 32 concurrent clients: req/s, p50/p95, ratios vs 1;
3. prompt size at turn 8 vs turn 60: our bounded memory vs replaying the raw transcript;
4. bytes written per turn at turn 5 vs turn 200: a document per message vs an array in the
   conversation document (wire bytes and document bytes rewritten);
5. our pipeline vs a dense-only MiniLM top-4 baseline on the seed eval cases: recall and
   latency in the same run;
6. the cost of clustering 1k and 10k gap questions (the /admin gap report), and of embedding
   them (MiniLM on a sample, extrapolated; full runs only);
7. loading a docs folder (`--docs PATH`, default the seed articles) through the real ingest
   pipeline beside bare MiniLM encoding of the same chunk texts: seconds, chunks/s and the
   ratio (goal: ingest ≤ 2x bare).

`--quick` (under a minute) runs sections 1 (1k and 10k chunks, fewer queries), 3, 4 and 6; name
sections 2 or 5 explicitly to add them in a reduced form. Sections 1, 3 and 4 need no model.
Timings on a shared machine move with its load: the report records the load average around
every section, and only ratios measured within one run should be compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # allow `python scripts/bench.py` as well as `-m`
    sys.path.insert(0, str(ROOT))

from scripts.benchmarks import (  # noqa: E402
    baseline,
    gap_clusters,
    http_load,
    ingest_speed,
    prompt_size,
    retrieval_scale,
    write_bytes,
)

DEFAULT_OUT = ROOT / "reports" / "bench.json"
FULL = {
    "sizes": (1_000, 10_000, 100_000),
    "queries": (200, 150, 60),
    "clients": ((1, 64), (8, 16), (32, 8)),
    "repeats": 3,
    "sections": (1, 2, 3, 4, 5, 6, 7),
    "write_turns": (5, 200),
}
QUICK = {
    "sizes": (1_000, 10_000),
    "queries": (100, 60),
    "clients": ((1, 8), (8, 2), (32, 1)),
    "repeats": 1,
    "sections": (1, 3, 4, 6),
    "write_turns": (5, 50),  # same turn kind (the cycle is 15)
}
TITLES = {
    1: "retrieval_scale",
    2: "http_load",
    3: "prompt_size",
    4: "write_bytes",
    5: "baseline",
    6: "gap_clusters",
    7: "ingest_speed",
}


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def _levels(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for part in text.split(","):
        clients, _, messages = part.partition(":")
        out.append((int(clients), int(messages or 4)))
    return tuple(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m scripts.bench", description=__doc__.split("\n")[0])
    p.add_argument(
        "--quick", action="store_true", help="under a minute: sections 1, 3, 4, 6, smaller"
    )
    p.add_argument("--sections", type=_ints, help="comma-separated section numbers (1-7)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    p.add_argument("--sizes", type=_ints, help="section 1 chunk counts, e.g. 1000,10000")
    p.add_argument("--queries", type=_ints, help="section 1 queries per size, e.g. 150,100")
    p.add_argument("--clients", type=_levels, help="section 2 clients:messages, e.g. 1:40,8:8")
    p.add_argument("--repeats", type=int, help="section 5 timed passes over the cases")
    p.add_argument("--limit", type=int, help="section 5: only the first N labelled cases")
    p.add_argument("--docs", type=Path, help="section 7: the docs folder to ingest")
    args = p.parse_args(argv)
    preset = QUICK if args.quick else FULL
    args.sections = args.sections or preset["sections"]
    args.sizes = args.sizes or preset["sizes"]
    args.queries = args.queries or preset["queries"]
    if len(args.queries) == 1:
        args.queries = args.queries * len(args.sizes)
    if len(args.queries) != len(args.sizes):
        p.error("--queries needs one count, or one per --sizes entry")
    args.clients = args.clients or preset["clients"]
    args.repeats = args.repeats if args.repeats is not None else preset["repeats"]
    args.write_turns = preset["write_turns"]
    bad = [s for s in args.sections if s not in TITLES]
    if bad:
        p.error(f"unknown sections {bad}; choose from 1-{max(TITLES)}")
    return args


def _clean(value: Any) -> Any:
    """JSON-safe: NaN/inf become null (strict JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on Linux
        return []


def _section(args: argparse.Namespace, number: int) -> tuple[Any, Callable[[Any], list[str]]]:
    if number == 1:
        return retrieval_scale.run(args.sizes, args.queries), retrieval_scale.render
    if number == 2:
        return http_load.run(args.clients), http_load.render
    if number == 3:
        return prompt_size.run(), prompt_size.render
    if number == 4:
        return write_bytes.run(args.write_turns), write_bytes.render
    if number == 7:
        return ingest_speed.run(args.docs), ingest_speed.render
    if number == 6:
        if args.quick:
            return gap_clusters.run(), gap_clusters.render
        return gap_clusters.run_with_embedding(), gap_clusters.render
    return baseline.run(repeats=args.repeats, limit=args.limit), baseline.render


async def run(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    started = time.perf_counter()
    report: dict[str, Any] = {
        "meta": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join(["python -m scripts.bench", *argv]),
            "quick": args.quick,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            # BLAS/torch thread pools change numpy and MiniLM timings on a contended machine
            "thread_env": {
                k: os.environ.get(k)
                for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
            },
            "load_avg_start": _load(),
        },
        "sections": {},
    }
    meta = report["meta"]
    print(f"Concierge benchmarks — {meta['date']} — {meta['command']}")
    print(
        f"python {meta['python']} on {meta['platform']}, {meta['cpus']} CPUs, "
        f"load average {meta['load_avg_start']}"
    )
    for number in sorted(args.sections):
        name = TITLES[number]
        load_before = _load()
        t0 = time.perf_counter()
        pending, render = _section(args, number)
        result = await pending if asyncio.iscoroutine(pending) else pending
        result["wall_s"] = round(time.perf_counter() - t0, 1)
        result["load_avg_before"], result["load_avg_after"] = load_before, _load()
        report["sections"][name] = result
        print("\n".join(render(result)))
        print(
            f"  (section wall time {result['wall_s']}s; load average before "
            f"{load_before}, after {result['load_avg_after']})",
            flush=True,
        )
    meta["wall_s"] = round(time.perf_counter() - started, 1)
    meta["load_avg_end"] = _load()
    report["summary"] = summary_figures(report["sections"])
    return report


def _dig(data: Any, *path: str) -> float | None:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return float(data) if isinstance(data, int | float) and math.isfinite(data) else None


def summary_figures(sections: dict[str, Any]) -> dict[str, float | None]:
    """The goal figures of this run (None for a section that did not run)."""
    writes = sections.get("write_bytes", {}).get("ratios", {})
    bytes_ratio = next((v for k, v in writes.items() if k.startswith("ours_bytes_")), None)
    growth = sections.get("retrieval_scale", {}).get("growth", {})
    last_growth = list(growth)[-1] if growth else None
    http = sections.get("http_load", {})
    return {
        "bytes_ratio": bytes_ratio,
        "prompt_ratio": next(
            (
                v
                for k, v in sections.get("prompt_size", {}).get("ratios", {}).items()
                if k.startswith("ours_") and "/" in k
            ),
            None,
        ),
        "retrieval_growth": _dig(growth, last_growth, "retrieve", "p50") if last_growth else None,
        "clients8_speedup": _dig(http, "ratios_vs_first", "8", "req_per_s"),
        "p95_32_ms": _dig(http, "levels", "32", "latency", "p95_ms"),
        "first_event_p95_ms": _dig(http, "streamed", "first_event", "p95_ms"),
        "ingest_over_bare": _dig(sections, "ingest_speed", "ingest_over_bare"),
    }


def summary_line(figures: dict[str, float | None]) -> str:
    """`bench: bytes_ratio=… prompt_ratio=… …` — one line for scripts and CI to read."""

    def show(value: float | None) -> str:
        if value is None:
            return "na"
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"

    return "bench: " + " ".join(f"{k}={show(v)}" for k, v in figures.items())


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
    report = asyncio.run(run(args, argv))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(_clean(report), indent=2, ensure_ascii=False) + "\n")
    print(f"\nTotal {report['meta']['wall_s']}s. Report written to {args.out}")
    print(summary_line(report["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
