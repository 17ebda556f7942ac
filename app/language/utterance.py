"""What a short support message says about itself (en, de, fr; its words: `utterance:` in the
lexicons). Pure; re-exports `app.language.detect.detect_language` for callers importing it here."""

from __future__ import annotations

import re
from typing import Final

from app.language.detect import detect_language as detect_language
from app.language.lexicon import alternation, matcher
from tuning import TUNING


def _words(name: str) -> str:
    return alternation(f"utterance.{name}")


_FIRST_PERSON: Final = matcher("utterance.first_person")
_QUESTION_OPENING: Final = re.compile(rf"^\W*(?:{_words('question_opening')})\b", re.IGNORECASE)
_WHY: Final = re.compile(rf"^\W*(?:{_words('why')})\b", re.IGNORECASE)
# an instruction to tell or explain something ("Summarise the refund policy", "Erkläre mir…")
_INFORMATION_IMPERATIVE: Final = re.compile(
    rf"^\W*(?:(?:{_words('politeness')})\s+)*(?:{_words('information_imperative')})\b",
    re.IGNORECASE,
)
_AWAITED: Final = re.compile(
    rf"\b(?:{_words('awaited')})\b|\b(?:{_words('awaited_when')})\b[^?.!]*"
    rf"\b(?:{_words('awaited_arrival')})\b",
    re.IGNORECASE,
)


def first_person(text: str) -> bool:
    """Whether the customer speaks of themselves or their organisation: "where is my order" asks
    about the customer's own data, "how long does shipping take" does not."""
    return bool(_FIRST_PERSON.search(text.replace("’", "'")))


def opens_as_question(text: str) -> bool:
    """Whether the message is worded as a question, with or without a question mark."""
    return bool(_QUESTION_OPENING.match(text))


def reports_a_problem(text: str) -> bool:
    """A statement of what is going wrong ("the tags show a ghost image", "our stream
    stopped") or a question why it does ("why does my panel keep rebooting?"), rather than a
    question about how something works or what it can do."""
    stripped = text.strip()
    if _WHY.match(stripped):
        return True
    return len(stripped.split()) >= TUNING.report_min_words and not (
        stripped.endswith("?")
        or opens_as_question(stripped)
        or _INFORMATION_IMPERATIVE.match(stripped)
    )


def asks_for_information(text: str) -> bool:
    """Worded as a question, or as an instruction to tell or explain something: either way the
    message wants an answer, so it is never a bare acknowledgment."""
    return opens_as_question(text) or bool(_INFORMATION_IMPERATIVE.match(text))


def awaits_delivery(text: str) -> bool:
    """Whether the customer asks where something of theirs is, or when it comes."""
    return bool(_AWAITED.search(text))
