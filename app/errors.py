"""Domain errors. HTTP status codes are assigned only in app/api/."""


class ConciergeError(Exception):
    """Base for errors a caller can act on."""


class NotFound(ConciergeError):
    """The thing does not exist for this caller (someone else's looks the same as none)."""


class Unauthenticated(ConciergeError):
    """Missing, forged or expired credentials."""


class InvalidInput(ConciergeError):
    """The request is well-formed but unacceptable (empty message, bad reference, ...)."""


class Conflict(ConciergeError):
    """The operation does not apply in the current state (e.g. case already claimed)."""


class RateLimited(ConciergeError):
    def __init__(self, retry_after_s: int, scope: str) -> None:
        super().__init__(f"rate limit exceeded ({scope}); retry in {retry_after_s}s")
        self.retry_after_s = retry_after_s
        self.scope = scope


class StoreUnavailable(ConciergeError):
    """The database could not be reached; nothing was half-written."""
