"""Deadlines and the bounded retry loop (app/providers/budget.py), without any network."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from app.providers import budget
from app.providers.budget import Retryable, RetryPolicy, call_with_retries
from app.providers.errors import ProviderConfigError, ProviderError

FAST = RetryPolicy(max_retries=1, base_delay=0.01, min_attempt_seconds=0.05)


def test_deadlines_nest_and_only_shrink() -> None:
    assert budget.remaining() is None
    with budget.deadline(10):
        outer = budget.remaining()
        assert outer is not None and 9 < outer <= 10
        with budget.deadline(60):  # cannot extend the enclosing deadline
            inner = budget.remaining()
            assert inner is not None and inner <= outer
        with budget.deadline(1):
            short = budget.remaining()
            assert short is not None and short <= 1
        with budget.detached():
            assert budget.remaining() is None
    assert budget.remaining() is None


async def test_within_stops_an_awaitable_that_ignores_the_deadline() -> None:
    with pytest.raises(TimeoutError):
        await budget.within(asyncio.sleep(3600), 0.05)


class Script:
    """Attempts that fail with the scripted errors, then succeed."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.timeouts: list[float] = []

    async def __call__(self, seconds: float) -> str:
        self.timeouts.append(seconds)
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def advice(after: float | None = None, retry: bool = True) -> Callable[[BaseException], Retryable]:
    def classify(exc: BaseException) -> Retryable:
        if isinstance(exc, ProviderError):
            return Retryable(exc, retry, after)
        return Retryable(ProviderError(str(exc), "boom"), retry, after)

    return classify


async def test_a_retryable_failure_is_retried_once_within_the_budget() -> None:
    attempts = Script(RuntimeError("blip"))
    with budget.deadline(5):
        assert await call_with_retries(attempts, advice(), FAST, provider="p") == "ok"
    assert len(attempts.timeouts) == 2
    assert all(t <= 5 for t in attempts.timeouts)  # each attempt sized from the budget


async def test_retries_are_bounded() -> None:
    attempts = Script(RuntimeError("1"), RuntimeError("2"), RuntimeError("3"))
    with pytest.raises(ProviderError, match="2"):
        await call_with_retries(attempts, advice(), FAST, provider="p")
    assert len(attempts.timeouts) == 2


async def test_a_retry_after_that_does_not_fit_is_not_waited_for() -> None:
    attempts = Script(RuntimeError("busy"))
    with budget.deadline(2), pytest.raises(ProviderError, match="does not fit"):
        await call_with_retries(attempts, advice(after=45), FAST, provider="p")
    assert len(attempts.timeouts) == 1


async def test_configuration_errors_and_non_retryable_failures_are_raised_at_once() -> None:
    for error in (ProviderConfigError("bad key"), RuntimeError("400")):
        attempts = Script(error)
        with pytest.raises(ProviderError):
            await call_with_retries(attempts, advice(retry=False), FAST, provider="p")
        assert len(attempts.timeouts) == 1


async def test_no_attempt_starts_without_time_left() -> None:
    attempts = Script()
    with budget.deadline(0.01):
        await asyncio.sleep(0.02)
        with pytest.raises(ProviderError, match="no time left") as caught:
            await call_with_retries(attempts, advice(), FAST, provider="p")
    assert caught.value.kind == "budget_exhausted" and attempts.timeouts == []


def test_a_circuit_opens_after_an_outage_and_closes_after_a_success() -> None:
    breaker = budget.CircuitBreaker(open_seconds=60)
    breaker.check("p")  # closed: nothing raised
    breaker.record(ProviderError("bad request", "invalid_request_error"))
    assert not breaker.is_open  # not an outage
    breaker.record(ProviderError("p timed out", "timeout"))
    with pytest.raises(ProviderError, match="timed out") as caught:
        breaker.check("p")
    assert caught.value.kind == "circuit_open"
    breaker.record(None)
    assert not breaker.is_open
