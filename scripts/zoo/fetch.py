"""Export each zoo site's docs folder at its pinned commit into a cache outside git.

    python -m scripts.zoo.fetch [--sites scripts/zoo/sites.yaml] [--cache .cache/zoo] [NAME ...]

A site comes from the local bare mirror (/work/.mirror/<owner>+<name>/repo, or ZOO_MIRRORS) when
it holds the pinned commit (files whose content the mirror lacks, such as the large media the
fetch tool leaves out, are skipped), else from GitHub's archive of that commit when the network
allows.
The exported folder is .cache/zoo/<name>/ with a `.zoo-commit` stamp; a folder already stamped
with the pinned commit is left alone. The docs themselves are never committed.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SITES = Path(__file__).resolve().parent / "sites.yaml"
CACHE = ROOT / ".cache" / "zoo"
MIRRORS = Path(os.environ.get("ZOO_MIRRORS", "/work/.mirror"))
STAMP = ".zoo-commit"


class FetchError(RuntimeError):
    """A site could be had neither from a local mirror nor from GitHub."""


@dataclass(frozen=True)
class Site:
    name: str
    repo: str
    commit: str
    docs: str
    generator: str
    language: str
    conf: str = ""  # one more file exported into the docs root (a Sphinx project's conf.py)
    exclude: str = ""  # folders under docs left out, space-separated (a root's translations)


def _prefix(site: Site) -> str:
    """The docs folder as a path prefix; "" when the docs are the repository's root."""
    docs = site.docs.strip("/")
    return "" if docs in ("", ".") else docs + "/"


def _excluded(site: Site, rel: str) -> bool:
    """Whether a path relative to the docs folder lies in one of the site's excluded folders."""
    return any(rel == x or rel.startswith(x.strip("/") + "/") for x in site.exclude.split())


def load_sites(path: Path = SITES) -> list[Site]:
    """The sites listed in sites.yaml."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [Site(**{k: str(v) for k, v in row.items()}) for row in data["sites"]]


def mirror_dir(site: Site) -> Path:
    """Where the fetch tool puts a bare copy of the site's repository."""
    return MIRRORS / site.repo.replace("/", "+") / "repo"


def _has_commit(git_dir: Path, commit: str) -> bool:
    probe = ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"]
    return git_dir.is_dir() and subprocess.run(probe, capture_output=True).returncode == 0


def _extract(archive: tarfile.TarFile, prefix: str, dest: Path, site: Site) -> int:
    """Write the members under `prefix` into dest (paths relative to prefix); count files."""
    count = 0
    for member in archive.getmembers():
        if not member.isfile() or not member.name.startswith(prefix):
            continue
        rel = Path(member.name[len(prefix) :])
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            continue
        if _excluded(site, rel.as_posix()):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        source = archive.extractfile(member)
        if source is not None:
            target.write_bytes(source.read())
            count += 1
    return count


def _missing_blobs(git_dir: Path, commit: str, docs: str) -> list[str]:
    """Files under docs whose content the mirror lacks (the fetch tool leaves out its largest)."""
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", commit, "--", docs], capture_output=True, check=True
    ).stdout.decode("utf-8", errors="surrogateescape")
    blobs = []
    for row in filter(None, listing.split("\0")):
        meta, path = row.split("\t", 1)
        if meta.split()[1] == "blob":
            blobs.append((meta.split()[2], path))
    query = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    check = [*git, "cat-file", "--batch-check"]
    answers = subprocess.run(check, input=query, capture_output=True, check=True).stdout
    lines = answers.decode().splitlines()
    return [path for (_, path), line in zip(blobs, lines, strict=True) if line.endswith(" missing")]


def _from_mirror(site: Site, git_dir: Path, dest: Path) -> int:
    skip = [f":(exclude,literal){p}" for p in _missing_blobs(git_dir, site.commit, site.docs)]
    cmd = ["git", "--git-dir", str(git_dir), "archive", "--format=tar", site.commit, site.docs]
    cmd += skip
    tar = subprocess.run(cmd, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        count = _extract(archive, _prefix(site), dest, site)
    if site.conf:
        cmd = ["git", "--git-dir", str(git_dir), "show", f"{site.commit}:{site.conf}"]
        data = subprocess.run(cmd, capture_output=True, check=True).stdout
        (dest / Path(site.conf).name).write_bytes(data)
    return count


def _from_github(site: Site, dest: Path) -> int:
    url = f"https://codeload.github.com/{site.repo}/tar.gz/{site.commit}"
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            data = response.read()
    except OSError as exc:
        raise FetchError(
            f"{site.name}: no local mirror at {mirror_dir(site)} with {site.commit[:12]}, and "
            f"{url} could not be downloaded ({exc}); fetch the repository first"
        ) from exc
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        top = archive.getmembers()[0].name.split("/", 1)[0]
        count = _extract(archive, f"{top}/{_prefix(site)}", dest, site)
        conf = archive.extractfile(f"{top}/{site.conf}") if site.conf else None
        if conf is not None:
            (dest / Path(site.conf).name).write_bytes(conf.read())
        return count


def export(site: Site, cache: Path = CACHE) -> Path:
    """The site's docs folder at its pinned commit, exported into cache/<name>/."""
    dest = cache / site.name
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().strip() == site.commit:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    git_dir = mirror_dir(site)
    if _has_commit(git_dir, site.commit):
        count = _from_mirror(site, git_dir, dest)
    else:
        count = _from_github(site, dest)
    if count == 0:
        raise FetchError(f"{site.name}: {site.docs!r} holds no files at {site.commit[:12]}")
    stamp.write_text(site.commit + "\n")
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.zoo.fetch", description=__doc__)
    parser.add_argument("names", nargs="*", help="only these sites (default: all)")
    parser.add_argument("--sites", type=Path, default=SITES)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    sites = [s for s in load_sites(args.sites) if not args.names or s.name in args.names]
    failed = 0
    for site in sites:
        try:
            dest = export(site, args.cache)
        except (FetchError, subprocess.CalledProcessError) as exc:
            print(f"FAIL {site.name}: {exc}", file=sys.stderr)
            failed += 1
            continue
        files = sum(1 for p in dest.rglob("*") if p.is_file()) - 1
        print(f"ok   {site.name:14} {site.repo}@{site.commit[:12]} -> {dest} ({files} files)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
