"""Plan notices: a question about an article the customer's plan does not include. Pure.

Entitlement is enforced inside the search index (DESIGN 5.2): a Pro customer asking "How long are
audit logs kept?" cannot retrieve the Enterprise-only audit log article, and the passages they
may see are about something else (visitor records are kept 90 days). Answering from those with a
hedge reads as an answer. When the turn found nothing strong and the question names the whole
title of a published article above the customer's rung ("Audit logs"; for a title with names or
acronyms, those: "SCIM user provisioning" → SCIM), the reply says which plan covers it instead.
Only the article's title and audience are read, never its text: what the plan includes is what
a pricing page says anyway, and nothing of the article reaches the customer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from app.language.text import content_terms, term_set

_WORD: Final = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")


def _is_name(word: str) -> bool:
    """An acronym or a code in a title ("SCIM", "AUTH_302", "AB-XY10"), not a capitalised word."""
    return (len(word) > 1 and word.isupper()) or any(c.isdigit() for c in word)


@dataclass(frozen=True, slots=True)
class BeyondPlan:
    """A published article the customer's rung may not see: only what the notice may name."""

    slug: str
    title: str
    audience: str


def names_article(question: str, title: str) -> bool:
    """Whether the question names the article's title: all its names and acronyms
    ("SCIM user provisioning" → SCIM), or all its other content terms ("Audit logs";
    "Setting up SAML single sign-on" → set, single, sign, which "set up SSO" names once the
    tenant's synonyms have added "single sign-on" to the question)."""
    asked = set(content_terms(question)) | term_set(question)
    names = {w.casefold() for w in _WORD.findall(title) if _is_name(w)}
    if names and all(n in asked for n in names):
        return True
    terms = [t for t in content_terms(title) if t not in names]
    return bool(terms) and all(t in asked for t in terms)


def named_article(question: str, articles: Sequence[BeyondPlan]) -> BeyondPlan | None:
    """The article above the customer's plan that the question names (the longest title when
    several do), or None."""
    named = [a for a in articles if names_article(question, a.title)]
    return max(named, key=lambda a: len(content_terms(a.title)), default=None)


def lowest_plan(audience: str, ladder: Mapping[str, Sequence[str]]) -> str | None:
    """The plan with the shortest ladder that includes `audience` ("enterprise" → the
    enterprise plan), or None."""
    plans = [p for p, rungs in ladder.items() if audience in rungs]
    return min(plans, key=lambda p: len(ladder[p]), default=None)
