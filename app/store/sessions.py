"""Revoked sessions: a signed-out session token stops working before it expires.

One small document per revoked session id, kept until the token would have expired anyway
(TTL index `revoked_sessions_ttl`), so the collection never outgrows the live sessions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


class RevokedSessionRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["revoked_sessions"]

    async def revoke(self, session_id: str, expires_at: datetime) -> None:
        await self._c.update_one(
            {"_id": session_id}, {"$set": {"expiresAt": expires_at}}, upsert=True
        )

    async def is_revoked(self, session_id: str) -> bool:
        return await self._c.find_one({"_id": session_id}, {"_id": 1}) is not None
