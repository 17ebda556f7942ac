"""Progress of a long load, with an estimate of the time left. Pure (the clock is passed in)."""

from __future__ import annotations

from dataclasses import dataclass


def time_left(elapsed_s: float, done: int, total: int) -> float | None:
    """Seconds left at the rate so far; None before anything is done (no rate yet)."""
    if done <= 0 or total <= 0 or elapsed_s <= 0:
        return None
    return max(elapsed_s / done * (total - done), 0.0)


def clock(seconds: float | None) -> str:
    """`1 h 02 min`, `3 min 20 s`, `45 s`."""
    s = round(seconds or 0)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


@dataclass
class Eta:
    """Started at `start` (a monotonic time): each report says done/total and the time left."""

    start: float

    def line(self, now: float, done: int, total: int, what: str = "articles") -> str:
        """`120/1152 articles, about 4 min 10 s left`."""
        left = time_left(now - self.start, done, total)
        if done >= total:
            return f"{done}/{total} {what}, done in {clock(now - self.start)}"
        if left is None:
            return f"{done}/{total} {what}, estimating the time left"
        return f"{done}/{total} {what}, about {clock(left)} left"
