"""The Voyage AI connection the embedder and the reranker share (one per key and endpoint).

voyageai 0.5.0 out of the box: `AsyncClient(max_retries=0, timeout=None)` waits up to its
`TIMEOUT_SECS` (600 s) for an answer, and opens a new aiohttp session for every call unless one is
supplied through the `voyageai.aiosession` context variable. So here:

- one `aiohttp.ClientSession` per process (per event loop), handed to the SDK for each call
  through `voyageai.aiosession`, so connections are pooled; closed by `aclose()` on shutdown;
- the SDK's retries stay off; `app.providers.budget.call_with_retries` retries 429/5xx/timeouts
  once when the wait fits the stage's remaining budget (a `retry-after` is honoured only then),
  and each attempt's timeout is that remaining budget (capped by `call_timeout_seconds`);
- after a timeout, connection failure or 5xx the connection fails fast for
  `tuning.provider_circuit_open_seconds` (`budget.CircuitBreaker`): in an outage the router,
  retrieval and reranker do not each wait out their budget in every turn;
- failures become `ProviderError` with a kind; a rejected key (401) or a request our fixed
  parameters made invalid (400/422: unknown model, unsupported dimension) is a
  `ProviderConfigError`, recorded in `health` for /readyz.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from app.providers.budget import CircuitBreaker, Retryable, RetryPolicy, guarded_call
from app.providers.errors import ProviderConfigError, ProviderError
from app.providers.health import ProviderHealth

T = TypeVar("T")


def _retry_after(headers: Any) -> float | None:
    if not isinstance(headers, Mapping):
        return None
    for name in ("retry-after", "Retry-After"):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw))
        except (TypeError, ValueError):
            return None
    return None


def classify(exc: BaseException) -> Retryable:
    """Our error for a voyageai failure, and whether it may be retried."""
    from voyageai import error as verr

    if isinstance(exc, ProviderError):
        return Retryable(exc, False)
    status = getattr(exc, "http_status", None)
    headers = getattr(exc, "headers", None)
    text = str(exc)[:300]
    if isinstance(exc, verr.AuthenticationError):
        return Retryable(ProviderConfigError(f"voyage rejected the key: {text}"), False)
    if isinstance(exc, verr.InvalidRequestError | verr.MalformedRequestError):
        return Retryable(
            ProviderConfigError(
                f"voyage rejected the request ({status}): {text}", "invalid_request"
            ),
            False,
        )
    if isinstance(exc, verr.RateLimitError):
        return Retryable(
            ProviderError(f"voyage rate limit: {text}", "rate_limit"), True, _retry_after(headers)
        )
    if isinstance(exc, verr.ServiceUnavailableError | verr.ServerError):
        return Retryable(
            ProviderError(f"voyage unavailable ({status}): {text}", "unavailable"),
            True,
            _retry_after(headers),
        )
    if isinstance(exc, verr.Timeout):
        return Retryable(ProviderError("voyage timed out", "timeout"), True)
    if isinstance(exc, verr.APIConnectionError):
        return Retryable(ProviderError(f"could not reach voyage: {text}", "connection"), True)
    return Retryable(
        ProviderError(f"voyage call failed: {type(exc).__name__}: {text}", "bad_response"), False
    )


class VoyageConnection:
    """A voyageai `AsyncClient` plus the pooled session, retry policy and health it runs with."""

    def __init__(self, api_key: str, *, base_url: str | None, retry: RetryPolicy) -> None:
        from voyageai.client_async import AsyncClient

        self.retry = retry
        self.health = ProviderHealth("voyage")
        self.breaker = CircuitBreaker(retry.circuit_open_seconds)
        self.client = AsyncClient(
            api_key=api_key,
            max_retries=0,
            timeout=retry.call_timeout_seconds,
            base_url=base_url,
        )
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _pooled(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            self._session = aiohttp.ClientSession()
            self._loop = loop
        return self._session

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """`fn()` (one SDK call) with the pooled session, the budget's timeout and bounded retry."""
        import voyageai

        async def attempt(seconds: float) -> T:
            token = voyageai.aiosession.set(self._pooled())
            try:
                return await fn()
            finally:
                voyageai.aiosession.reset(token)

        return await guarded_call(
            attempt, classify, self.retry, self.breaker, self.health, provider="voyage"
        )

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


_SHARED: dict[tuple[str, str | None], VoyageConnection] = {}


def shared_connection(
    api_key: str | None, *, base_url: str | None, retry: RetryPolicy, what: str
) -> VoyageConnection:
    """The process's connection for this key and endpoint (embedder and reranker share it)."""
    if not api_key:
        raise ProviderConfigError(f"{what}=voyage needs VOYAGE_API_KEY")
    key = (api_key, base_url)
    if key not in _SHARED:
        _SHARED[key] = VoyageConnection(api_key, base_url=base_url, retry=retry)
    return _SHARED[key]
