"""Tickets from a help-desk export (CSV / JSONL): rows kept, skipped or rejected with reasons,
PII masked before storage, quality computed, and re-importing changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ingest import ingest_tickets
from app.ingest.tickets import TicketLoad, is_tickets_file, load_ticket_rows, ticket_quality
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "bring" / "tickets"


def _load(name: str) -> TicketLoad:
    path = FIXTURES / name
    return load_ticket_rows(path, path.read_bytes(), shown=name)


@pytest.mark.parametrize(
    ("subject", "description", "resolution", "expected"),
    [
        ("Lamp warm", "Feels warm after an hour.", "Fixed.", 0.1),
        ("Lamp warm", "Feels warm after an hour.", "duplicate", 0.1),
        ("Lamp warm", "Feels warm after an hour.", "", 0.1),
        ("Lamp warm", "Feels warm after an hour.", "Replaced the unit.", 0.3),
        ("Lamp warm", "Feels warm after an hour.", "Normal; the housing dissipates heat.", 0.6),
        (
            "Lamp warm",
            "Feels warm after an hour.",
            "Normal: the aluminium housing dissipates heat from the LEDs and stays below 45 C.",
            1.0,
        ),
        ("", "", "Normal: the aluminium housing dissipates heat from the LEDs, below 45 C.", 0.8),
    ],
)
def test_quality_rates_how_much_a_resolution_answers(
    subject: str, description: str, resolution: str, expected: float
) -> None:
    assert ticket_quality(subject, description, resolution) == expected


def test_csv_rows_are_kept_skipped_or_rejected_with_a_reason() -> None:
    got = _load("tickets.csv")
    assert [t.id for t in got.tickets] == ["HD-5001", "HD-5002", "HD-5003", "HD-5004", "HD-5005"]
    assert [(e.path, e.reason) for e in got.skipped] == [
        ("tickets.csv:7", "no resolution"),
        ("tickets.csv:8", "status 'open': not resolved"),
    ]
    assert [(e.path, e.reason) for e in got.bad] == [
        ("tickets.csv:9", "created 'last tuesday' is not a date (use ISO 8601)"),
        ("tickets.csv:10", "unknown plan 'platinum' (expected one of free, pro, enterprise)"),
    ]
    by_id = {t.id: t for t in got.tickets}
    assert [by_id[i].audience for i in ("HD-5001", "HD-5002", "HD-5004")] == [
        "pro",
        "all",
        "enterprise",
    ]
    assert by_id["HD-5004"].status == "resolved"  # "closed"
    assert by_id["HD-5005"].quality == 0.1  # "Fixed." says nothing
    assert by_id["HD-5001"].resolved_at is not None
    assert by_id["HD-5001"].resolved_at.isoformat() == "2026-04-03T09:10:00+00:00"


def test_pii_is_masked_before_anything_is_stored() -> None:
    got = _load("tickets.csv")
    text = " ".join(f"{t.subject} {t.symptom} {t.resolution}" for t in got.tickets)
    for secret in ("jane.doe@example.com", "7946 0958", "4111 1111 1111 1111"):
        assert secret not in text
    assert "[email]" in text and "[card ending 1111]" in text
    assert got.masked_rows == 2
    jsonl = _load("tickets.jsonl")
    assert "hunter22" not in " ".join(t.symptom for t in jsonl.tickets)


def test_jsonl_rows_and_a_broken_line() -> None:
    got = _load("tickets.jsonl")
    assert [t.id for t in got.tickets] == ["ZD-88101", "ZD-88102", "ZD-88103", "ZD-88106"]
    assert [e.path for e in got.skipped] == ["tickets.jsonl:4"]
    assert [e.path for e in got.bad] == ["tickets.jsonl:5"]
    assert got.bad[0].reason.startswith("invalid JSON")
    assert {t.id: t.quality for t in got.tickets}["ZD-88106"] == 0.9  # the file's own value


def test_files_are_recognised_by_their_columns(tmp_path: Path) -> None:
    assert is_tickets_file(FIXTURES / "tickets.csv")
    assert is_tickets_file(FIXTURES / "tickets.jsonl")
    other = tmp_path / "orders.csv"
    other.write_text("orderRef,total\nORD-1,10\n")
    assert not is_tickets_file(other)


def test_a_row_with_more_cells_than_the_header_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("subject,resolution\nA lamp,Reset it,extra\nOther lamp,Replace the fuse\n")
    got = load_ticket_rows(path, path.read_bytes(), shown="t.csv")
    assert [(e.path, e.reason) for e in got.bad] == [
        ("t.csv:2", "3 cells but the header has 2 columns")
    ]
    assert len(got.tickets) == 1 and got.tickets[0].id.startswith("t-")  # a derived id


async def test_reimporting_the_same_rows_changes_nothing(store: Store) -> None:
    tickets = _load("tickets.csv").tickets
    first = await ingest_tickets(store, FakeEmbedder(), tickets)
    assert (len(first.tickets_added), first.tickets_changed) == (5, [])
    again = await ingest_tickets(store, FakeEmbedder(), tickets)
    assert (again.tickets_added, again.tickets_changed, len(again.tickets_unchanged)) == (
        [],
        [],
        5,
    )
    edited = [tickets[0].model_copy(update={"resolution": "Pin the router to channel 6."})]
    third = await ingest_tickets(store, FakeEmbedder(), edited)
    assert third.tickets_changed == ["HD-5001"]
    stored = await store.tickets.get("HD-5001")
    assert stored is not None and stored.resolution == "Pin the router to channel 6."


def test_a_file_that_is_not_utf8_or_not_csv_is_reported_not_raised(tmp_path: Path) -> None:
    latin = tmp_path / "latin.csv"
    latin.write_bytes("subject,resolution\nCaf\xe9 lamp,Reset it\n".encode("cp1252"))
    got = load_ticket_rows(latin, latin.read_bytes(), shown="latin.csv")
    assert got.tickets == [] and got.bad[0].path == "latin.csv"
    assert "not valid UTF-8" in got.bad[0].reason
    huge = tmp_path / "huge.csv"
    huge.write_text('subject,resolution\nLamp,"' + "x" * 200_000 + '"\n', encoding="utf-8")
    got = load_ticket_rows(huge, huge.read_bytes(), shown="huge.csv")
    assert got.tickets == [] and "unreadable CSV" in got.bad[0].reason
