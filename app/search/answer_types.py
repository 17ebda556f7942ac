"""What kind of answer a question asks for, and whether a text holds one. Pure.

Shared by the answerability features (app/turn/confidence.py) and the offline answerer's sentence
choice (app/providers/chat/offline.py). General cues only: a price is a currency amount, a
duration is a number of time units, a procedure is a list of steps or imperative UI verbs; no
product or company words. Prices, durations and quantities are asked and shown in English,
German and French ("wie lange dauert…", "8 Minuten", "combien coûte…"); dates and procedures in
English (the answerer's own how-to cues for German and French are `asks_for_steps`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from app.language.lexicon import alternation
from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import content_terms, is_code, term_set

_ASKS = {
    "price": re.compile(
        r"\bhow\s+much\b|\b(?:price|prices|pricing|cost|costs|fee|fees|charge|charged)\b"
        # German and French: "was kostet…", "wie viel kostet…", "combien coûte…", "quel prix…"
        r"|\b(?:kostet|kosten|preis|preise|geb(?:ü|ue)hr(?:en)?)\b|\bwie\s*viel\b"
        r"|\bcombien\s+co[uû]t|\b(?:prix|tarifs?|co[uû]ts?|frais)\b",
        re.I,
    ),
    "duration": re.compile(
        r"\bhow\s+long\b|\bhow\s+many\s+(?:days|hours|minutes|weeks)\b|\bduration\b"
        r"|\bwie\s+lange\b|\bdauer\b|\bcombien\s+de\s+temps\b|\bdur[ée]e\b",
        re.I,
    ),
    "quantity": re.compile(
        r"\bhow\s+many\b|\bwhat\s+(?:number|percentage|size|limit)\b"
        r"|\bwie\s*viele\b|\bcombien\s+d(?:e\b|')",
        re.I,
    ),
    "date": re.compile(r"\bwhen\b|\bwhat\s+(?:year|date|day|time)\b", re.I),
    "procedure": re.compile(
        r"\bhow\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)\b|\bhow\s+to\b|\bsteps?\b"
        r"|\bset\s*up\b|\bconfigure\b|\binstall\b",
        re.I,
    ),
}
_SHOWS = {
    "price": re.compile(
        rf"[$€£¥]\s?\d|\d\s?(?:{alternation('units.currency')})\b"
        r"|\b(?:free\s+of\s+charge|at\s+no\s+(?:extra\s+)?(?:cost|charge))\b",
        re.I,
    ),
    "duration": re.compile(
        rf"\b\d+(?:[.,]\d+)?\s*(?:[-–]\s*\d+\s*)?(?:{alternation('units.duration')})\b"
        rf"|\b(?:{alternation('units.count_words')})\s+(?:{alternation('units.duration')})\b",
        re.I,
    ),
    "quantity": re.compile(r"\d"),
    "date": re.compile(
        r"\b(?:1[5-9]|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
        r"\s+\d|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
        r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|daily|weekly|monthly)\b"
        r"|\b\d+\s*(?:am|pm)\b",
        re.I,
    ),
    "procedure": re.compile(
        r"^\s*(?:\d{1,2}[.)]|[-*+•])\s+|\b(?:click|select|choose|open|go\s+to|navigate|enter|"
        r"run|type|press|tap|enable|turn\s+on|step\s+\d)\b",
        re.I | re.M,
    ),
}

# How-to wordings that want a procedure, in English, German and French (wider than the
# `procedure` answer type, which the reranker reads and which stays English)
_STEPS = re.compile(
    r"\bhow\s+(?:do|can|should|would)\s+(?:i|we|you)\b|\bhow\s+to\b|\bsteps?\b|\bset\s*up\b"
    # German "wie wechsle ich…", "wie kann man…"; French "comment configurer…", "comment puis-je…"
    r"|\bwie\s+[^\W\d]+\s+(?:ich|wir|man)\b|\bschritte?\b|\banleitung\b"
    r"|\bcomment\s+(?:[^\W\d]+(?:er|ir|re)\b|puis-je|dois-je|peut-on|faire)|\b[ée]tapes?\b",
    re.IGNORECASE,
)


# a question for an amount of money, not one that only names pricing as its topic (en/de/fr)
_AMOUNT = re.compile(
    r"\bhow\s+much\b|\bwhat\s+(?:does|do|will|would)\s+(?:[\w-]+\s+){0,4}?cost\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:[\w-]+\s+){0,2}?(?:price|cost|fee)s?\b"
    r"|\b(?:price|cost|fee)s?\s+(?:of|for|per)\b|\bwie\s*viel\b|\b(?:was|wie\s*viel)\s+kostet\b"
    r"|\bcombien\b|\bquel(?:le)?s?\s+(?:est\s+le\s+)?(?:prix|tarif|co[uû]t)\b",
    re.IGNORECASE,
)


def asks_an_amount(question: str) -> bool:
    """The question asks how much something costs ("how much is Pro?", "what does the kiosk
    cost?", "was kostet…", "combien coûte…"), not only about pricing in general."""
    return bool(_AMOUNT.search(question))


def asks_for_steps(question: str) -> bool:
    """The question asks how to do something (en/de/fr): it wants the steps."""
    return bool(_STEPS.search(question))


_HOW_LONG = re.compile(r"\bhow\s+long\b", re.IGNORECASE)
DURATION_FRAME_WORDS = "long take takes taking took"
_DURATION_FRAME = frozenset(content_terms(DURATION_FRAME_WORDS))


def frame_terms(question: str) -> frozenset[str]:
    """Content terms that only frame the kind of answer asked for, not its subject: "long" and
    "take" in "How long does shipping take?" ask for a duration (the `duration` type says so),
    and a passage that happens to say "can take up to" answers nothing about shipping."""
    return _DURATION_FRAME if _HOW_LONG.search(question) else frozenset()


# "Do you support Slack?", "Does the kiosk offer badge printing?": the verb after the auxiliary
# asks whether a capability exists; the thing named after it is what the answer must be about.
# Not "work with": the answer usually repeats that verb ("They work on wired Ethernet or Wi-Fi")
_CAPABILITY = re.compile(
    r"^\W*(?:do|does|can|will|is|are)\b[^?.!]*?\b(support|supports|offer|offers|integrate|"
    r"integrates)\b",
    re.IGNORECASE,
)


def capability_terms(question: str) -> frozenset[str]:
    """The content terms of a capability question's verb ("support" in "Do you support
    Slack?"), which say only that a yes/no about a feature is asked; empty otherwise. A noun
    use stays ("Do you offer phone support?" frames "offer", not "support")."""
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
    """The text holds an answer of this kind (a price, a duration, a number, a date, a step).

    Memoised (pure): the reranker and the answerer ask it of the same corpus passages every turn.
    """
    return bool(_SHOWS[kind].search(text))


_WORDS = re.compile(r"[^\W_]+(?:[-_][^\W_]+)*")


def named_terms(question: str) -> list[str]:
    """Names (capitalised words not opening a sentence), numbers and identifiers, as terms."""
    out: list[str] = []
    opening = True  # the first word of a sentence is capitalised whatever it is
    for match in _WORDS.finditer(question):
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
    """The question's names, numbers and identifiers (as the customer wrote them) that none of
    `texts` contains, by itself or through a synonym ("UK" is in a passage that writes "United
    Kingdom" when the tenant groups the two). German capitalises every noun, so there only
    numbers and identifiers count ("Batterie" is not a name the articles fail to mention)."""
    present: set[str] = set()
    for text in texts:
        present |= term_set(text) | covered_terms(text, synonyms)
    named = set(named_terms(question))
    if language == "de":
        named = {t for t in named if is_code(t) or any(c.isdigit() for c in t)}
    out: list[str] = []
    for match in _WORDS.finditer(question):
        word = match.group(0)
        found = content_terms(word)
        absent = found and all(t in named for t in found) and not any(t in present for t in found)
        if absent and word not in out:
            out.append(word)
    return out
