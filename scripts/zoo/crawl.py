"""Crawl the served /help pages: leaked template markers and broken internal links."""

from __future__ import annotations

import html
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import httpx

from scripts.zoo.score import markers_in

MAX_PAGES = 2000


class _Page(HTMLParser):
    """Links, anchors and the text outside <pre>/<code> of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.code: list[str] = []
        self._in_code = 0
        self._in_head = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(values[key])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
            self.text.append(values["href"])  # a `%7B%7B` in a URL is a leak too
        if tag in ("pre", "code"):
            self._in_code += 1
        if tag in ("head", "script", "style"):
            self._in_head += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("pre", "code") and self._in_code:
            self._in_code -= 1
        if tag in ("head", "script", "style") and self._in_head:
            self._in_head -= 1

    def handle_data(self, data: str) -> None:
        if self._in_head:
            return
        (self.code if self._in_code else self.text).append(data)


@dataclass
class CrawlResult:
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    broken: list[dict[str, str]] = field(default_factory=list)
    index_status: int = 0

    def summary(self) -> dict[str, Any]:
        """Counts for the report."""
        leaked = {u: p["markers"] for u, p in self.pages.items() if p.get("markers")}
        in_code = sum(sum(p.get("code_markers", {}).values()) for p in self.pages.values())
        return {
            "index_status": self.index_status,
            "pages": len(self.pages),
            "pages_with_markers": len(leaked),
            "markers": sum(sum(m.values()) for m in leaked.values()),
            "markers_in_code": in_code,
            "internal_links": sum(p.get("internal_links", 0) for p in self.pages.values()),
            "broken_links": len(self.broken),
        }


def parse(text: str) -> _Page:
    """One page parsed."""
    page = _Page()
    page.feed(text)
    return page


def _internal(base: str, page_url: str, href: str) -> str | None:
    """The absolute URL of an internal link, or None for external, mail and script links."""
    href = html.unescape(href.strip())
    if not href or href.startswith(("mailto:", "tel:", "javascript:", "data:")):
        return None
    url = urljoin(page_url, href)
    return url if urlsplit(url).netloc == urlsplit(base).netloc else None


class Crawler:
    """Breadth-first over /help pages; every internal link checked for status and anchor."""

    def __init__(self, client: httpx.Client, base: str) -> None:
        self.client, self.base = client, base.rstrip("/")
        self.fetched: dict[str, tuple[int, _Page | None]] = {}

    def get(self, url: str) -> tuple[int, _Page | None]:
        """Status and parsed page (HTML only), fetched once."""
        if url not in self.fetched:
            response = self.client.get(url, follow_redirects=True)
            kind = response.headers.get("content-type", "")
            page = parse(response.text) if "html" in kind and response.status_code == 200 else None
            self.fetched[url] = (response.status_code, page)
        return self.fetched[url]

    def run(self, seeds: list[str]) -> CrawlResult:
        """Crawl from /help (and any seeds) through every reachable /help page."""
        result = CrawlResult()
        index = self.base + "/help"
        result.index_status = self.get(index)[0]
        queue = deque([index, *(self.base + s for s in seeds)])
        seen = set(queue)
        while queue and len(result.pages) < MAX_PAGES:
            url = queue.popleft()
            _status, page = self.get(url)
            if page is None:
                continue
            result.pages[url] = self._inspect(url, page, result)
            for link in page.links:
                target = _internal(self.base, url, link)
                if target is None:
                    continue
                bare = urldefrag(target)[0]
                if urlsplit(bare).path.startswith("/help") and bare not in seen:
                    seen.add(bare)
                    queue.append(bare)
        return result

    def _inspect(self, url: str, page: _Page, result: CrawlResult) -> dict[str, Any]:
        internal = 0
        for link in page.links:
            target = _internal(self.base, url, link)
            if target is None:
                continue
            internal += 1
            problem = self._link_problem(target)
            if problem:
                result.broken.append({"page": url, "href": link, "problem": problem})
        return {
            "markers": markers_in("\n".join(page.text)),
            "code_markers": markers_in("\n".join(page.code)),
            "internal_links": internal,
        }

    def _link_problem(self, target: str) -> str | None:
        bare, fragment = urldefrag(target)
        status, page = self.get(bare)
        if status != 200:
            return f"status {status}"
        if fragment and page is not None and not {fragment, unquote(fragment)} & page.ids:
            return f"no anchor #{fragment}"
        return None
