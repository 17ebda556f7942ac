"""Per-session and per-address rate limits, counted in MongoDB so every worker agrees."""

from __future__ import annotations

from app.errors import RateLimited
from app.store import Store
from tuning import Tuning

WINDOW_S = 60  # fixed one-minute windows: the limits in tuning are per minute


async def check_rate_limits(store: Store, tuning: Tuning, session_id: str, address: str) -> None:
    """Count this request against both limits; `RateLimited` (→ 429) once either is exceeded."""
    limits = (
        ("session", session_id, tuning.rate_limit_session_per_minute),
        ("address", address, tuning.rate_limit_address_per_minute),
    )
    for scope, key, limit in limits:
        count, retry = await store.rate_limits.hit(scope, key, window_s=WINDOW_S)
        if count > limit:
            raise RateLimited(retry, scope)


async def check_write_limit(store: Store, scope: str, address: str, limit: int) -> None:
    """Count one write of kind `scope` from `address`; `RateLimited` once over `limit`/minute."""
    count, retry = await store.rate_limits.hit(scope, address, window_s=WINDOW_S)
    if count > limit:
        raise RateLimited(retry, f"{scope} per address")


async def admin_locked_out(store: Store, address: str, limit: int) -> int:
    """Seconds until `address` may try an admin token again (0: it may now)."""
    count, retry = await store.rate_limits.peek("admin-failure", address, window_s=WINDOW_S)
    return retry if count >= limit else 0


async def note_admin_failure(store: Store, address: str) -> None:
    await store.rate_limits.hit("admin-failure", address, window_s=WINDOW_S)
