"""Serve each zoo site as a new user would, ask its questions over HTTP, crawl /help, and score.

    python -m scripts.zoo.run [NAME ...] [--out reports/zoo] [--limit N] [--screens] [--jobs N]
                              [--ready-timeout 1800]

Per site: the docs folder is exported at its pinned commit (scripts.zoo.fetch), a server is
started with `uvicorn app.main:create_app --factory` on a free loopback port with
ARTICLES_DIR=<folder>, a fresh DATA_DIR, the embedded store and the offline providers (what
`ARTICLES_DIR=<folder> make run` does), and each question of questions/<name>.jsonl is asked in
its own anonymous conversation (a follow-up's history turns first, in the same conversation).

Scores (rules in scripts/zoo/score.py): an answerable question is correct when the reply holds
every expected fact (case-insensitive, whitespace, quotes and bold/code marks normalised) and its
confidence is not `none`; an unanswerable one when the reply is `none` or handed to a person.
Also recorded: confidence band, cited pages and whether one is an expected page, raw template
markers in the reply, and a crawl of /help (leaked markers, broken internal links and anchors).
Writes reports/zoo/<name>.json (outside git) and prints one table row per site.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from scripts.zoo.crawl import Crawler
from scripts.zoo.fetch import CACHE, ROOT, Site, export, load_sites
from scripts.zoo.score import cited_pages, load_questions, markers_in, score_reply

QUESTIONS = Path(__file__).resolve().parent / "questions"
REPORTS = ROOT / "reports" / "zoo"
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(folder: Path, data_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The product serving folder, as `ARTICLES_DIR=folder make run` would (fresh DATA_DIR)."""
    env = {
        **os.environ,
        "DEMO": "1",
        "ARTICLES_DIR": str(folder),
        "DATA_DIR": str(data_dir),
        "OPENBLAS_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    for key in ("MONGODB_URI", "LLM", "EMBEDDER", "RERANKER"):
        env.pop(key, None)  # embedded store, offline providers
    cmd = [
        sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory",
        "--no-proxy-headers", "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    out = log.open("wb")
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
    """Poll /readyz until ready, a startup error, the process dying, or the timeout."""
    started = time.monotonic()
    last: dict[str, Any] = {}
    while time.monotonic() - started < timeout:
        if proc.poll() is not None:
            return {"ready": False, "error": f"server exited with {proc.returncode}"}
        try:
            last = httpx.get(base + "/readyz", timeout=10).json()
        except (httpx.HTTPError, ValueError):
            last = {}
        if last.get("ready"):
            break
        if last.get("error"):
            return {**last, "ready": False}
        time.sleep(2)
    last["seconds"] = round(time.monotonic() - started, 1)
    return last


def _post(client: httpx.Client, path: str, body: dict[str, Any], token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    for _ in range(6):
        response = client.post(path, json=body, headers=headers, timeout=600)
        if response.status_code != 429:
            response.raise_for_status()
            return response.json()
        time.sleep(float(response.headers.get("retry-after", "10")))
    response.raise_for_status()
    return response.json()


def ask(client: httpx.Client, case: dict[str, Any]) -> tuple[str, dict[str, Any], float, list]:
    """The reply text, its meta, seconds taken for the scored turn, and the history's replies."""
    token = _post(client, "/v1/sessions", {}, None)["sessionToken"]
    conv = _post(client, "/v1/conversations", {}, token)["id"]
    path = f"/v1/conversations/{conv}/messages"
    earlier = []
    for turn in case.get("history", []):
        if turn.get("role", "user") == "user":
            got = _post(client, path, {"content": turn["content"]}, token).get("reply") or {}
            meta = got.get("meta") or {}
            earlier.append(
                {
                    "confidence": meta.get("confidence"),
                    "escalated": bool(meta.get("escalated")),
                    "reply": str(got.get("content", ""))[:400],
                }
            )
    started = time.monotonic()
    result = _post(client, path, {"content": case["message"]}, token)
    reply = result.get("reply") or {}
    seconds = time.monotonic() - started
    return str(reply.get("content", "")), reply.get("meta") or {}, seconds, earlier


def slug_map(folder: Path) -> dict[str, str]:
    """Source file (relative to folder) -> the slug the product serves it under."""
    try:
        from app.ingest.loaders import load_corpus

        loaded = load_corpus(folder, 5_000_000, default_audience="all")
    except Exception as exc:  # the measurer survives a refactor of the product's loader
        print(f"  (slug map unavailable: {exc})", file=sys.stderr)
        return {}
    out: dict[str, str] = {}
    for article in loaded.articles:
        path = Path(str(article.source_path or ""))
        try:
            rel = path.resolve().relative_to(folder.resolve()).as_posix()
        except ValueError:
            rel = path.as_posix()
        out[rel] = article.slug
    return out


def outcome(case: dict[str, Any], reply: str, meta: dict[str, Any], slugs: dict[str, str]) -> dict:
    """One question's scored record."""
    cited = cited_pages(meta)
    wanted = {slugs.get(p, p) for p in case["expect"].get("page", [])}
    prose = _CODE.sub(" ", reply)
    return {
        "id": case["id"],
        "kind": case.get("kind"),
        "message": case["message"],
        **score_reply(case, reply, meta),
        "confidence": meta.get("confidence"),
        "escalated": bool(meta.get("escalated")),
        "intent": meta.get("intent"),
        # why the band is what it is (DESIGN 9: answerable from the meta alone)
        "answerability": meta.get("answerability"),
        "confidence_reason": meta.get("confidenceReason"),
        "condensed": meta.get("condensedQuestion"),
        "cited": cited,
        "cited_expected": bool(wanted & set(cited)),
        "markers": markers_in(prose),
        "markers_in_code": markers_in(reply) if markers_in(reply) != markers_in(prose) else {},
        "reply": reply,
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over one site's questions."""
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    strong = [r for r in answerable if r["confidence"] == "strong"]
    bands: dict[str, int] = {}
    for r in rows:
        bands[str(r["confidence"])] = bands.get(str(r["confidence"]), 0) + 1
    return {
        "questions": len(rows),
        "correct": sum(r["correct"] for r in rows),
        "answerable_correct": f"{sum(r['correct'] for r in answerable)}/{len(answerable)}",
        "unanswerable_honest": f"{sum(r['correct'] for r in unanswerable)}/{len(unanswerable)}",
        "cited_expected": f"{sum(r['cited_expected'] for r in answerable)}/{len(answerable)}",
        "strong_precision": round(sum(r["correct"] for r in strong) / len(strong), 3)
        if strong
        else None,
        "bands": bands,
        "replies_with_markers": sum(bool(r["markers"]) for r in rows),
        "reply_markers": sum(sum(r["markers"].values()) for r in rows),
    }


def screenshots(base: str, slugs: list[str], out: Path) -> list[str]:
    """PNG screenshots of the given /help pages with the system Chromium (headless)."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    saved = []
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=flags)
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        for slug in slugs:
            page.goto(f"{base}/help/{slug}", wait_until="load")
            path = out / f"{slug.replace('/', '_')}.png"
            page.screenshot(path=str(path), full_page=False)
            saved.append(str(path))
        browser.close()
    return saved


def _screen_slugs(cases: list[dict[str, Any]], slugs: dict[str, str]) -> list[str]:
    """Three distinct expected pages of the question set, in question order."""
    picked: list[str] = []
    for case in cases:
        for page in case["expect"].get("page", []):
            slug = slugs.get(page)
            if slug and slug not in picked:
                picked.append(slug)
    return picked[:3]


def run_site(site: Site, args: argparse.Namespace) -> dict[str, Any]:
    """Serve one site, ask its questions, crawl /help; the site's report."""
    folder = export(site, args.cache)
    cases = load_questions(QUESTIONS / f"{site.name}.jsonl")[: args.limit]
    slugs = slug_map(folder)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"zoo-{site.name}-") as data_dir:
        proc = start_server(folder, Path(data_dir), port, args.out / f"{site.name}.server.log")
        try:
            ready = wait_ready(base, proc, args.ready_timeout)
            report: dict[str, Any] = {"site": site.__dict__, "ready": ready}
            if ready.get("ready"):
                report.update(_measure(site, base, cases, slugs, args))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return report


def _measure(
    site: Site, base: str, cases: list[dict[str, Any]], slugs: dict[str, str], args: Any
) -> dict[str, Any]:
    rows = []
    with httpx.Client(base_url=base) as client:
        for case in cases:
            reply, meta, seconds, earlier = ask(client, case)
            row = outcome(case, reply, meta, slugs)
            row["seconds"] = round(seconds, 2)
            if earlier:
                row["history_replies"] = earlier
            rows.append(row)
            mark = "ok " if row["correct"] else "NO "
            question = case["message"][:56]
            line = f"{site.name}: {mark}{row['id']:4} {row['confidence']!s:6} {question}"
            print(line, flush=True)
        crawl = Crawler(client, base).run([])
        if crawl.index_status != 200:  # no /help index: crawl from every page the product serves
            crawl = Crawler(client, base).run([f"/help/{s}" for s in sorted(set(slugs.values()))])
    out: dict[str, Any] = {
        "summary": summarise(rows),
        "crawl": crawl.summary(),
        "leaks": {u: p["markers"] for u, p in crawl.pages.items() if p["markers"]},
        "broken_links": crawl.broken,
        "outcomes": rows,
    }
    if args.screens:
        try:
            shots = screenshots(base, _screen_slugs(cases, slugs), args.out / "screens" / site.name)
        except Exception as exc:  # no browser here: the scores still count
            shots = [f"screenshots failed: {exc}"]
        out["screens"] = shots
    return out


def _main_commit() -> str:
    """The product's commit: the last commit of main this checkout contains (else HEAD)."""
    for cmd in (["merge-base", "HEAD", "main"], ["rev-parse", "HEAD"]):
        done = subprocess.run(["git", "-C", str(ROOT), *cmd], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()[:12]
    return "unknown"


def table(reports: list[dict[str, Any]]) -> str:
    """One line per site."""
    head = (
        f"{'site':14} {'generator':26} {'ready_s':>7} {'correct':>8} {'answ':>6} {'unans':>5} "
        f"{'cite':>6} {'strongP':>7} {'rMark':>5} {'pages':>5} {'pgMark':>6} {'broken':>6}"
    )
    lines = [head]
    for r in reports:
        s, c, site = r.get("summary", {}), r.get("crawl", {}), r["site"]
        ready = r["ready"].get("seconds", "-") if r["ready"].get("ready") else "FAIL"
        lines.append(
            f"{site['name']:14} {site['generator'][:26]:26} {ready!s:>7} "
            f"{str(s.get('correct', '-')) + '/' + str(s.get('questions', '-')):>8} "
            f"{s.get('answerable_correct', '-'):>6} {s.get('unanswerable_honest', '-'):>5} "
            f"{s.get('cited_expected', '-'):>6} {s.get('strong_precision', '-')!s:>7} "
            f"{s.get('reply_markers', '-')!s:>5} {c.get('pages', '-')!s:>5} "
            f"{c.get('markers', '-')!s:>6} {c.get('broken_links', '-')!s:>6}"
        )
    return "\n".join(lines)


def _one(site: Site, args: argparse.Namespace, commit: str, when: str) -> dict[str, Any]:
    print(f"{site.name}: {site.repo}@{site.commit[:12]} ({site.generator})", flush=True)
    try:
        report = {**run_site(site, args), "commit": commit, "date": when}
    except Exception as exc:  # one broken site does not stop the others
        report = {"site": site.__dict__, "ready": {"ready": False, "error": repr(exc)}}
        report.update(commit=commit, date=when)
    (args.out / f"{site.name}.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.zoo.run", description=__doc__)
    parser.add_argument("names", nargs="*", help="only these sites (default: all)")
    parser.add_argument("--out", type=Path, default=REPORTS)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--limit", type=int, default=None, help="first N questions per site")
    parser.add_argument("--screens", action="store_true", help="3 browser screenshots per site")
    parser.add_argument("--ready-timeout", type=float, default=1800.0)
    parser.add_argument("--jobs", type=int, default=1, help="sites served at once")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sites = [s for s in load_sites() if not args.names or s.name in args.names]
    commit, when = _main_commit(), datetime.now(UTC).isoformat(timespec="seconds")
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        reports = list(pool.map(lambda site: _one(site, args, commit, when), sites))
    print(f"\nproduct commit {commit}, {when}")
    print(table(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
