"""Provider error hierarchy: vendor exceptions are translated into these at the adapter edge."""


class ProviderError(Exception):
    """A provider failed at run time (timeout, outage, bad response). Callers may fall back."""


class ProviderConfigError(ProviderError):
    """A provider is misconfigured (missing key, unknown model). Fix settings; do not retry."""
