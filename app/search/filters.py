"""The entitlement filter every ranker applies inside its index, before top-k (DESIGN 5.2).

Built by `app.turn.entitlement.filter_for_customer`; defined here because both search backends
take it, and a type two layers share lives in the lower one.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_LOCALE = "en"
PUBLISHED = "published"
RESOLVED = "resolved"


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """What every ranker must restrict itself to, applied inside the index before top-k.

    `locale=None` disables the locale condition (only for tools such as the eval harness that
    search a mixed-language corpus on purpose); `filter_for_customer` always sets it.
    """

    audiences: tuple[str, ...]
    locale: str | None = DEFAULT_LOCALE
    status: str = PUBLISHED  # articles and chunks
    ticket_status: str = RESOLVED  # the resolved-ticket corpus

    def allows_doc(self, audience: str, locale: str, status: str) -> bool:
        """The same predicate the indexes apply, for articles and chunks."""
        return (
            audience in self.audiences
            and status == self.status
            and (self.locale is None or locale == self.locale)
        )

    def allows_ticket(
        self, audience: str, locale: str, status: str, quality: float, min_quality: float
    ) -> bool:
        """The same predicate the ticket index applies."""
        return (
            audience in self.audiences
            and status == self.ticket_status
            and quality >= min_quality
            and (self.locale is None or locale == self.locale)
        )
