"""What kind of answer a question asks for, and whether a text holds one (wordings: `asks:`,
`shows:`, `units:` in the lexicons; docs/language.md). Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from app.language.lexicon import alternation, matcher, phrases
from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import TOKEN, content_terms, is_code, term_set

TYPES = ("price", "duration", "quantity", "date", "procedure")
_ASKS = {kind: matcher(f"asks.{kind}") for kind in TYPES}
_DURATION = alternation("units.duration")
_MONTH = rf"(?:{alternation('units.months')})"
_SHOWS = {
    "price": re.compile(
        rf"[$€£¥]\s?\d|\d\s?(?:{alternation('units.currency')})\b"
        rf"|\b(?:{alternation('shows.price')})\b",
        re.I,
    ),
    "duration": re.compile(
        rf"\b\d+(?:[.,]\d+)?\s*(?:[-–]\s*\d+\s*)?(?:{_DURATION})\b"
        rf"|\b(?:{alternation('units.count_words')})\s+(?:{_DURATION})\b",
        re.I,
    ),
    # a digit, or a count written out ("only one per page", "up to three", "unlimited")
    "quantity": re.compile(rf"\d|\b(?:{alternation('shows.quantity')})\b", re.I),
    "date": re.compile(
        rf"\b(?:1[5-9]|20)\d\d\b|\b{_MONTH}[a-z]*\.?\s+\d|\b\d{{1,2}}\s+{_MONTH}"
        rf"|\b(?:{alternation('units.days')})\b|\b\d+\s*(?:am|pm)\b",
        re.I,
    ),
    "procedure": re.compile(
        rf"^\s*(?:\d{{1,2}}[.)]|[-*+•])\s+|\b(?:{alternation('shows.procedure')})\b",
        re.I | re.M,
    ),
}
_STEPS = matcher("asks.steps")
_AMOUNT = matcher("asks.amount")


def asks_an_amount(question: str) -> bool:
    """The question asks how much something costs ("how much is Pro?", "what does the kiosk
    cost?", "was kostet…", "combien coûte…"), not only about pricing in general."""
    return bool(_AMOUNT.search(question))


def asks_for_steps(question: str) -> bool:
    """The question asks how to do something (en/de/fr): it wants the steps."""
    return bool(_STEPS.search(question))


_DURATION_FRAME = frozenset(content_terms(" ".join(phrases("asks.duration_frame"))))


def frame_terms(question: str) -> frozenset[str]:
    """Content terms that only frame the answer type ("long", "take" in "how long does shipping
    take?"), not its subject."""
    return _DURATION_FRAME if _ASKS["duration"].search(question) else frozenset()


# "Do you support Slack?", "Does the kiosk offer badge printing?": the verb after the auxiliary
# asks whether a capability exists; the thing named after it is what the answer must be about.
# Not "work with": the answer usually repeats that verb ("They work on wired Ethernet or Wi-Fi")
_CAPABILITY = re.compile(
    rf"^\W*(?:{alternation('asks.capability_opening')})\b[^?.!]*?"
    rf"\b({alternation('asks.capability')})\b",
    re.IGNORECASE,
)


def capability_terms(question: str) -> frozenset[str]:
    """The content terms of a capability question's verb ("support" in "Do you support Slack?",
    not in "Do you offer phone support?"), else empty."""
    m = _CAPABILITY.search(question)
    return frozenset(content_terms(m.group(1))) if m else frozenset()


def subject_terms(question: str) -> list[str]:
    """The question's content terms without those that only frame the answer type
    (`frame_terms`); all of them when nothing else is left."""
    frame = frame_terms(question)
    terms = content_terms(question)
    return [t for t in terms if t not in frame] or terms


def asked_types(question: str) -> list[str]:
    """The answer types a question asks for (price, duration, quantity, date, procedure)."""
    asked = [name for name, pattern in _ASKS.items() if pattern.search(question)]
    if "duration" in asked and "quantity" in asked:
        asked.remove("quantity")  # "how many days" is a duration
    return asked


@lru_cache(maxsize=16384)
def shows_type(kind: str, text: str) -> bool:
    """The text holds an answer of this kind (memoised: asked of the same passages every turn)."""
    return bool(_SHOWS[kind].search(text))


_DOTTED = re.compile(r"(?<![\d.])\d+(?:\.\d+)+")


def named_terms(question: str) -> list[str]:
    """Names (capitalised words not opening a sentence), numbers and identifiers, as terms."""
    out: list[str] = []
    opening = True  # the first word of a sentence is capitalised whatever it is
    for match in TOKEN.finditer(question):
        word = match.group(0)
        named = word[:1].isupper() and not opening
        if named or any(c.isdigit() for c in word) or is_code(word.lower()):
            out += content_terms(word)
        tail = question[match.end() : match.end() + 2]
        opening = any(c in ".!?" for c in tail)
    return list(dict.fromkeys(out))


def missing_names(
    question: str, texts: Sequence[str], synonyms: SynonymTable = EMPTY, *, language: str = "en"
) -> list[str]:
    """The question's names, numbers and identifiers that no text holds, itself or by a synonym
    (in German, which capitalises every noun, only numbers and identifiers)."""
    present: set[str] = set()
    for text in texts:
        present |= term_set(text) | covered_terms(text, synonyms)
    named = set(named_terms(question))
    if language == "de":
        named = {t for t in named if is_code(t) or any(c.isdigit() for c in t)}
    out: list[str] = []
    for match in TOKEN.finditer(question):
        word = match.group(0)
        found = content_terms(word)
        absent = found and all(t in named for t in found) and not any(t in present for t in found)
        if absent and word not in out:
            out.append(word)
    return out + [n for n in unstated_versions(question, texts) if n not in out]


def unstated_versions(question: str, texts: Sequence[str]) -> list[str]:
    """The dotted versions or figures the question names ("5.0") that no text states: "5 GHz"
    or "15.0" do not state it, "5.0.1" does."""
    named = dict.fromkeys(m.group(0) for m in _DOTTED.finditer(question))
    stated = {m.group(0) for t in texts for m in _DOTTED.finditer(t)} if named else set()
    return [n for n in named if not any(s == n or s.startswith(f"{n}.") for s in stated)]
