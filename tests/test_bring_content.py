"""Imported content answers turns: a PDF's page and an imported ticket are cited (asked through
the HTTP API with the real MiniLM and the offline answerer, then read back from stored messages).

The app serves a folder (ARTICLES_DIR) holding the test manual and the tickets fixtures, which it
imports at start with the same loaders and pipeline `make ingest` uses.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.apihelp import Api, running_app
from tests.pdfgen import manual_pdf, write

pytestmark = pytest.mark.slow  # the real MiniLM: the fake embedder's vectors answer nothing

TICKETS = Path(__file__).parent / "fixtures" / "bring" / "tickets"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    docs = tmp_path_factory.mktemp("docs")
    write(docs / "lumo-manual.pdf", manual_pdf())
    for name in ("tickets.csv", "tickets.jsonl"):
        shutil.copy(TICKETS / name, docs / name)
    with running_app(
        articles_dir=docs, seed_on_start=True, embedder="local", embedded_store="memory"
    ) as api:

        async def stored_tickets() -> int:
            return await api.services.store.tickets.count({})

        assert api.run(stored_tickets) == 9  # imported from the folder at start
        yield api


def test_a_turn_answered_from_a_pdf_cites_its_page(api: Api) -> None:
    page = api.client.get("/help/lumo-manual")
    assert page.status_code == 200
    assert 'id="page=2"' in page.text and "&lt;!--" not in page.text
    assert "<table>" in page.text  # the power table, rendered

    reply = api.ask("What is the maximum current of the Lumo XL?")
    cited = reply["meta"].get("citations") or []
    assert cited, (reply["content"], reply["meta"].get("confidence"))
    assert cited[0]["url"] == "/help/lumo-manual#page=2"
    assert cited[0]["page"] == 2
    assert "2.5 A" in reply["content"]


def test_a_turn_answered_from_an_imported_ticket_cites_it(api: Api) -> None:
    reply = api.ask("My timers fire an hour late since the clocks changed")
    cited = reply["meta"].get("citations") or []
    assert any(c["kind"] == "ticket" and c["docId"] == "ZD-88106" for c in cited), (
        reply["content"],
        reply["meta"].get("confidence"),
        reply["meta"].get("passages"),
    )
    assert "time zone" in reply["content"]

    async def stored(ticket_id: str) -> dict[str, Any]:
        doc = await api.services.store.db["tickets"].find_one({"_id": ticket_id})
        assert doc is not None
        return dict(doc)

    masked = api.run(stored, "ZD-88102")  # its description named a password
    assert "hunter22" not in masked["symptom"] and "[password]" in masked["symptom"]
