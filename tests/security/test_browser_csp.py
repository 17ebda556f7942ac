"""Finding 8 in a real browser: every page we serve runs under its CSP without a violation, and
the CSP is really enforced (an injected inline script is refused and reported)."""

from __future__ import annotations

from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import ADMIN_TOKEN, csp_violations, js_errors

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture


def test_demo_console_runs_a_turn_without_csp_violations(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    bh.open_widget(page)
    reply = bh.ask_in_widget(page, "How do I reset my password?")
    assert reply.inner_text()
    assert csp_violations(page) == [] and js_errors(page) == []


def test_admin_dashboard_without_csp_violations(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/admin")
    page.locator("#token").fill(ADMIN_TOKEN)
    page.locator("#token").press("Enter")
    page.locator("svg[data-chart=lines]").wait_for()
    assert csp_violations(page) == [] and js_errors(page) == []


def test_help_page_without_csp_violations(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/help/reset-password")
    page.locator("h1").wait_for()
    width = page.evaluate("() => getComputedStyle(document.body).maxWidth")
    assert width != "none"  # the stylesheet applied
    assert csp_violations(page) == [] and js_errors(page) == []


def test_the_csp_is_enforced(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/help/reset-password")
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__pwned = 1'; document.body.append(s); }"
    )
    page.wait_for_function("() => window.__cspViolations.length > 0")
    assert page.evaluate("() => window.__pwned") is None
    assert any("script-src" in v for v in csp_violations(page))
