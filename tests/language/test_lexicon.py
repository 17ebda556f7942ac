"""The phrase syntax of the lexicons: what one data row matches."""

from __future__ import annotations

import re

import pytest

from app.language.lexicon import phrase_pattern
from app.search.answer_types import shows_type


def _matches(phrase: str, text: str) -> bool:
    return bool(re.fullmatch(phrase_pattern(phrase), text, re.IGNORECASE))


@pytest.mark.parametrize(
    ("phrase", "text", "matches"),
    [
        ("frustrat*", "frustrating", True),
        ("#th time", "4th time", True),
        ("#th time", "fourth time", False),
        ("schon _ versucht", "schon versucht", False),
        ("schon _ versucht", "schon mal versucht", True),
        ("what does _ cost", "what does the add-on cost", False),
        ("what does _ cost", "what does add-on cost", True),
        ("that's all", "thats all", True),
        ("that's all", "that’s all", True),
        ("real/actual/live human/person", "live person", True),
        ("real/actual/live human/person", "actual human", True),
        ("real/actual/live human/person", "real agent", False),
        ("mettez-moi/nous en relation", "mettez-moi en relation", True),
        ("mettez-moi/nous en relation", "mettez nous   en relation", True),
        ("rip-off", "rip off", True),
        ("rip-off", "ripoff", False),
    ],
)
def test_a_phrase_row_matches_its_forms(phrase: str, text: str, matches: bool) -> None:
    assert _matches(phrase, text) is matches


@pytest.mark.parametrize(
    "text",
    [
        "A refund reaches your card within 5 business days.",
        "Allow 3 working days for the transfer.",
        "Die Erstattung dauert 5 Werktage.",
        "Le remboursement prend 5 jours ouvrés.",
    ],
)
def test_a_duration_counted_in_working_days_is_a_duration(text: str) -> None:
    assert shows_type("duration", text)
    assert not shows_type("duration", "Our business hours are listed on the contact page.")
