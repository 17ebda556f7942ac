"""Time budgets for provider calls: a turn's deadline, per-stage budgets inside it, bounded retry.

A turn has one deadline (`tuning.turn_budget_seconds`); each stage (condense, retrieve, each
generation round, the summary) runs under its own budget, clipped to what is left of the turn.
The deadline travels in a context variable, like a cancellation scope: the stage that owns the
budget sets it with `deadline(seconds)`, and an adapter several calls down reads `remaining()` to
size its HTTP timeout and to decide whether a retry still fits. Nothing here sleeps past it.

`call_with_retries` is the one retry loop every network adapter uses, instead of its SDK's
(anthropic's SDK would sleep a 45 s `retry-after` inside a 30 s turn; voyageai's retries up to
its own 600 s timeout). A retry happens only when the failure is retryable, attempts remain, and
the wait (the server's `retry-after` when it sent one, else exponential backoff) plus a minimal
attempt still fit in the remaining budget; otherwise the error is raised at once, so the caller
falls back while the customer is still waiting.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.health import ProviderHealth
from tuning import Tuning

T = TypeVar("T")

_DEADLINE: ContextVar[float | None] = ContextVar("provider_deadline", default=None)


def remaining() -> float | None:
    """Seconds left before the innermost deadline (never negative), or None when unbounded."""
    at = _DEADLINE.get()
    if at is None:
        return None
    return max(0.0, at - time.monotonic())


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Run the block under `seconds` more, but never past an enclosing deadline."""
    if seconds is None:
        yield
        return
    at = time.monotonic() + max(0.0, seconds)
    outer = _DEADLINE.get()
    token = _DEADLINE.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


@contextmanager
def detached() -> Iterator[None]:
    """Leave the enclosing deadline behind: for work spawned by a turn that outlives it (the
    summary runs after the reply is sent, under its own budget, not the turn's remainder)."""
    token = _DEADLINE.set(None)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


GRACE_SECONDS = 0.25  # how long a stage's hard stop waits for an adapter to give up by itself


def guard() -> asyncio.Timeout:
    """A hard stop just after the current deadline, for awaitables that may ignore it.

    Well-behaved adapters size their own timeouts from `remaining()` and raise a `ProviderError`
    that names the provider and the failure; the grace lets that error win the race."""
    left = remaining()
    return asyncio.timeout(None if left is None else left + GRACE_SECONDS)


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """`await awaitable` under a stage budget, cancelled (TimeoutError) when it runs out.

    The budget is also visible to the adapters below through `remaining()`, so a well-behaved
    adapter gives up on its own with a `ProviderError` naming the provider before this fires.
    """
    with deadline(seconds):
        async with guard():
            return await awaitable


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a provider call is retried (values come from `tuning.py`)."""

    max_retries: int = 1  # one retry rides out a blip; more would spend the customer's wait
    base_delay: float = 0.5  # exponential backoff without a retry-after: 0.5 s, 1 s, 2 s …
    max_delay: float = 8.0
    min_attempt_seconds: float = 1.0  # less than this left: don't start (another) attempt
    call_timeout_seconds: float = 30.0  # cap on one HTTP attempt even with no deadline set
    circuit_open_seconds: float = 0.0  # fail fast this long after an outage (0 = never)

    @classmethod
    def from_tuning(cls, tuning: Tuning) -> RetryPolicy:
        return cls(
            max_retries=tuning.provider_max_retries,
            base_delay=tuning.provider_retry_base_seconds,
            min_attempt_seconds=tuning.provider_min_attempt_seconds,
            call_timeout_seconds=tuning.provider_call_timeout_seconds,
            circuit_open_seconds=tuning.provider_circuit_open_seconds,
        )


@dataclass(frozen=True, slots=True)
class Retryable:
    """A failure's retry advice: `after` is the server's requested wait (retry-after), if any."""

    error: ProviderError
    retry: bool
    after: float | None = None


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `retry-after` as seconds or as an
    HTTP date (Anthropic and OpenAI send both header forms; proxies may send a date)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
        return max(0.0, seconds)
    return seconds if seconds >= 0 else None


OUTAGE_KINDS = frozenset({"timeout", "connection", "unavailable", "overloaded_error"})


class CircuitBreaker:
    """After an outage-like failure (timeout, connection, 5xx/overloaded), calls fail fast for
    `open_seconds`: one customer pays the stage budget per window, not every call of every turn.
    The first call after the window goes through (a probe); success closes the circuit."""

    def __init__(self, open_seconds: float) -> None:
        self.open_seconds = open_seconds
        self._open_until = 0.0
        self._reason = ""

    def check(self, provider: str) -> None:
        left = self._open_until - time.monotonic()
        if left > 0:
            raise ProviderError(
                f"{provider} skipped for {left:.1f}s more after: {self._reason}", "circuit_open"
            )

    def record(self, error: ProviderError | None) -> None:
        if error is None:
            self._open_until = 0.0
        elif error.kind in OUTAGE_KINDS and self.open_seconds > 0:
            self._open_until = time.monotonic() + self.open_seconds
            self._reason = str(error)[:200]

    @property
    def is_open(self) -> bool:
        return self._open_until > time.monotonic()


Attempt = Callable[[float], Awaitable[T]]
"""One try: receives the timeout (seconds) this attempt may use."""


async def call_with_retries(
    attempt: Attempt[T],
    classify: Callable[[BaseException], Retryable],
    policy: RetryPolicy,
    *,
    provider: str,
) -> T:
    """Run `attempt` with a per-try timeout from the budget; retry only while it fits."""
    tries = 0
    while True:
        left = remaining()
        if left is not None and left < min(policy.min_attempt_seconds, policy.call_timeout_seconds):
            raise ProviderError(
                f"{provider}: no time left in the budget ({left:.2f}s)", "budget_exhausted"
            )
        cap = policy.call_timeout_seconds
        timeout = cap if left is None else min(left, cap)
        try:
            async with asyncio.timeout(timeout):
                return await attempt(timeout)
        except ProviderConfigError:
            raise
        except TimeoutError as exc:
            advice = Retryable(
                ProviderError(f"{provider} timed out after {timeout:.1f}s", "timeout"), True
            )
            cause: BaseException = exc
        except Exception as exc:
            advice = classify(exc)
            cause = exc
        if isinstance(advice.error, ProviderConfigError) or not advice.retry:
            raise advice.error from cause
        if tries >= policy.max_retries:
            raise advice.error from cause
        delay = (
            advice.after
            if advice.after is not None
            else min(policy.base_delay * (2**tries), policy.max_delay)
        )
        left = remaining()
        if delay > policy.call_timeout_seconds or (
            left is not None and delay + policy.min_attempt_seconds > left
        ):
            room = "no deadline" if left is None else f"the {left:.1f}s left"
            raise ProviderError(
                f"{advice.error} (a retry after {delay:.1f}s does not fit {room})",
                advice.error.kind,
            ) from cause
        tries += 1
        await asyncio.sleep(delay)


def note_failure(breaker: CircuitBreaker, health: ProviderHealth, error: ProviderError) -> None:
    """A failed provider call: opens the circuit on an outage (a fail-fast skip is not one) and
    is counted in the provider's health."""
    if error.kind != "circuit_open":
        breaker.record(error)
    health.failed(error)


def note_success(breaker: CircuitBreaker, health: ProviderHealth) -> None:
    breaker.record(None)
    health.succeeded()


async def guarded_call(
    attempt: Attempt[T],
    classify: Callable[[BaseException], Retryable],
    policy: RetryPolicy,
    breaker: CircuitBreaker,
    health: ProviderHealth,
    *,
    provider: str,
) -> T:
    """`call_with_retries` behind the provider's circuit breaker, with the outcome recorded in
    the breaker and the provider's health (what every adapter does around one request)."""
    try:
        breaker.check(provider)
        result = await call_with_retries(attempt, classify, policy, provider=provider)
    except ProviderError as exc:
        note_failure(breaker, health, exc)
        raise
    note_success(breaker, health)
    return result
