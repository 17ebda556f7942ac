"""What a provider adapter knows about its own state, for /readyz and the admin metrics.

Process-local on purpose: a revoked key or a wrong model name is a property of this worker's
configuration, and each worker reports what it saw. (Spend and cache-token totals, which must add
up across workers, are counted in MongoDB by `Services`.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.providers.errors import ProviderConfigError, ProviderError


@dataclass
class ProviderHealth:
    provider: str
    config_error: str | None = None  # set by a configuration failure, cleared by a success
    calls: int = 0
    failures: Counter[str] = field(default_factory=Counter)  # by error kind
    last_error: str | None = None
    last_error_at: datetime | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # e.g. measured prefix tokens

    def succeeded(self) -> None:
        self.calls += 1
        self.config_error = None

    def failed(self, error: ProviderError) -> None:
        self.calls += 1
        self.failures[error.kind] += 1
        self.last_error = str(error)[:300]
        self.last_error_at = datetime.now(UTC)
        if isinstance(error, ProviderConfigError):
            self.config_error = self.last_error

    def view(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "ok": self.config_error is None,
            "configError": self.config_error,
            "calls": self.calls,
            "failures": dict(self.failures),
            "lastError": self.last_error,
            "lastErrorAt": self.last_error_at.isoformat() if self.last_error_at else None,
            **self.facts,
        }
