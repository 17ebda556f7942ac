"""Text helpers shared by the turn stages and the chat providers (neither imports the other).

- `neutralize` / `tool_result_text`: data quoted into a prompt, with our delimiter tags and
  chat-template tokens defused, so retrieved or looked-up text cannot close its own tag.
- `first_name`, `acknowledgment_reply`, `no_answer_reply`: the replies that need no model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.providers.chat.base import ToolOutcome

NOT_ENOUGH_INFORMATION = "I don't have enough information to answer that confidently."
OFFER_PERSON = "Would you like me to connect you with a person from our support team?"
WEAK_HEDGE = "If that doesn't cover your situation, I can connect you with a person."
NO_ANSWER_TOOLS_TAIL = "If that doesn't look right, I can connect you with a person who can check."

Phrases = Mapping[str, str]
"""A localized phrase table (the tenant's `templates[locale]`); missing keys use the English."""


def phrase(phrases: Phrases | None, key: str, default: str, **values: Any) -> str:
    """The localized phrase `key`, filled with `values`; `default` when the table lacks it."""
    template = (phrases or {}).get(key) or default
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return default.format(**values)


_THANKS = re.compile(r"\b(thank|thanks|thx|ty|cheers|appreciate|merci|danke|gracias)", re.I)
_BYE = re.compile(r"\b(bye|goodbye|see you|have a (?:good|nice|great))", re.I)
_GLAD = re.compile(
    r"\b(great|perfect|awesome|excellent|brilliant|works|worked|working now|fixed|solved|sorted)",
    re.I,
)

_RESERVED_TAGS = (
    "conversation_context",
    "summary",
    "previous_summary",
    "facts",
    "recent_turns",
    "passages",
    "passage",
    "tool_results",
    "tool_result",
    "turn_info",
    "question",
    "transcript",
    "system",
    "instructions",
)
_TAG = re.compile(r"<(?=\s*/?\s*(?:" + "|".join(_RESERVED_TAGS) + r")\b)", re.IGNORECASE)
_TEMPLATE_OPEN = re.compile(r"<(?=\|)")  # <|im_start|>, <|system|>, <|endoftext|>
_TEMPLATE_CLOSE = re.compile(r"(?<=\|)>")
_DOUBLE_ANGLE = re.compile(r"<<(?=\s*/?\s*SYS\b)", re.IGNORECASE)  # <<SYS>>


def neutralize(text: str) -> str:
    """Defuse our delimiter tags and chat-template tokens inside data (same length, `<`→`‹`)."""
    text = _TAG.sub("‹", text)
    text = _TEMPLATE_OPEN.sub("‹", text)
    text = _TEMPLATE_CLOSE.sub("›", text)
    return _DOUBLE_ANGLE.sub("‹‹", text)


def tool_result_text(result: ToolOutcome) -> str:
    """A tool result as quoted JSON data (the same text the prompt and the tool loop use)."""
    payload: dict[str, Any] = {"ok": result.ok, "found": result.found}
    if result.data is not None:
        payload["data"] = result.data
    if result.message:
        payload["message"] = result.message
    return neutralize(json.dumps(payload, ensure_ascii=False, default=str, sort_keys=True))


def first_name(customer_name: str | None) -> str | None:
    if not customer_name or not customer_name.strip():
        return None
    return customer_name.strip().split()[0][:40]


def acknowledgment_reply(
    message: str, customer_name: str | None, phrases: Phrases | None = None
) -> str:
    """A short, personal reply to thanks / goodbye / "that worked" (no search, no model)."""
    name = first_name(customer_name)
    to = f", {name}" if name else ""
    if _BYE.search(message):
        return phrase(
            phrases, "ack_bye", "Thanks for getting in touch{to}. Have a great day!", to=to
        )
    if _THANKS.search(message):
        return phrase(
            phrases, "ack_welcome", "You're welcome{to}! Is there anything else I can help with?",
            to=to,
        )  # fmt: skip
    if _GLAD.search(message):
        return phrase(
            phrases, "ack_fixed", "Glad that sorted it{to}! Let me know if anything else comes up.",
            to=to,
        )  # fmt: skip
    return phrase(phrases, "ack_other", "Great{to}. Is there anything else I can help with?", to=to)


def no_answer_reply(
    tool_results: Sequence[ToolOutcome] = (), phrases: Phrases | None = None
) -> str:
    """The honest reply when nothing found answers the question, with the offer of a person."""
    said = [r.message.strip() for r in tool_results if r.message.strip()]
    if said:
        return " ".join([*said, phrase(phrases, "no_answer_tools_tail", NO_ANSWER_TOOLS_TAIL)])
    return (
        f"{phrase(phrases, 'not_enough_information', NOT_ENOUGH_INFORMATION)} "
        f"{phrase(phrases, 'offer_person', OFFER_PERSON)}"
    )
