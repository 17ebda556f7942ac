"""A German-only docs folder: German questions answered in German from it, an English question
gets the German passage framed in English (the bot's own words in the customer's language)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.language.detect import detect_language
from tests.apihelp import Api, running_app

pytestmark = pytest.mark.integration

ARTICLES = {
    "Konto/Passwort zurücksetzen.md": (
        "# Passwort zurücksetzen\n\nHaben Sie Ihr Passwort vergessen, setzen Sie es selbst "
        "zurück.\n\n## So setzen Sie das Passwort zurück\n\n"
        "1. Öffnen Sie die Anmeldeseite und klicken Sie auf „Passwort vergessen“.\n"
        "2. Geben Sie die E-Mail-Adresse Ihres Kontos ein.\n"
        "3. Öffnen Sie den Link aus der E-Mail und wählen Sie ein neues Passwort.\n\n"
        "Der Link ist 24 Stunden gültig.\n"
    ),
    "Konto/PIN-Code.md": (
        "# PIN-Code statt Passwort\n\nIn der App melden Sie sich mit einem PIN-Code an, statt "
        "jedes Mal das Passwort einzugeben.\n\n## PIN-Code einrichten\n\nÖffnen Sie in der App "
        "Einstellungen › Sicherheit und tippen Sie auf „PIN-Code festlegen“. Der PIN-Code hat "
        "sechs Ziffern.\n"
    ),
    "Bestellung/Versand.md": (
        "# Versand und Lieferzeiten\n\nWir liefern nach Deutschland, Österreich und in die "
        "Schweiz.\n\n## Lieferzeiten\n\nBestellungen werden innerhalb von drei Werktagen "
        "verschickt.\n"
    ),
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Api:
    root: Path = tmp_path_factory.mktemp("handbuch")
    for rel, body in ARTICLES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nlang: de\n---\n" + body, encoding="utf-8")
    # the real MiniLM: the test is about languages, and hashed words share none across them
    with running_app(articles_dir=root, seed_on_start=True, embedder="local") as running:
        yield running


def _ask(api: Api, text: str) -> tuple[str, dict]:
    headers = api.session()
    conv = api.conversation(headers)
    reply = api.send(headers, conv, text)["reply"]["content"]
    return reply, api.messages(conv)[-1]["meta"]


def _outside_quotes(reply: str, quoted: list[str]) -> str:
    for text in filter(None, quoted):
        reply = reply.replace(text, " ")
    return reply


@pytest.mark.parametrize(
    ("question", "slug", "quoted"),
    [
        ("Wie setze ich mein Passwort zurück?", "passwort-zurucksetzen", "Passwort vergessen"),
        ("Kann ich einen PIN-Code statt Passwort nutzen?", "pin-code", "PIN-Code festlegen"),
    ],
)
def test_german_questions_are_answered_in_german(
    api: Api, question: str, slug: str, quoted: str
) -> None:
    reply, meta = _ask(api, question)
    assert meta["language"] == "de" and meta["retrievalLocale"] == "de", meta
    assert meta["confidence"] in ("strong", "weak") and meta["escalated"] is False
    assert slug in {c["docId"] for c in meta["citations"]}, meta["citations"]
    assert quoted in reply, reply
    assert detect_language(reply, fallback=None) == "de", reply


def test_an_english_question_gets_the_german_passage_framed_in_english(api: Api) -> None:
    reply, meta = _ask(api, "Can I log in to the app with a PIN code?")
    assert meta["language"] == "en" and meta["retrievalLocale"] == "de", meta
    assert "pin-code" in {c["docId"] for c in meta["citations"]}, meta["citations"]
    assert "PIN-Code festlegen" in reply, reply  # the document's words, as written
    sentences = re.split(r"\n+|(?<=\.) ", ARTICLES["Konto/PIN-Code.md"])
    framing = _outside_quotes(
        reply, [s.strip(" .#") for s in sentences] + ["PIN-Code statt Passwort"]
    )
    assert detect_language(framing, fallback=None) == "en", framing


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Gibt es einen Rabatt für Studenten?", "de"),
        ("Is there a discount for students?", "en"),
    ],
)
def test_not_covered_is_said_in_the_customers_language(
    api: Api, question: str, language: str
) -> None:
    reply, meta = _ask(api, question)
    assert meta["language"] == language
    if meta["confidence"] == "none":
        assert detect_language(reply, fallback=None) == language, reply
