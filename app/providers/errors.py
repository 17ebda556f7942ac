"""Provider error hierarchy: vendor exceptions are translated into these at the adapter edge."""

from __future__ import annotations


class ProviderError(Exception):
    """A provider failed at run time (timeout, outage, bad response). Callers may fall back.

    `kind` names the failure the way the vendor did (`overloaded_error`, `rate_limit_error`,
    `timeout`, …) so traces and metrics can count failures by type, not by message text.
    """

    def __init__(self, message: str, kind: str = "provider_error") -> None:
        super().__init__(message)
        self.kind = kind


class ProviderConfigError(ProviderError):
    """A provider is misconfigured (missing or revoked key, unknown model). Fix settings; do not
    retry."""

    def __init__(self, message: str, kind: str = "configuration_error") -> None:
        super().__init__(message, kind)
