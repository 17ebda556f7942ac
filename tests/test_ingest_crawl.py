"""The crawler against a static site the test serves on 127.0.0.1 (no other network)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.ingest.crawl import CrawlLimits, CrawlRefused, crawl_site, page_file
from app.ingest.loaders import load_corpus
from app.ingest.sections import build_sections
from scripts import ingest

LIMITS = CrawlLimits(allow_private=True, max_page_bytes=20_000, timeout_s=5)


def _page(title: str, main: str) -> bytes:
    return (
        f"<!doctype html><html lang='en'><head><title>{title} | Docs</title></head><body>"
        "<nav><a href='/docs/'>Home</a> <a href='/blog/'>Blog</a> Site menu</nav>"
        f"<main><h1>{title}</h1>{main}</main><footer>Footer text</footer></body></html>"
    ).encode()


@dataclass
class Site:
    """Pages by path; every request is logged as (path, status)."""

    pages: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    log: list[tuple[str, int]] = field(default_factory=list)
    base: str = ""

    def html(self, path: str, body: bytes) -> None:
        self.pages[path] = (200, {"Content-Type": "text/html; charset=utf-8"}, body)


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = site.pages.get(self.path, (404, {}, b"not found"))
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if status == 200 and self.headers.get("If-None-Match") == etag:
                status, body = 304, b""
            site.log.append((self.path, status))
            self.send_response(status)
            for key, value in {**headers, "ETag": etag}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    base = served.base
    served.pages["/robots.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        f"User-agent: *\nDisallow: /docs/private/\nSitemap: {base}/sitemap.xml\n".encode(),
    )
    urls = ["/docs/", "/docs/setup/", "/docs/billing", "/docs/private/secret", "/docs/big"]
    urls += ["/docs/moved", "/blog/post"]
    sitemap = "".join(f"<url><loc>{base}{u}</loc></url>" for u in urls)
    served.pages["/sitemap.xml"] = (
        200,
        {"Content-Type": "application/xml"},
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{sitemap}</urlset>".encode(),
    )
    served.html("/docs/", _page("Docs", "<p>Start with <a href='setup/'>setup</a>.</p>"))
    served.html(
        "/docs/setup/",
        _page(
            "Setup",
            "<h2>Install</h2><p>Run the installer.</p><h2>Pay</h2>"
            f"<p>See <a href='{base}/docs/billing#refunds'>refunds</a>.</p>",
        ),
    )
    served.html("/docs/billing", _page("Billing", "<h2>Refunds</h2><p>Within 30 days.</p>"))
    served.html("/docs/private/secret", _page("Secret", "<p>Hidden.</p>"))
    served.html("/docs/big", _page("Big", "<p>" + "x" * 30_000 + "</p>"))
    served.pages["/docs/moved"] = (302, {"Location": "http://example.com/away"}, b"")
    served.html("/blog/post", _page("Blog", "<p>Not docs.</p>"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served
    server.shutdown()
    server.server_close()


def _paths(urls: list[str], site: Site) -> set[str]:
    return {u.removeprefix(site.base) for u in urls}


async def test_crawl_reads_the_sitemap_honours_robots_and_refuses_what_it_must(
    site: Site, tmp_path: Path
) -> None:
    report = await crawl_site(f"{site.base}/docs/", tmp_path, LIMITS)
    assert report.source == "sitemap"
    assert _paths(report.fetched, site) == {"/docs/", "/docs/setup/", "/docs/billing"}
    refused = {u.removeprefix(site.base): why for u, why in report.refused}
    assert refused["/docs/private/secret"] == "disallowed by robots.txt"
    assert "byte page limit" in refused["/docs/big"]
    assert refused["/docs/moved"] == "redirects off-host to http://example.com/away"
    requested = {path for path, _ in site.log}
    assert "/docs/private/secret" not in requested  # robots.txt: never even asked
    assert "/blog/post" not in requested  # outside the start path
    assert (tmp_path / "docs" / "setup" / "index.html").is_file()

    corpus = load_corpus(tmp_path, 1_000_000, default_audience="all")
    by_slug = {a.slug: a for a in corpus.articles}
    assert set(by_slug) == {"docs", "docs-setup", "billing"}
    setup = by_slug["docs-setup"]
    assert setup.title == "Setup"
    assert "## Install" in setup.body and "## Pay" in setup.body  # sections kept
    assert "Site menu" not in setup.body and "Footer text" not in setup.body  # chrome dropped
    assert "[refunds](/help/billing#refunds)" in setup.body  # a full same-host URL resolves
    sections = build_sections(setup.title, setup.body)
    assert [s.path for s in sections if s.path] == [["Install"], ["Pay"]]


async def test_a_second_crawl_downloads_only_what_changed(site: Site, tmp_path: Path) -> None:
    start = f"{site.base}/docs/"
    await crawl_site(start, tmp_path, LIMITS)
    site.html("/docs/billing", _page("Billing", "<h2>Refunds</h2><p>Within 60 days.</p>"))
    site.log.clear()
    again = await crawl_site(start, tmp_path, LIMITS)
    assert _paths(again.fetched, site) == {"/docs/billing"}
    assert _paths(again.unchanged, site) == {"/docs/", "/docs/setup/"}
    bodies = [path for path, status in site.log if status == 200 and path.startswith("/docs")]
    assert bodies == ["/docs/billing", "/docs/big"]  # the oversized page is refused again
    assert "60 days" in (tmp_path / "docs" / "billing.html").read_text("utf-8")

    del site.pages["/docs/setup/"]
    third = await crawl_site(start, tmp_path, LIMITS)
    assert _paths(third.removed, site) == {"/docs/setup/"}
    assert not (tmp_path / "docs" / "setup" / "index.html").exists()


async def test_without_a_sitemap_links_of_the_same_host_are_followed(
    site: Site, tmp_path: Path
) -> None:
    del site.pages["/sitemap.xml"]
    site.pages["/robots.txt"] = (200, {"Content-Type": "text/plain"}, b"User-agent: *\n")
    report = await crawl_site(f"{site.base}/docs/", tmp_path, LIMITS)
    assert report.source == "links"
    assert _paths(report.fetched, site) == {"/docs/", "/docs/setup/", "/docs/billing"}
    assert "/blog/" not in {path for path, _ in site.log}  # a nav link off the start path


async def test_limits_stop_the_crawl_and_say_why(site: Site, tmp_path: Path) -> None:
    few = CrawlLimits(allow_private=True, max_pages=2)
    report = await crawl_site(f"{site.base}/docs/", tmp_path, few)
    assert len(report.fetched) == 2
    assert report.stopped == "page limit (2) reached"
    quick = CrawlLimits(allow_private=True, max_seconds=0.0)
    stopped = await crawl_site(f"{site.base}/docs/", tmp_path / "t", quick)
    assert stopped.stopped is not None and "time limit" in stopped.stopped


async def test_private_and_loopback_addresses_are_refused_without_the_test_flag(
    site: Site, tmp_path: Path
) -> None:
    for url in (f"{site.base}/docs/", "http://localhost/docs/", "http://10.0.0.8/"):
        with pytest.raises(CrawlRefused, match="private or local address"):
            await crawl_site(url, tmp_path, CrawlLimits())
    with pytest.raises(CrawlRefused, match="not an http"):
        await crawl_site("file:///etc/passwd", tmp_path, LIMITS)
    assert site.log == []  # nothing was fetched


def test_page_files_follow_the_url_path() -> None:
    assert page_file("https://d.example/docs/").as_posix() == "docs/index.html"
    assert page_file("https://d.example/docs/a").as_posix() == "docs/a.html"
    assert page_file("https://d.example/").as_posix() == "index.html"
    assert page_file("https://d.example/x/../y/p.htm").as_posix() == "x/y/p.htm"


async def test_make_ingest_takes_a_url(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    code = await ingest.main(
        ["--dir", f"{site.base}/docs/", "--allow-private-addresses", "--check"]
    )
    out = capsys.readouterr().out
    assert "crawl (sitemap): 4 fetched" in out  # the default page-size limit admits /docs/big
    assert "disallowed by robots.txt" in out
    assert ": 4 articles, 4 ok, 0 bad" in out
    assert code == 0
    refused = await ingest.main(["--dir", f"{site.base}/docs/", "--check"])
    assert refused == 2


@pytest.mark.integration
def test_articles_url_serves_the_crawled_site(site: Site, tmp_path: Path) -> None:
    from tests.apihelp import running_app

    with running_app(
        articles_url=f"{site.base}/docs/",
        crawl_allow_private=True,
        data_dir=tmp_path,
        seed_on_start=True,
    ) as api:
        page = api.client.get("/help/billing")
        assert page.status_code == 200
        assert 'id="refunds"' in page.text and "Within 30 days." in page.text
        setup = api.client.get("/help/docs-setup").text
        assert 'href="/help/billing#refunds"' in setup
        assert "Site menu" not in setup
    assert any(path == "/docs/billing" for path, _ in site.log)
