"""Read a published docs site by its URL, as hosted support bots do, into a folder of pages.

`crawl_site(url, folder)` fetches the site's pages into `folder` (one `.html` file per page,
laid out by URL path, so links between pages resolve as links between files) and the normal
loader reads them: the HTML loader keeps the main content (nav, headers, footers dropped) and
the dialect pass, link resolution and section tree apply as to any docs folder.

Rules: the sitemap first (from robots.txt, else `/sitemap.xml`), else links of the same host
from the start page on; only pages under the start URL's path; robots.txt honoured for our user
agent; one host only (a redirect to another host is refused, not followed); no private,
loopback, link-local or reserved address unless `allow_private` (a flag for tests that serve a
site on 127.0.0.1); limits on pages, bytes per page and total time. A re-crawl sends each
page's stored ETag / Last-Modified: an unchanged page answers 304 and is not downloaded again,
and pages that are gone are removed from the folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import re
import socket
import time
import xml.etree.ElementTree as ET
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

USER_AGENT = "ConciergeDocsBot/1.0 (+help-center import)"
STATE_FILE = ".crawl-state.json"
_HREF = re.compile(r"<a\b[^>]*?\bhref\s*=\s*[\"']([^\"'#]+)(?:#[^\"']*)?[\"']", re.IGNORECASE)
_SKIP_SUFFIXES = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|ico|css|js|json|xml|pdf|zip|gz|mp4|webm|woff2?|ttf)$", re.I
)
_HTML_TYPES = ("text/html", "application/xhtml+xml")


class CrawlRefused(ValueError):
    """The start URL itself cannot be crawled (scheme, private address, robots.txt)."""


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    """How much one crawl may take."""

    max_pages: int = 2_000
    max_page_bytes: int = 2_000_000
    max_seconds: float = 1_800.0
    max_redirects: int = 5
    timeout_s: float = 20.0
    allow_private: bool = False  # tests only: a site served on 127.0.0.1


@dataclass
class CrawlReport:
    """What a crawl fetched, kept, refused and why it stopped (if it stopped early)."""

    fetched: list[str] = field(default_factory=list)  # downloaded (new or changed)
    unchanged: list[str] = field(default_factory=list)  # answered 304
    removed: list[str] = field(default_factory=list)  # gone since the last crawl
    refused: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    source: str = "links"  # "sitemap" or "links"
    stopped: str | None = None

    def summary(self) -> str:
        """One line of counts, then each refusal."""
        line = (
            f"crawl ({self.source}): {len(self.fetched)} fetched, {len(self.unchanged)} "
            f"unchanged, {len(self.removed)} removed, {len(self.refused)} refused"
        )
        if self.stopped:
            line += f"; stopped early: {self.stopped}"
        return "\n".join([line, *(f"  refused: {u}: {r}" for u, r in self.refused)])


def address_refusal(host: str, allow_private: bool) -> str | None:
    """Why `host` may not be crawled (it resolves to a private or local address), or None."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError as exc:
        return f"cannot resolve {host}: {exc}"
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        private = (
            addr.is_private
            or addr.is_loopback
            or addr.is_link_local
            or addr.is_reserved
            or addr.is_multicast
            or addr.is_unspecified
        )
        if private and not allow_private:
            return f"{host} resolves to a private or local address ({addr})"
    return None


def page_file(url: str) -> PurePosixPath:
    """Where a page's HTML is kept: `/docs/setup/` → `docs/setup/index.html`."""
    path = urlsplit(url).path or "/"
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    if not parts or path.endswith("/"):
        return PurePosixPath(*parts, "index.html")
    name = parts[-1]
    if not name.lower().endswith((".html", ".htm")):
        parts[-1] = f"{name}.html"
    return PurePosixPath(*parts)


@dataclass
class _Crawl:
    start: str
    folder: Path
    limits: CrawlLimits
    client: httpx.AsyncClient
    report: CrawlReport
    state: dict[str, dict[str, str]]
    robots: RobotFileParser | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def host(self) -> str:
        return urlsplit(self.start).netloc

    @property
    def prefix(self) -> str:
        path = urlsplit(self.start).path or "/"
        return path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        return (
            parts.scheme in ("http", "https")
            and parts.netloc == self.host
            and (parts.path or "/").startswith(self.prefix)
            and not _SKIP_SUFFIXES.search(parts.path)
        )

    def allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(USER_AGENT, url)


async def crawl_site(
    start_url: str,
    folder: Path,
    limits: CrawlLimits | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> CrawlReport:
    """Fetch the site at `start_url` into `folder` (see the module docstring)."""
    limits = limits or CrawlLimits()
    parts = urlsplit(start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CrawlRefused(f"not an http(s) URL: {start_url!r}")
    refusal = await asyncio.to_thread(address_refusal, parts.hostname, limits.allow_private)
    if refusal:
        raise CrawlRefused(refusal)
    state = await asyncio.to_thread(_open_folder, folder)
    async with httpx.AsyncClient(
        transport=transport,
        timeout=limits.timeout_s,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
    ) as client:
        run = _Crawl(start_url, folder, limits, client, CrawlReport(), state.get("pages", {}))
        run.robots = await _robots(run)
        if not run.allowed(start_url):
            raise CrawlRefused(f"robots.txt disallows {start_url}")
        seen = await _walk(run, await _sitemap_urls(run))
    await asyncio.to_thread(_finish, run, seen)
    return run.report


def _open_folder(folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    return state_of(folder)


def _finish(run: _Crawl, seen: set[str]) -> None:
    _prune(run, seen)
    state = {"start": run.start, "pages": run.state}
    (run.folder / STATE_FILE).write_text(json.dumps(state, indent=1), "utf-8")


async def _robots(run: _Crawl) -> RobotFileParser | None:
    parsed = RobotFileParser()
    response = await _get(run, urljoin(run.start, "/robots.txt"), {})
    if response is None or response.status_code != 200:
        return None
    parsed.parse(response.text.splitlines())
    return parsed


async def _sitemap_urls(run: _Crawl) -> list[str]:
    """Page URLs from the sitemaps robots.txt names, else `/sitemap.xml` (nested indexes too)."""
    queue = deque((run.robots.site_maps() if run.robots else None) or ["/sitemap.xml"])
    pages: list[str] = []
    visited: set[str] = set()
    while queue and len(visited) < 50:
        url = urljoin(run.start, queue.popleft())
        if url in visited or urlsplit(url).netloc != run.host:
            continue
        visited.add(url)
        response = await _get(run, url, {})
        if response is None or response.status_code != 200:
            continue
        try:
            root = ET.fromstring(response.content)
        except ET.ParseError:
            continue
        for loc in root.iter():
            if not loc.tag.endswith("loc") or not loc.text:
                continue
            target = loc.text.strip()
            (queue.append(target) if root.tag.endswith("sitemapindex") else pages.append(target))
    if pages:
        run.report.source = "sitemap"
    return [p for p in pages if run.in_scope(p)]


async def _walk(run: _Crawl, sitemap: list[str]) -> set[str]:
    """Fetch pages breadth-first; without a sitemap, follow the links of each page."""
    follow_links = not sitemap
    queue = deque([run.start, *sitemap])
    seen: set[str] = set()
    while queue:
        url = urldefrag(queue.popleft())[0]
        if url in seen or not run.in_scope(url):
            continue
        if len(seen) >= run.limits.max_pages:
            run.report.stopped = f"page limit ({run.limits.max_pages}) reached"
            break
        if time.monotonic() - run.started > run.limits.max_seconds:
            run.report.stopped = f"time limit ({run.limits.max_seconds:.0f} s) reached"
            break
        seen.add(url)
        if not run.allowed(url):
            run.report.refused.append((url, "disallowed by robots.txt"))
            continue
        html = await _fetch_page(run, url)
        if html is not None and follow_links:
            queue.extend(urljoin(url, href) for href in _HREF.findall(html))
    return seen


async def _fetch_page(run: _Crawl, url: str) -> str | None:
    """Download one page (conditionally); its HTML, or None when refused or not HTML."""
    known = run.state.get(url, {})
    conditional = {}
    if known.get("etag"):
        conditional["If-None-Match"] = known["etag"]
    if known.get("lastModified"):
        conditional["If-Modified-Since"] = known["lastModified"]
    target = run.folder / page_file(url)
    have = await asyncio.to_thread(target.is_file)
    response = await _get(run, url, conditional if have else {})
    if response is None:
        return None
    if response.status_code == 304:
        run.report.unchanged.append(url)
        return await asyncio.to_thread(target.read_text, "utf-8")
    if response.status_code in (404, 410) and url in run.state:
        await asyncio.to_thread(target.unlink, True)
        del run.state[url]
        run.report.removed.append(url)
        return None
    if response.status_code != 200:
        run.report.refused.append((url, f"HTTP {response.status_code}"))
        return None
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in _HTML_TYPES:
        return None
    html = _site_relative(response.text, url)
    await asyncio.to_thread(_write, target, html)
    run.state[url] = {
        "etag": response.headers.get("etag", ""),
        "lastModified": response.headers.get("last-modified", ""),
        "file": page_file(url).as_posix(),
        "sha256": hashlib.sha256(response.content).hexdigest(),
    }
    run.report.fetched.append(url)
    return html


async def _get(run: _Crawl, url: str, headers: dict[str, str]) -> httpx.Response | None:
    """GET with redirects followed by hand (same host only) and the size limit; None when
    refused (the reason is in the report)."""
    for _ in range(run.limits.max_redirects + 1):
        try:
            async with run.client.stream("GET", url, headers=headers) as response:
                if response.status_code in (301, 302, 303, 307, 308):
                    nxt = urljoin(url, response.headers.get("location", ""))
                    if urlsplit(nxt).netloc != run.host:
                        run.report.refused.append((url, f"redirects off-host to {nxt}"))
                        return None
                    url = nxt
                    continue
                body = bytearray()
                async for piece in response.aiter_bytes():
                    body.extend(piece)
                    if len(body) > run.limits.max_page_bytes:
                        run.report.refused.append(
                            (url, f"over the {run.limits.max_page_bytes:,}-byte page limit")
                        )
                        return None
                return _with_body(response, bytes(body))
        except httpx.HTTPError as exc:
            run.report.refused.append((url, f"fetch failed: {exc}"))
            return None
    run.report.refused.append((url, "too many redirects"))
    return None


def _write(target: Path, html: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, "utf-8")


def _site_relative(html: str, url: str) -> str:
    """Links to this host written as full URLs become paths, so they resolve between pages."""
    host = re.escape(urlsplit(url).netloc)
    return re.sub(rf"""(href\s*=\s*["'])https?://{host}(?=/)""", r"\1", html, flags=re.I)


def _with_body(response: httpx.Response, body: bytes) -> httpx.Response:
    return httpx.Response(
        response.status_code, headers=response.headers, content=body, request=response.request
    )


def _prune(run: _Crawl, seen: set[str]) -> None:
    """Pages of an earlier crawl that this full crawl no longer found are removed."""
    if run.report.stopped:
        return  # a partial crawl says nothing about what is gone
    kept = {u for u in seen}
    for url in [u for u in run.state if u not in kept]:
        file = run.folder / run.state[url].get("file", page_file(url).as_posix())
        file.unlink(missing_ok=True)
        run.report.removed.append(url)
        del run.state[url]


def crawl_folder(data_dir: Path, url: str) -> Path:
    """Where a site's pages are kept between crawls: `DATA_DIR/crawl/<host>-<hash>`."""
    parts = urlsplit(url)
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    host = re.sub(r"[^a-z0-9.-]+", "-", (parts.hostname or "site").lower())
    return data_dir / "crawl" / f"{host}-{digest}"


def state_of(folder: Path) -> dict[str, Any]:
    """The stored crawl state of a folder (empty when never crawled)."""
    path = folder / STATE_FILE
    return json.loads(path.read_text("utf-8")) if path.is_file() else {}
