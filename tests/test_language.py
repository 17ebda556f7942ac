"""What short support messages say about themselves (app/language/utterance.py); their shapes
are rows the router learns from (tests/language/test_shapes.py)."""

from __future__ import annotations

import pytest

from app.language.utterance import asks_for_information, first_person, reports_a_problem


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("When does my subscription renew?", True),
        ("what plan are we on", True),
        ("Wann verlängert sich unser Abo?", True),
        ("Quand mon abonnement est-il renouvelé ?", True),
        ("J'ai commandé trois panneaux", True),
        ("What is the maximum current of the Lumo XL?", False),
        ("How long does shipping take?", False),
        ("Was kostet der Pro-Tarif?", False),
    ],
)
def test_first_person(text: str, own: bool) -> None:
    assert first_person(text) is own


@pytest.mark.parametrize(
    ("text", "wants_an_answer"),
    [
        ("Summarise how refunds work.", True),
        ("Explain how seats are billed", True),
        ("please tell me the opening hours", True),
        ("walk me through pairing a tag", True),
        ("Erkläre mir die Rechnung", True),
        ("Décris le processus de retour", True),
        ("where is it", True),  # a question without its mark
        ("ok thanks, that worked", False),
        ("great", False),
        ("The list is fine now", False),  # "list" as a noun, not an instruction
    ],
)
def test_asks_for_information(text: str, wants_an_answer: bool) -> None:
    assert asks_for_information(text) is wants_an_answer


@pytest.mark.parametrize(
    ("text", "report"),
    [
        ("our audit log stream to splunk stopped", True),
        ("my desk tags show a ghost image of the old name", True),
        ("why does my panel keep rebooting", True),  # a question why: a problem all the same
        ("can we send them to Splunk?", False),
        ("How do I reset my password", False),  # a question without its mark
        ("explain how seats are billed", False),  # an instruction to explain
        ("Reset password", False),  # a topic named, not a problem reported
    ],
)
def test_reports_a_problem(text: str, report: bool) -> None:
    assert reports_a_problem(text) is report
