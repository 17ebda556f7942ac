"""The examples of issue 40 through the API, in English, German and French: frustration alone is
a signal, never a handoff; a request word typed full-width or spaced out routes as written
plainly. (A German question on German docs answered in German: tests/test_docs_language.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.apihelp import Api, running_app

pytestmark = pytest.mark.integration

ARTICLE = """# Sign in with a PIN

Instead of your password you can sign in with a short PIN code. Open Settings, choose
Security, then Sign-in PIN, and enter a PIN of four to eight digits. The PIN works on the
devices where you set it up.
"""


ARTIKEL = """---
lang: de
---
# Anmelden mit PIN-Code

Statt mit dem Passwort melden Sie sich mit einem kurzen PIN-Code an. Öffnen Sie Einstellungen,
wählen Sie Sicherheit und dann Anmelde-PIN, und geben Sie einen PIN-Code mit vier bis acht
Ziffern ein. Der PIN-Code gilt auf den Geräten, auf denen Sie ihn eingerichtet haben.
"""

ARTICLE_FR = """---
lang: fr
---
# Se connecter avec un code PIN

Au lieu du mot de passe, vous pouvez vous connecter avec un code PIN court. Ouvrez Paramètres,
choisissez Sécurité puis Code PIN de connexion, et saisissez un code PIN de quatre à huit
chiffres. Le code PIN fonctionne sur les appareils où vous l'avez configuré.
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("docs")
    (root / "sign-in-pin.md").write_text(ARTICLE, encoding="utf-8")
    (root / "anmelden-pin.md").write_text(ARTIKEL, encoding="utf-8")
    (root / "connexion-pin.md").write_text(ARTICLE_FR, encoding="utf-8")
    with running_app(articles_dir=root, seed_on_start=True, embedder="local") as running:
        yield running


def test_frustration_with_an_answered_question_is_answered(api: Api) -> None:
    reply = api.ask("Signing in every time is annoying, can I use a short PIN code instead?")
    meta = reply["meta"]
    assert meta["sentiment"] == "frustrated", meta
    assert meta["escalated"] is False, meta.get("escalationReason")
    assert "PIN" in reply["content"]


def test_frustration_on_a_failed_turn_hands_off(api: Api) -> None:
    reply = api.ask("This is so annoying, why does the printer driver crash on my scanner?")
    meta = reply["meta"]
    assert meta["sentiment"] in {"frustrated", "angry"}
    assert meta["confidence"] != "strong"
    assert meta["escalated"] is True and meta["escalationReason"] == "frustration"


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Das Anmelden nervt, kann ich stattdessen einen kurzen PIN-Code verwenden?", "de"),
        ("C'est agaçant de me connecter, puis-je utiliser un code PIN court à la place ?", "fr"),
    ],
)
def test_frustration_with_an_answered_question_is_answered_in_german_and_french(
    api: Api, question: str, language: str
) -> None:
    reply = api.ask(question)
    meta = reply["meta"]
    assert meta["language"] == language and meta["sentiment"] == "frustrated", meta
    assert meta["escalated"] is False, meta.get("escalationReason")
    assert "PIN" in reply["content"] and meta["citations"], meta


@pytest.mark.parametrize(
    "question",
    [
        "Das nervt total, warum stürzt der Druckertreiber auf meinem Scanner ab?",
        "C'est vraiment agaçant, pourquoi le pilote d'imprimante plante sur mon scanner ?",
    ],
)
def test_frustration_on_a_failed_turn_hands_off_in_german_and_french(
    api: Api, question: str
) -> None:
    meta = api.ask(question)["meta"]
    assert meta["sentiment"] in {"frustrated", "angry"}, meta
    assert meta["confidence"] != "strong"
    assert meta["escalated"] is True and meta["escalationReason"] == "frustration"


# a request word typed full-width or letter by letter, and the same message written plainly
DISGUISED = [
    ("Ich möchte meine Bestellung \uff53\uff54\uff4f\uff52\uff4e\uff49\uff45\uff52\uff45\uff4e",
     "Ich möchte meine Bestellung stornieren"),
    ("Je veux un r e m b o u r s e m e n t", "Je veux un remboursement"),
    ("I want to c-a-n-c-e-l my subscription", "I want to cancel my subscription"),
]  # fmt: skip


@pytest.mark.parametrize(("disguised", "plain"), DISGUISED)
def test_a_disguised_request_word_routes_as_its_plain_form(
    api: Api, disguised: str, plain: str
) -> None:
    seen, meant = api.ask(disguised)["meta"], api.ask(plain)["meta"]
    assert seen["intent"] == meant["intent"], (seen, meant)
    assert seen["escalated"] == meant["escalated"], (seen, meant)
