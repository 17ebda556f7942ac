"""Language identification by py3langid, limited to the tenant's locales, with a fallback."""

from __future__ import annotations

import pytest

from app.language.detect import detect_language, language_shares


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wie setze ich den Drucker zurück?", "de"),
        ("Lieferung verspätet", "de"),
        ("Est-ce que l'imprimante fonctionne sans câble ?", "fr"),
        ("Livraison en retard", "fr"),
        ("How do I reset the printer?", "en"),
        ("delivery late", "en"),
        ("Und wo ist meine Bestellung?", "de"),
        ("Ich möchte mein Abo kündigen", "de"),
        ("Et où en est ma commande ?", "fr"),
        ("Je veux parler à un conseiller", "fr"),
        ("Can I talk to a human?", "en"),
        ("Ihre letzten Bestellungen: ORD-1012: in Bearbeitung, aufgegeben am 2026-11-29", "de"),
    ],
)
def test_short_questions_in_each_language(text: str, expected: str) -> None:
    assert detect_language(text, fallback=None) == expected


@pytest.mark.parametrize(
    "text", ["ok", "backups", "Danke", "ORD-1042 404", "ORD-1042?", "HL-RP10", "?!", ""]
)
def test_too_little_to_go_on_gives_the_fallback(text: str) -> None:
    assert detect_language(text) is None  # no fallback given: None, as the old function said
    assert detect_language(text, ("en", "de"), fallback="de") == "de"


def test_the_answer_is_one_of_the_candidates_as_spelled() -> None:
    text = "Bitte schicken Sie mir die Rechnung für den letzten Monat"
    assert detect_language(text, ("en", "fr"), fallback=None) in ("en", "fr", None)
    assert detect_language(text, ("en", "de-AT"), fallback=None) == "de-AT"
    shares = language_shares(text, ("en", "de", "fr"))
    assert set(shares) == {"en", "de", "fr"}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert max(shares, key=shares.__getitem__) == "de"


def test_identifiers_do_not_vote() -> None:
    # an order reference and an error code carry no language; the words around them do
    assert detect_language("Wo bleibt ORD-7731 mit Fehler E-204?", fallback=None) == "de"


def test_unknown_candidates_give_the_fallback() -> None:
    assert detect_language("Wo ist meine Bestellung?", ("xx",), fallback="en") == "en"
