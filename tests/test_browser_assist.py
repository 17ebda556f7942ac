"""Agent assist in a real browser: a case opened in /admin shows a drafted reply with its sources;
the agent inserts it, edits it and sends it, and the customer's widget shows the agent's message.
Real MiniLM embeddings (the draft depends on retrieval), at desktop width and at 375 px."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import ADMIN_TOKEN, WIDGET, ask_in_widget, js_errors, open_widget, shot

pytestmark = pytest.mark.browser

browser = bh.browser
page = bh.page_fixture
PROBLEM = "SSO broke this morning, every sign-in fails with AUTH_302 signature invalid"


@pytest.fixture(scope="module")
def live() -> Iterator[bh.LiveApp]:
    bh.require_browser()
    app = bh.LiveApp(embedder="local", embedded_store="memory").start()
    try:
        yield app
    finally:
        app.stop()


def _admin(browser: Any, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(60_000)  # the first opening drafts the reply
    return context


def _open_case(admin: Any, live: bh.LiveApp, case_ref: str) -> Any:
    admin.goto(f"{live.base_url}/admin")
    admin.locator("#token").fill(ADMIN_TOKEN)
    admin.locator("#token").press("Enter")
    admin.locator("#status-filter").select_option("")  # all: a case the agent replied to is claimed
    admin.locator(f"#queue-table tr[data-case='{case_ref}'] .case-btn").click()
    panel = admin.locator("#detail #assist")
    panel.locator("[data-action=insert-suggestion]").wait_for()
    return panel


# what sticks out past the viewport's right edge, for the failure message
WIDE = """() => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8)
  .map((e) => `${e.tagName}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`)"""


def _no_sideways_scroll(p: Any) -> bool:
    return bool(p.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1"))


def test_insert_edit_send_reaches_the_customers_widget(
    live: bh.LiveApp, page: Any, browser: Any
) -> None:
    customer = live.customer("pro")
    page.goto(f"{live.base_url}/demo")
    bh.demo_settled(page)
    page.evaluate("t => window.Concierge.identify(t)", customer["identityToken"])
    open_widget(page)
    ask_in_widget(page, PROBLEM)
    page.locator(f"{WIDGET} .handoff").click()
    notice = page.locator(f"{WIDGET} .notice.escalation")
    notice.wait_for()
    case_ref = notice.get_attribute("data-case-ref")
    assert case_ref

    context = _admin(browser, 1366)
    admin = context.new_page()
    panel = _open_case(admin, live, case_ref)
    draft = panel.locator("[data-assist=draft]").inner_text()
    assert "[1]" in draft
    sources = panel.locator("[data-assist=sources] li")
    assert sources.count() >= 1 and panel.locator("[data-assist=sources] li.cited").count() >= 1
    audiences = [li.split("·")[-1].strip() for li in sources.all_inner_texts()]
    assert set(audiences) <= {"all", "pro"}, audiences  # only what a pro customer may read
    shot(admin, "admin-assist-desktop", full_page=True)
    panel.screenshot(path=str(bh.ARTIFACTS / "admin-assist-panel-desktop.png"))

    admin.locator("#agent").fill("Sam")
    panel.locator("[data-action=insert-suggestion]").click()
    box = admin.locator("#reply-text")
    assert box.input_value() == draft
    box.fill("Hi, Sam here. " + draft)
    admin.locator("#detail [data-action=reply]").click()
    admin.locator("#detail .transcript li.agent").wait_for()

    messages = live.run(live.store.messages.after(customer_conversation(live, case_ref), 0))
    assert messages[-1].role == "agent" and messages[-1].content.startswith("Hi, Sam here.")
    events = live.run(_events(live, case_ref))
    assert {"shown", "inserted", "sent_edited"} <= set(events), events

    agent_msg = page.locator(f"{WIDGET} .msg.agent")
    agent_msg.wait_for(timeout=15_000)  # the open widget polls every 3 s
    assert "Sam here" in agent_msg.inner_text()
    shot(page, "widget-agent-reply-from-suggestion")
    assert js_errors(page) == []
    context.close()

    # at phone width: the case view, its suggestion and the insert button fit without scrolling
    # sideways (the reply just sent made the conversation longer: a fresh suggestion is drafted)
    phone = _admin(browser, 375)
    small = phone.new_page()
    panel = _open_case(small, live, case_ref)
    panel.locator("[data-action=insert-suggestion]").scroll_into_view_if_needed()
    assert panel.locator("[data-action=insert-suggestion]").is_visible()
    assert _no_sideways_scroll(small), small.evaluate(WIDE)
    shot(small, "admin-assist-375", full_page=True)
    panel.screenshot(path=str(bh.ARTIFACTS / "admin-assist-panel-375.png"))

    # the same insert, edit and send with a thumb
    small.locator("#agent").fill("Sam")
    panel.locator("[data-action=insert-suggestion]").click()
    second = small.locator("#reply-text").input_value()
    assert second == panel.locator("[data-assist=draft]").inner_text()
    small.locator("#reply-text").fill("Following up from my phone. " + second)
    small.locator("#detail [data-action=reply]").click()
    small.locator("#detail .transcript li.agent", has_text="from my phone").wait_for()
    assert _no_sideways_scroll(small), small.evaluate(WIDE)
    shot(small, "admin-assist-375-sent", full_page=True)
    page.locator(f"{WIDGET} .msg.agent", has_text="from my phone").wait_for(timeout=15_000)
    assert live.run(_events(live, case_ref)).count("sent_edited") == 2
    phone.close()


def customer_conversation(live: bh.LiveApp, case_ref: str) -> str:
    case = live.run(live.store.escalations.get(case_ref))
    assert case is not None
    return str(case.conversation_id)


async def _events(live: bh.LiveApp, case_ref: str) -> list[str]:
    cursor = live.store.db["assist_events"].find({"caseRef": case_ref})
    return [e["event"] for e in await cursor.to_list()]
