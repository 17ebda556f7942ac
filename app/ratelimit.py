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
