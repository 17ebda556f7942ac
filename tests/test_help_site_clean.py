"""A help center written in every common site-generator dialect, served as /help pages: a
crawl from the index finds no template syntax and no broken internal link (issue 39)."""

from __future__ import annotations

import re
from collections import deque
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.ingest.leaks import find_leaks
from tests.apihelp import running_app

pytestmark = pytest.mark.integration

SITE = Path(__file__).parent / "fixtures" / "dialect_site"


class _Page(HTMLParser):
    """A page's visible text lines, its links and the ids anchors can land on."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.lang = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "html":
            self.lang = str(found.get("lang") or "")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def crawl(get: object, start: str = "/help") -> dict[str, _Page]:
    """Every /help page reachable from `start`; asserts each answers 200."""
    pages: dict[str, _Page] = {}
    queue = deque([start])
    while queue:
        path = queue.popleft()
        if path in pages:
            continue
        response = get(path)  # type: ignore[operator]
        assert response.status_code == 200, path
        pages[path] = _parse(response.text)
        for href in pages[path].links:
            target = href.split("#", 1)[0]
            if target.startswith("/help") and target not in pages:
                queue.append(target)
    return pages


def test_a_dialect_rich_folder_serves_clean_pages_with_working_links() -> None:
    with running_app(articles_dir=SITE, seed_on_start=True) as api:
        pages = crawl(api.client.get)
        articles = {p for p in pages if p != "/help"}
        assert len(articles) == 9  # every file of the folder, found from the index

        leaks = {path: find_leaks(unescape("".join(page.text))) for path, page in pages.items()}
        assert {p: v for p, v in leaks.items() if v} == {}

        checked = 0
        for path, page in pages.items():
            for href in page.links:
                if not href.startswith(("/help", "#")):
                    continue
                target, _, anchor = href.partition("#")
                target_page = pages[target or path]
                if anchor:
                    assert anchor in target_page.ids, (path, href)
                checked += 1
        assert checked >= 18  # 9 from the index, 9 cross-article links in five dialects

        assert pages["/help/sicherung"].lang == "de"
        assert pages["/help/plans"].lang == "en"
        plans = "".join(pages["/help/plans"].text)
        assert "Trial length" in plans and "Yes" in plans and "No" in plans
        login = pages["/help/two-step-login"]
        assert {"web", "phone", "use-an-authenticator-app"} <= login.ids  # tabs are sections
        assert "/help/two-step-login#use-an-authenticator-app" in pages["/help/plans"].links

        ready = api.client.get("/readyz").json()
        assert ready["details"]["leaks"]["markers"] == 0
        assert ready["details"]["leaks"]["pagesChecked"] == 9


def test_the_same_check_catches_a_leak_and_a_dead_anchor(tmp_path: Path) -> None:
    """The crawl assertions can fail: a stray tag and a link to a missing heading."""
    (tmp_path / "a.md").write_text("# A\n\nStray {% oops\n\n[b](b.md#nowhere)\n", "utf-8")
    (tmp_path / "b.md").write_text("# B\n\n## Somewhere\n\nText.\n", "utf-8")
    with running_app(articles_dir=tmp_path, seed_on_start=True) as api:
        pages = crawl(api.client.get)
        text = unescape("".join(pages["/help/a"].text))
        assert [leak.marker for leak in find_leaks(text)] == ["{%"]
        assert "/help/b" in pages["/help/a"].links  # the dead anchor was dropped, page kept
        assert re.search(r'id="somewhere"', api.client.get("/help/b").text)
        ready = api.client.get("/readyz").json()
        assert ready["details"]["leaks"]["markers"] == 1
