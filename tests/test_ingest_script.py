"""`make ingest SRC=path`: --check works anywhere; the embedded store is refused in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
    assert "3 files, 2 ok, 1 bad, 0 warnings" in out
    assert "bad.md: unknown audience 'partners'" in out


async def test_without_a_default_audience_files_that_name_none_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await ingest.main(["--dir", str(_folder(tmp_path)), "--check"])
    out = capsys.readouterr().out
    assert code == 1
    assert "3 files, 1 ok, 2 bad" in out and "a.md: missing audience" in out


async def test_the_embedded_store_is_refused_with_one_line_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await ingest.main(["--dir", str(_folder(tmp_path))])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert f"ARTICLES_DIR={tmp_path} make run" in err
