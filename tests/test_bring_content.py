"""Imported content answers turns: a PDF's page and an imported ticket are cited (asked through
the HTTP API with the real MiniLM and the offline answerer, then read back from stored messages)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.apihelp import running_app
from tests.pdfgen import manual_pdf, write

pytestmark = pytest.mark.slow  # the real MiniLM: the fake embedder's vectors answer nothing


def _citations(message: dict[str, Any]) -> list[dict[str, Any]]:
    return list(message["meta"].get("citations") or [])


def test_a_turn_answered_from_a_pdf_cites_its_page(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "lumo-manual.pdf", manual_pdf())
    with running_app(articles_dir=tmp_path / "docs", seed_on_start=True, embedder="local") as api:
        page = api.client.get("/help/lumo-manual")
        assert page.status_code == 200
        assert 'id="page=2"' in page.text and "&lt;!--" not in page.text
        assert "<table>" in page.text  # the power table, rendered

        headers = api.session()
        conv = api.conversation(headers)
        api.send(headers, conv, "What is the maximum current of the Lumo XL?")
        reply = api.messages(conv)[-1]
        assert reply["role"] == "assistant"
        cited = _citations(reply)
        assert cited, (reply["content"], {k: reply["meta"].get(k) for k in ("confidence", "passages", "escalated")})
        assert cited[0]["url"] == "/help/lumo-manual#page=2"
        assert cited[0]["page"] == 2
        assert "2.5 A" in reply["content"]
