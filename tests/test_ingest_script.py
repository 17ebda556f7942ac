"""`make ingest SRC=path`: --check works anywhere; each format imports into the durable embedded
store (refused in one line when memory-only or owned by a server) and re-running changes nothing."""

from __future__ import annotations

import io
import os
import re
import shutil
from pathlib import Path

import pytest

from app.store.lock import StoreLock
from scripts import ingest

pytestmark = pytest.mark.skipif(bool(os.environ.get("MONGODB_URI")), reason="embedded only")


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text("# Alpha\n\nFirst.\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.mdx").write_text("---\naudience: pro\n---\nSecond.\n", encoding="utf-8")
    (tmp_path / "bad.md").write_text("---\naudience: partners\n---\nX\n", encoding="utf-8")
    return tmp_path


async def test_check_reports_every_file_in_one_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    code = await ingest.main(["--dir", str(folder), "--check", "--default-audience", "all"])
    out = capsys.readouterr().out
    assert code == 1  # one bad file
    assert "3 articles, 2 ok, 1 bad, 0 warnings" in out
    assert "bad.md: unknown audience 'partners'" in out


async def test_without_a_default_audience_files_that_name_none_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await ingest.main(["--dir", str(_folder(tmp_path)), "--check"])
    out = capsys.readouterr().out
    assert code == 1
    assert "3 articles, 1 ok, 2 bad" in out and "a.md: missing audience" in out


FIXTURES = Path(__file__).parent / "fixtures" / "bring"


@pytest.fixture
def durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The embedded durable store in a temp DATA_DIR, with the fake embedder."""
    data = tmp_path / "data"
    monkeypatch.setenv("DATA_DIR", str(data))
    monkeypatch.setenv("EMBEDDED_STORE", "file")
    monkeypatch.setenv("EMBEDDER", "fake")
    return data


async def test_a_memory_store_is_refused_with_one_line_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBEDDED_STORE", "memory")
    code = await ingest.main(["--dir", str(_folder(tmp_path))])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "keeps nothing" in err and f"make ingest SRC={tmp_path} ARGS=--check" in err


async def test_a_store_the_server_owns_is_refused(
    durable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = StoreLock.acquire(durable)  # as a running server holds it
    try:
        code = await ingest.main(["--dir", str(FIXTURES / "tickets")])
    finally:
        lock.release()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"owns the embedded store in {durable}: stop it" in err


@pytest.mark.parametrize(
    ("fixture", "first", "code"),
    [
        ("manual", "total: 1 added, 0 changed, 0 unchanged, 0 skipped, 0 bad", 0),
        ("zendesk", "total: 4 added, 0 changed, 0 unchanged, 0 skipped, 1 bad", 1),
        ("tickets", "total: 9 added, 0 changed, 0 unchanged, 3 skipped, 3 bad", 1),
    ],
)
async def test_each_format_imports_once_and_a_second_run_changes_nothing(
    durable: Path, capsys: pytest.CaptureFixture[str], fixture: str, first: str, code: int
) -> None:
    assert await ingest.main(["--dir", str(FIXTURES / fixture)]) == code
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == first, out
    assert await ingest.main(["--dir", str(FIXTURES / fixture)]) == code
    again = capsys.readouterr().out.splitlines()[-1]
    added, changed, unchanged = (int(again.split(", ")[i].split()[-2]) for i in range(3))
    assert (added, changed, unchanged) == (0, 0, int(first.split(": ")[1].split()[0]))


async def test_the_report_names_every_skipped_and_bad_row(
    durable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await ingest.main(["--dir", str(FIXTURES / "tickets")])
    out = capsys.readouterr().out
    assert "tickets: 15 rows: 9 added, 0 changed, 0 unchanged, 3 skipped, 3 bad" in out
    assert "PII masked in 3 rows" in out
    assert "low quality (stored, not retrieved under 0.7): HD-5005" in out
    assert "tickets.csv:10: unknown plan 'platinum'" in out
    assert "tickets.jsonl:4: status 'pending': not resolved" in out
    assert "9/9 tickets, done in" in out  # progress


async def test_a_mixed_folder_picks_each_loader_by_content(
    durable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(FIXTURES / "zendesk", mixed / "help-center")
    shutil.copytree(FIXTURES / "manual", mixed / "manuals")
    shutil.copy(FIXTURES / "tickets" / "tickets.jsonl", mixed / "export.jsonl")
    (mixed / "orders.csv").write_text("orderRef,total\nORD-1,10\n", encoding="utf-8")
    assert await ingest.main(["--dir", str(mixed)]) == 1
    out = capsys.readouterr().out
    assert "articles: 6 seen: 5 added" in out
    assert "tickets: 6 rows: 4 added" in out
    assert "orders.csv: not a tickets export" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_redraws_in_place_on_a_terminal_and_prints_tenths_elsewhere() -> None:
    tty = _Terminal()
    bar = ingest.Bar("articles", tty, width=10)
    for done in (0, 5, 10):
        bar(done, 10)
    frames = tty.getvalue().split("\r")[1:]
    assert frames[0].startswith("  [..........] 0/10 articles, estimating the time left")
    assert re.match(r"  \[#####\.\.\.\.\.\] 5/10 articles, about \d+ s left", frames[1])
    assert frames[2].startswith("  [##########] 10/10 articles, done in ")
    assert frames[2].endswith("\n")
    log = io.StringIO()
    bar = ingest.Bar("tickets", log)
    for done in range(0, 101):
        bar(done, 100)
    assert len(log.getvalue().splitlines()) == 11  # 0/100, 10/100, …, 100/100
