"""/docs renders in Chromium with the network cut off: every asset is served locally."""

from __future__ import annotations

from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import js_errors, shot

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture


def offline(page: Any, live: bh.LiveApp) -> list[str]:
    """Abort every request that does not go to the app; return the URLs that were tried."""
    blocked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(live.base_url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return blocked


def test_swagger_ui_renders_every_operation_offline(live: bh.LiveApp, page: Any) -> None:
    blocked = offline(page, live)
    page.goto(f"{live.base_url}/docs")
    page.locator(".swagger-ui .opblock").first.wait_for()
    operations = sum(len(item) for item in live.app.openapi()["paths"].values())
    assert page.locator(".swagger-ui .opblock").count() == operations
    assert "Concierge" in page.locator(".swagger-ui .info .title").inner_text()
    page.locator(".swagger-ui .opblock-summary").first.click()  # expands: the UI is live
    page.locator(".swagger-ui .opblock-body").first.wait_for()
    shot(page, "docs-swagger-ui", full_page=True)
    assert blocked == [] and js_errors(page) == []
