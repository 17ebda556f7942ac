"""What a short support message says about itself (en, de, fr). Pure. Its language:
`app.language.detect`, re-exported here for callers that import it from this module."""

from __future__ import annotations

import re
from typing import Final

from app.language.detect import detect_language as detect_language

# first-person pronouns and possessives: "where is my order" asks about the customer's own data,
# "how long does shipping take" does not
_FIRST_PERSON: Final = re.compile(
    r"(?<!\w)(?:my|our|mine|ours|i|we|mein\w*|unser\w*|ich|wir|ma|mon|mes|notre|nos|je|j|nous)"
    r"(?!\w)",
    re.IGNORECASE,
)


def first_person(text: str) -> bool:
    """Whether the customer speaks of themselves or their organisation (en, de, fr)."""
    return bool(_FIRST_PERSON.search(text.replace("’", "'")))


# interrogatives and the auxiliaries a question starts with (en, de, fr)
_QUESTION_OPENING: Final = re.compile(
    r"^\W*(?:what|how|why|when|where|which|who|whom|whose|is|are|was|were|can|could|do|does|did|"
    r"will|would|should|shall|may|might|has|have|had|wer|wann|wo|warum|wie|welche[rsmn]?|"
    r"kann|gibt|qui|que|quoi|quand|où|pourquoi|comment|quel(?:le)?s?|est-ce)\b",
    re.IGNORECASE,
)


def opens_as_question(text: str) -> bool:
    """Whether the message is worded as a question, with or without a question mark."""
    return bool(_QUESTION_OPENING.match(text))


REPORT_MIN_WORDS: Final = 4  # "Reset password" names a topic; it does not report a problem
_WHY: Final = re.compile(r"^\W*(?:why|warum|wieso|pourquoi)\b", re.IGNORECASE)


def reports_a_problem(text: str) -> bool:
    """A statement of what is going wrong ("the tags show a ghost image", "our stream
    stopped") or a question why it does ("why does my panel keep rebooting?"), rather than a
    question about how something works or what it can do."""
    stripped = text.strip()
    if _WHY.match(stripped):
        return True
    return len(stripped.split()) >= REPORT_MIN_WORDS and not (
        stripped.endswith("?")
        or opens_as_question(stripped)
        or _INFORMATION_IMPERATIVE.match(stripped)
    )


# An instruction to tell, show or explain something ("Summarise the refund policy", "Explain
# how seats are billed", "Erkläre mir…", "Décris…"): a request for information, worded as an
# imperative, optionally after "please" or an adverb.
_INFORMATION_IMPERATIVE: Final = re.compile(
    r"^\W*(?:(?:please|pls|kindly|now|bitte|svp|stp)\s+)*(?:"
    r"tell|explain|describe|summari[sz]e|list|outline|define|compare|clarify|show|"
    r"walk\s+me\s+through|give\s+me|help\s+me\s+(?:understand|with)|"
    r"erkl[äa]re?n?|beschreibe?n?|nenne?n?|zeige?n?|fasse?\s+\w+\s+zusammen|"
    r"explique[rz]?|d[ée]cri[rstv]\w*|r[ée]sume[rz]?|donne[rz]?(?:-moi)?|montre[rz]?(?:-moi)?"
    r")\b",
    re.IGNORECASE,
)


def asks_for_information(text: str) -> bool:
    """Worded as a question, or as an instruction to tell or explain something (en, de, fr):
    either way the message wants an answer, so it is never a bare acknowledgment."""
    return opens_as_question(text) or bool(_INFORMATION_IMPERATIVE.match(text))


# the customer waits for something of theirs: "where is my kiosk?", "when will our tags arrive?",
# "has my panel shipped?", "wo ist mein Raumpanel?", "où est mon kiosque ?" (en, de, fr)
_AWAITED = re.compile(
    r"\bwhere\s+(?:is|are)\s+(?:my|our)\b|\bwhen\s+(?:will|does|do|is|are)\s+(?:my|our)\b"
    r"[^?.!]*\b(?:arriv\w*|ship\w*|deliver\w*|come|coming|get\s+here)\b"
    r"|\b(?:has|have)\s+(?:my|our)\b[^?.!]*\b(?:shipped|arrived|been\s+(?:sent|shipped))\b"
    r"|\btrack\s+(?:my|our)\b"
    r"|\bwo\s+(?:ist|sind|bleibt|bleiben)\s+(?:mein|meine|unser|unsere)\b"
    r"|\bwann\s+(?:kommt|kommen)\s+(?:mein|meine|unser|unsere)\b"
    r"|\bo[uù]\s+(?:est|sont|en\s+est)\s+(?:mon|ma|mes|notre|nos)\b",
    re.IGNORECASE,
)


def awaits_delivery(text: str) -> bool:
    """Whether the customer asks where something of theirs is, or when it comes (en, de, fr)."""
    return bool(_AWAITED.search(text))
