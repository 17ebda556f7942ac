"""The daily language-model spend: what tokens cost, the cap, and the admin's view of both.

Every worker reads and adds to the same counters in MongoDB (`app.store.limits.SpendRepo`).
"""

from __future__ import annotations

from typing import Any

from app.providers import budget
from app.providers.chat.base import ChatMessage, ChatModel, Usage
from app.providers.chat.pricing import prices_for
from app.settings import Settings
from app.store import Store
from tuning import Tuning


def usage_cost_usd(usage: Usage, settings: Settings) -> float:
    prices = prices_for(settings)
    if prices is None:
        return 0.0
    return (
        usage.input * prices.input
        + usage.cache_read * prices.cache_read
        + usage.cache_write * prices.cache_write
        + usage.output * prices.output
    ) / 1_000_000


async def add_usage(store: Store, settings: Settings, usage: Usage) -> None:
    await store.spend.add(
        usage_cost_usd(usage, settings),
        usage.input,
        usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        calls=usage.calls,
        cache_eligible_calls=usage.cache_eligible_calls,
    )


async def record_spend(store: Store, settings: Settings, answer: Any) -> None:
    """Bill a generated answer's tokens when a language model wrote it (the offline provider
    reports none)."""
    usage = getattr(answer, "usage", None)
    if isinstance(usage, Usage) and (
        usage.calls or usage.input or usage.output or usage.cache_read or usage.cache_write
    ):
        await add_usage(store, settings, usage)


async def chat_model_for_turn(
    configured: ChatModel, fallback: ChatModel, store: Store, tuning: Tuning
) -> tuple[ChatModel, bool]:
    """The configured model, or `fallback` once today's spend reached the cap (then True)."""
    if not configured.language_model:  # nothing to pay for
        return configured, False
    if await store.spend.today() >= tuning.daily_spend_cap_usd:
        await store.spend.note_fallback()
        return fallback, True
    return configured, False


async def spend_status(store: Store, tuning: Tuning) -> dict[str, Any]:
    usd = await store.spend.today()
    cap = tuning.daily_spend_cap_usd
    return {
        "usd": round(usd, 4),
        "capUsd": cap,
        "capReached": usd >= cap,
        "fallbackTurnsToday": await store.spend.fallbacks_today(),
        "cache": cache_status(await store.spend.counters_today(), tuning),
    }


def cache_status(counters: dict[str, int], tuning: Tuning) -> dict[str, Any]:
    """Today's prompt-cache counters, and an alert when caching is claimed but never read.

    `eligibleCalls` counts calls whose cached prefix reached the model's minimum (the only ones
    given a breakpoint). Reads staying at 0 after `tuning.cache_read_alert_calls` such calls
    means the prefix changes between calls, or the minimum is higher than the table says."""
    calls = counters.get("calls", 0)
    eligible = counters.get("cacheEligibleCalls", 0)
    read = counters.get("cacheReadTokens", 0)
    alert: str | None = None
    if eligible >= tuning.cache_read_alert_calls and read == 0:
        alert = (
            f"prompt caching is not working: {eligible} cache-eligible calls today, 0 tokens read "
            "from the cache"
        )
    return {
        "calls": calls,
        "eligibleCalls": eligible,
        "creationInputTokens": counters.get("cacheWriteTokens", 0),
        "readInputTokens": read,
        "alert": alert,
    }


class MeteredJsonModel:
    """A chat model as the condenser calls it (`complete_json(system, [dict], schema) -> dict`),
    under the condense stage's budget, and its tokens added to today's spend."""

    def __init__(
        self, model: ChatModel, store: Store, settings: Settings, timeout_seconds: float
    ) -> None:
        self._model = model
        self._store = store
        self._settings = settings
        self._timeout = timeout_seconds
        self.name = model.name

    async def complete_json(
        self, system: str, messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> dict[str, Any]:
        msgs = [ChatMessage(m["role"], m["content"]) for m in messages]  # type: ignore[arg-type]
        reply = await budget.within(self._model.complete_json(system, msgs, schema), self._timeout)
        await add_usage(self._store, self._settings, reply.usage)
        return dict(reply.data)
