"""The examples of issue 40 through the API: frustration alone is a signal, never a handoff."""

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


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("docs")
    (root / "sign-in-pin.md").write_text(ARTICLE, encoding="utf-8")
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
