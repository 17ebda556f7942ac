"""The /demo console: customer switcher and the per-turn inspection panel."""

from __future__ import annotations

from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import WIDGET, js_errors, open_widget, shot, widget_state

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture

BANDS = {"strong", "weak", "none"}


def finished_cards(page: Any, n: int) -> Any:
    page.wait_for_function(
        "n => document.querySelectorAll('#turns .turn:not(.pending)').length >= n",
        arg=n,
        timeout=90_000,
    )
    return page.locator("#turns .turn:not(.pending)")


def test_switcher_lists_every_demo_customer_with_plan(live: bh.LiveApp, page: Any) -> None:
    customers = live.demo_customers()
    page.goto(f"{live.base_url}/demo")
    page.wait_for_function("() => document.querySelectorAll('#customer option').length > 1")
    options = page.locator("#customer option").all_inner_texts()
    assert options[0] == "Anonymous visitor"
    for c in customers:
        assert any(o.startswith(f"{c['name']} — {c['plan']}") for o in options), c
    plans = {c["plan"] for c in customers}
    assert {"free", "pro", "enterprise"} <= plans and plans - {"free", "pro", "enterprise"}

    page.locator("[data-preset=unknown]").click()
    page.locator("#session-status", has_text="Session: ").wait_for()
    assert "unknown" in page.locator("#session-status").inner_text()
    state = widget_state(page)
    assert state["customer"]["plan"] not in {"free", "pro", "enterprise"}


def test_inspection_panel_shows_each_turn(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    page.wait_for_function(
        "() => window.Concierge && document.querySelectorAll('#customer option').length > 1"
    )
    page.locator("[data-preset=pro]").click()
    page.locator("#session-status", has_text="plan pro").wait_for()
    page.locator("[data-ask='How do I set up SSO with Okta?']").click()
    card = finished_cards(page, 1).first

    intent = card.locator("[data-field=intent]").inner_text()
    assert intent and intent != "—"
    assert card.locator("[data-field=confidence]").inner_text().lower() in BANDS
    band_class = card.locator("[data-field=confidence]").get_attribute("class") or ""
    assert any(f"band-{b}" in band_class for b in BANDS)
    assert card.locator("[data-field=condensed]").inner_text() not in ("", "—")
    assert card.locator("[data-field=sentiment]").inner_text() not in ("", "—")
    assert card.locator("[data-field=passages] tbody tr").count() >= 1
    header = card.locator("[data-field=passages] thead").inner_text()
    for col in ("Kind", "Breadcrumb", "RRF", "Rerank"):
        assert col in header
    assert card.locator("[data-field=latency]").inner_text().count("ms") >= 4
    assert "Pro" in card.locator("h4").inner_text() or "pro" in card.locator("h4").inner_text()

    # A policy intent shows its escalation reason and case reference.
    page.locator("[data-ask='I want a refund for last month.']").click()
    escalated = finished_cards(page, 2).first
    text = escalated.locator("[data-field=escalation]").inner_text()
    assert "policy" in text and "CASE-" in text
    assert escalated.locator("[data-field=why]").inner_text().strip() != ""  # the trace's why
    assert js_errors(page) == []


def test_same_question_differs_between_free_and_enterprise(live: bh.LiveApp, page: Any) -> None:
    """Audit logs are an Enterprise article: only the enterprise turn may retrieve it."""
    page.set_viewport_size({"width": 1440, "height": 1100})
    page.goto(f"{live.base_url}/demo")
    page.wait_for_function(
        "() => window.Concierge && document.querySelectorAll('#customer option').length > 1"
    )
    page.locator("#compare").click()
    cards = finished_cards(page, 2)
    enterprise, free = cards.nth(0), cards.nth(1)  # newest first
    assert "enterprise" in enterprise.locator("h4").inner_text()
    assert "free" in free.locator("h4").inner_text()
    enterprise_rows = enterprise.locator("[data-field=passages]").inner_text()
    free_rows = (
        free.locator("[data-field=passages]").inner_text()
        if free.locator("[data-field=passages]").count()
        else ""
    )
    assert "Audit logs" in enterprise_rows
    assert "Audit logs" not in free_rows
    # The widget shows the enterprise customer's answer last (wording is the engine's business).
    assert page.locator(f"{WIDGET} .msg.assistant[data-id]").count() == 1
    page.evaluate(
        "() => { const c = document.querySelector('.console');"
        " c.scrollTop = document.querySelector('#turns').offsetTop - 70; }"
    )
    shot(page, "demo-console-free-vs-enterprise")
    shot(page, "demo-full-page", full_page=True)
    assert js_errors(page) == []


def test_demo_page_is_usable_at_phone_width(live: bh.LiveApp, page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live.base_url}/demo")
    page.wait_for_function(
        "() => window.Concierge && document.querySelectorAll('#customer option').length > 1"
    )
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    shot(page, "demo-375px")
    open_widget(page)
    shot(page, "demo-375px-widget-open")
