"""Entitlement as pure policy (DESIGN 5.2): which documents a customer may ever be shown.

The filter built here is passed *into* the search indexes (Atlas `$vectorSearch.filter` and the
`$search` compound `filter` clause; `LocalSearch` masks before top-k), never applied afterwards.

Choices where the design is silent:
- Plan names are compared case-insensitively after trimming ("Pro " is pro); anything else,
  including a missing plan, gets the free rung (fail closed).
- Locale: the customer's primary language subtag ("en-GB" → "en"). Anonymous visitors and
  customers without a locale get "en", the language the corpus is written in: showing nothing
  is safer than showing another language's (possibly differently-scoped) document.
"""

from __future__ import annotations

from dataclasses import dataclass

from tuning import Tuning

FREE_PLAN = "free"
DEFAULT_LOCALE = "en"
PUBLISHED = "published"
RESOLVED = "resolved"


def audience_ladder(plan: str | None, tuning: Tuning) -> tuple[str, ...]:
    """Audiences a plan may see; unknown or missing plan → the free rung."""
    key = (plan or "").strip().lower()
    ladder = tuning.audience_ladder.get(key)
    if ladder is None:
        ladder = tuning.audience_ladder.get(FREE_PLAN, ("all",))
    return tuple(ladder)


def normalize_locale(locale: str | None) -> str:
    """Primary language subtag, lower-cased: "en-GB" → "en"; empty or missing → "en"."""
    text = (locale or "").strip().lower().replace("_", "-")
    primary = text.split("-", 1)[0]
    return primary or DEFAULT_LOCALE


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


def filter_for_customer(plan: str | None, locale: str | None, tuning: Tuning) -> SearchFilter:
    """The filter for a signed-in customer, or for an anonymous visitor (plan and locale None)."""
    return SearchFilter(audiences=audience_ladder(plan, tuning), locale=normalize_locale(locale))
