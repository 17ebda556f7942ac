"""Counters shared by every worker: rate-limit windows and daily LLM spend, in MongoDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import ReturnDocument


class RateLimitRepo:
    """Fixed-window counters: one document per (scope, key, window), expiring after the window."""

    def __init__(self, db: Any) -> None:
        self._c = db["rate_limits"]

    async def hit(
        self, scope: str, key: str, *, window_s: int, now: datetime | None = None
    ) -> tuple[int, int]:
        """Count one request; returns (count in this window, seconds until the window resets)."""
        now = now or datetime.now(UTC)
        window = int(now.timestamp()) // window_s
        reset_at = datetime.fromtimestamp((window + 1) * window_s, UTC)
        doc = await self._c.find_one_and_update(
            {"_id": f"{scope}:{key}:{window}"},
            {"$inc": {"count": 1}, "$setOnInsert": {"expiresAt": reset_at + timedelta(seconds=5)}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        retry = max(1, int((reset_at - now).total_seconds() + 0.999))
        return int(doc["count"]), retry

    async def peek(
        self, scope: str, key: str, *, window_s: int, now: datetime | None = None
    ) -> tuple[int, int]:
        """(count in this window, seconds until it resets), without counting a request."""
        now = now or datetime.now(UTC)
        window = int(now.timestamp()) // window_s
        reset_at = datetime.fromtimestamp((window + 1) * window_s, UTC)
        doc = await self._c.find_one({"_id": f"{scope}:{key}:{window}"})
        retry = max(1, int((reset_at - now).total_seconds() + 0.999))
        return (int(doc["count"]) if doc else 0), retry


class SpendRepo:
    """LLM spend per UTC day, in USD, incremented atomically after each provider call."""

    def __init__(self, db: Any) -> None:
        self._c = db["spend"]

    @staticmethod
    def _day(now: datetime | None) -> str:
        return (now or datetime.now(UTC)).date().isoformat()

    async def add(
        self,
        usd: float,
        tokens_in: int,
        tokens_out: int,
        now: datetime | None = None,
        *,
        cache_read: int = 0,
        cache_write: int = 0,
        calls: int = 0,
        cache_eligible_calls: int = 0,
    ) -> None:
        inc = {
            "usd": usd,
            "inputTokens": tokens_in,
            "outputTokens": tokens_out,
            "cacheReadTokens": cache_read,
            "cacheWriteTokens": cache_write,
            "calls": calls,
            "cacheEligibleCalls": cache_eligible_calls,
        }
        await self._c.update_one({"_id": self._day(now)}, {"$inc": inc}, upsert=True)

    async def counters_today(self, now: datetime | None = None) -> dict[str, int]:
        """Today's token and call counters (all zero before the first call)."""
        doc = await self._c.find_one({"_id": self._day(now)}) or {}
        names = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "calls")
        return {k: int(doc.get(k, 0)) for k in (*names, "cacheEligibleCalls")}

    async def today(self, now: datetime | None = None) -> float:
        doc = await self._c.find_one({"_id": self._day(now)})
        return float(doc["usd"]) if doc else 0.0

    async def note_fallback(self, now: datetime | None = None) -> None:
        await self._c.update_one(
            {"_id": self._day(now)}, {"$inc": {"capFallbackTurns": 1}}, upsert=True
        )

    async def fallbacks_today(self, now: datetime | None = None) -> int:
        doc = await self._c.find_one({"_id": self._day(now)})
        return int(doc.get("capFallbackTurns", 0)) if doc else 0
