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

from app.search.filters import DEFAULT_LOCALE, SearchFilter
from tuning import Tuning

FREE_PLAN = "free"


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


def filter_for_customer(plan: str | None, locale: str | None, tuning: Tuning) -> SearchFilter:
    """The filter for a signed-in customer, or for an anonymous visitor (plan and locale None)."""
    return SearchFilter(audiences=audience_ladder(plan, tuning), locale=normalize_locale(locale))
