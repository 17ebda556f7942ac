"""Domain errors. HTTP status codes are assigned only in app/api/."""


class ConciergeError(Exception):
    """Base for errors a caller can act on."""


class Misconfigured(ConciergeError):
    """The deployment's settings are unsafe or inconsistent; the server refuses to start."""


class Unauthenticated(ConciergeError):
    """Missing, forged or expired credentials."""


class InvalidInput(ConciergeError):
    """The request is well-formed but unacceptable (empty message, bad reference, ...)."""


class MessageTooLong(InvalidInput):
    """A message over the length limit (413 rather than 422)."""


class RateLimited(ConciergeError):
    def __init__(self, retry_after_s: int, scope: str) -> None:
        super().__init__(f"rate limit exceeded ({scope}); retry in {retry_after_s}s")
        self.retry_after_s = retry_after_s
        self.scope = scope


class StoreUnavailable(ConciergeError):
    """The database cannot be reached (raised by `app.store` in place of driver errors)."""
