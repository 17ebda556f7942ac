"""Pure policy of agent assist: which cases get a policy draft, the quote, the draft's words.

A refund, cancellation, legal or deletion request stays with the person: the suggestion quotes
the policy passage and says what the agent must decide, never promises an outcome. Which intents
those are, and every word of the draft, is tenant data (`assistDecisions`, the `assist_policy_*`
templates), not code.
"""

from __future__ import annotations

import re

from app.tenant import Tenant

_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")  # markdown link → its text
_MARKUP = re.compile(r"(\*\*|__|`|^#+\s*|^\s*[-*]\s+|^\s*\d+\.\s+)", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def is_policy_case(intent: str | None, tenant: Tenant) -> bool:
    """The tenant names what its agents decide for this intent: the draft quotes, never answers."""
    return bool(intent) and intent in tenant.assist_decisions


def plain(text: str) -> str:
    """Markdown reduced to the words a customer reads: link texts, no emphasis or list marks."""
    text = _LINK.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split())


def quote(text: str, max_chars: int) -> str:
    """The passage's leading whole sentences within `max_chars` (the first one, cut on a word
    boundary with an ellipsis, when it alone is longer)."""
    # a chunk starts with its heading line: the heading is the breadcrumb's, not the policy's
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    sentences = [s for s in _SENTENCE_END.split(plain(text)) if s]
    kept: list[str] = []
    for sentence in sentences:
        if len(" ".join([*kept, sentence])) > max_chars:
            break
        kept.append(sentence)
    if kept:
        return " ".join(kept)
    head = plain(text)[:max_chars].rsplit(" ", 1)[0]
    return f"{head} …" if head else ""


def policy_draft(
    tenant: Tenant, intent: str, locale: str, passage_text: str | None, max_chars: int
) -> tuple[str, str, str | None]:
    """(draft reply in the customer's locale, what the agent must decide, the quote or None)."""
    decide = tenant.assist_decisions[intent]
    quoted = quote(passage_text, max_chars) if passage_text else ""
    if not quoted:
        return tenant.text("assist_policy_unquoted", locale), decide, None
    return tenant.text("assist_policy_reply", locale, quote=quoted), decide, quoted


def without_offers(text: str, offers: list[str]) -> str:
    """A draft without the bot's closing offers of a person (the agent *is* the person)."""
    out = text.rstrip()
    changed = True
    while changed:
        changed = False
        for offer in offers:
            if offer and out.endswith(offer):
                out = out[: -len(offer)].rstrip()
                changed = True
    return out
