"""Review flags: content that needs a human look before it is trusted. Pure: no I/O.

Help articles are written by many people and sometimes pasted from elsewhere. Text that talks to
an AI assistant instead of to a customer, tells the reader what to say to "the customer", asks
for a secret or hands out codes is the shape of a prompt-injection attempt (`app.safety.screen`
decides, sentence by sentence). A flagged article is stored but quarantined (not searchable, not
on /help) until a person approves it, unless the deployment relaxes that (`QUARANTINE_FLAGGED`).
"""

from __future__ import annotations

from app.safety.screen import ai_phrases, instructing_sentences

PROMPT_INJECTION = "possible-prompt-injection"


def injection_phrases(text: str) -> list[str]:
    """The instruction-like phrases found in `text`, in order: phrases aimed at an AI assistant,
    then whole sentences that instruct the reader or the assistant."""
    seen: set[str] = set()
    phrases: list[str] = []
    found = [p for _, p in sorted(ai_phrases(text))] + instructing_sentences(text)
    for phrase in found:
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            phrases.append(phrase)
    return phrases


def review_flags(title: str, body: str) -> list[str]:
    """Flags to store on an article; currently only `possible-prompt-injection`."""
    return [PROMPT_INJECTION] if injection_phrases(f"{title}\n{body}") else []
