"""Small helpers every benchmark section shares: percentiles, ratios, tables, timing."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (linear interpolation, as numpy's default); NaN for no values."""
    if not values:
        return math.nan
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean / max of samples taken in seconds, reported in milliseconds."""
    ms = [s * 1000.0 for s in samples_s]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "mean_ms": round(sum(ms) / len(ms), 3) if ms else math.nan,
        "max_ms": round(max(ms), 3) if ms else math.nan,
    }


def ratio(numerator: float, denominator: float, digits: int = 2) -> float:
    """numerator / denominator, rounded; NaN when it is undefined."""
    if not denominator or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return round(numerator / denominator, digits)


def fmt(value: Any, digits: int = 1) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:,.{digits}f}"
    return str(value)


def fmt_ratio(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}x"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], digits: int = 1) -> list[str]:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]]
    cells += [[c if isinstance(c, str) else fmt(c, digits) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [row[0].ljust(widths[0])]
        parts += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        return "  " + "  ".join(parts).rstrip()

    rule = "  " + "  ".join("-" * w for w in widths)
    return [line(cells[0]), rule, *(line(r) for r in cells[1:])]


def heading(number: int, title: str) -> list[str]:
    text = f"[{number}] {title}"
    return ["", text, "=" * len(text)]


def progress(message: str) -> None:
    """Progress goes to stderr so stdout holds only the report."""
    print(f"  .. {message}", file=sys.stderr, flush=True)


class Stopwatch:
    """`with Stopwatch() as sw: ...` then `sw.seconds`."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self._start
