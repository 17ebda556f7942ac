"""The zoo's fetch: a docs folder exported from a local mirror that lacks some files' content."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scripts.zoo import fetch


def _git(*args: str, cwd: Path) -> str:
    ident = ["-c", "user.name=zoo", "-c", "user.email=zoo@example.org"]
    done = subprocess.run(["git", *ident, *args], cwd=cwd, capture_output=True, check=True)
    return done.stdout.decode().strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str]:
    """A bare mirror of a repository whose `docs/big (1).mp4` blob is absent."""
    work = tmp_path / "work"
    (work / "docs" / "assets").mkdir(parents=True)
    (work / "docs" / "intro.md").write_text("# Intro\n\nHello.\n", encoding="utf-8")
    (work / "docs" / "assets" / "big (1).mp4").write_bytes(b"\x00video" * 50)
    (work / "other.md").write_text("outside the docs folder\n", encoding="utf-8")
    _git("init", "-q", cwd=tmp_path / "work")
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "docs", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    blob = _git("rev-parse", "HEAD:docs/assets/big (1).mp4", cwd=work)
    bare = tmp_path / "mirrors" / "owner+docs" / "repo"
    _git("clone", "-q", "--bare", "--no-local", str(work), str(bare), cwd=tmp_path)
    _git("repack", "-a", "-d", "-q", cwd=bare)
    _drop_blob(bare, blob)
    return tmp_path / "mirrors", commit


def _drop_blob(bare: Path, blob: str) -> None:
    """Rewrite the mirror's objects without one blob, as the fetch tool leaves large files out."""
    keep = [
        line.split()[0]
        for line in _git("cat-file", "--batch-all-objects", "--batch-check", cwd=bare).splitlines()
        if not line.startswith(blob)
    ]
    pack_dir = bare / "objects" / "pack"
    old = list(pack_dir.iterdir())
    subprocess.run(
        ["git", "pack-objects", "-q", str(pack_dir / "pack")],
        cwd=bare,
        input="\n".join(keep).encode() + b"\n",
        check=True,
        capture_output=True,
    )
    for path in old:
        path.unlink()


def test_a_file_the_mirror_lacks_is_skipped_and_the_rest_exported(mirror, tmp_path, monkeypatch):
    mirrors, commit = mirror
    monkeypatch.setattr(fetch, "MIRRORS", mirrors)
    site = fetch.Site("demo", "owner/docs", commit, "docs", "Plain", "en")
    assert fetch._missing_blobs(fetch.mirror_dir(site), commit, "docs") == [
        "docs/assets/big (1).mp4"
    ]
    dest = fetch.export(site, tmp_path / "cache")
    assert (dest / "intro.md").read_text(encoding="utf-8").startswith("# Intro")
    assert not (dest / "assets" / "big (1).mp4").exists()
    assert not (dest / "other.md").exists()
    assert (dest / fetch.STAMP).read_text().strip() == commit


def test_a_complete_mirror_has_no_missing_files(tmp_path):
    work = tmp_path / "w"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "a.md").write_text("a\n", encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "a", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    assert fetch._missing_blobs(work / ".git", commit, "docs") == []


def test_a_root_docs_folder_is_exported_without_its_excluded_folders(tmp_path, monkeypatch):
    work = tmp_path / "w"
    for rel in ("intro.mdx", "guide/setup.mdx", "fr/intro.mdx", "fr/guide/setup.mdx", "frog.mdx"):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(f"# {rel}\n", encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "docs", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "mirrors" / "owner+site" / "repo"
    _git("clone", "-q", "--bare", "--no-local", str(work), str(bare), cwd=tmp_path)
    monkeypatch.setattr(fetch, "MIRRORS", tmp_path / "mirrors")
    site = fetch.Site("root", "owner/site", commit, ".", "Plain", "en", exclude="fr")
    dest = fetch.export(site, tmp_path / "cache")
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.mdx"))
    assert files == ["frog.mdx", "guide/setup.mdx", "intro.mdx"]
