"""The embeddable widget in a real browser against the real app: streaming, citations,
feedback, handoff, agent replies, persistence, keyboard use and phone width."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlparse

import browser_helpers as bh
import pytest
from browser_helpers import WIDGET, ask_in_widget, js_errors, open_widget, shot, widget_state

from app.store.models import Feedback

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture

RECORD_EVENTS = """
window.__events = [];
for (const name of ['concierge:inspect:meta', 'concierge:inspect:turn', 'concierge:turn',
                    'concierge:escalated', 'concierge:error']) {
  document.addEventListener(name, (e) => window.__events.push({ name, detail: e.detail }));
}
"""


def shadow_active(page: Any) -> str:
    """Which element has focus inside the widget (id or class)."""
    return str(
        page.evaluate(
            """() => {
                const a = document.querySelector('#concierge-widget').shadowRoot.activeElement;
                return a ? (a.id || a.className) : '';
            }"""
        )
    )


def test_streams_an_answer_with_a_working_citation_link(live: bh.LiveApp, page: Any) -> None:
    posts: list[Any] = []
    page.on(
        "response",
        lambda r: (
            posts.append(r) if r.request.method == "POST" and r.url.endswith("/messages") else None
        ),
    )
    page.add_init_script(RECORD_EVENTS)
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    answer = ask_in_widget(page, "How do I reset my password?")

    # It went over SSE: the widget asked for a stream, got one, and saw meta before done.
    assert posts, "no message POST seen"
    assert posts[-1].request.headers.get("accept") == "text/event-stream"
    assert posts[-1].headers["content-type"].startswith("text/event-stream")
    # the turn event follows the stream's end (the widget reads the stored message first): on a
    # busy machine it can land just after the answer is shown, so wait for it (bounded)
    page.wait_for_function(
        "() => window.__events.some(e => e.name === 'concierge:inspect:turn')", timeout=15000
    )
    names = [e["name"] for e in page.evaluate("() => window.__events")]
    assert names.index("concierge:inspect:meta") < names.index("concierge:inspect:turn")
    events = page.evaluate("() => window.__events")
    turn = next(e["detail"] for e in events if e["name"] == "concierge:inspect:turn")
    public = next(e["detail"] for e in events if e["name"] == "concierge:turn")
    # The public event names the turn; the trace (sentiment, passages) is for inspection only.
    assert set(public) == {"conversationId", "messageId", "escalated", "caseRef"}
    assert public["messageId"] == turn["message"]["id"]
    assert turn["meta"]["intent"] and turn["message"]["role"] == "assistant"
    shown = " ".join(answer.locator(".bubble").inner_text().split())
    # Lists are rendered as lists: their "1." / "-" markers are the list's, not the text's.
    marker = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•+])\s+", re.MULTILINE)
    assert shown == " ".join(marker.sub("", turn["message"]["content"]).split())

    # [n] in the text is a link to the cited article; the Sources list names it.
    cite = answer.locator("a.cite").first
    cite.wait_for()
    href = cite.get_attribute("href")
    assert href and urlparse(href).path.startswith("/help/")
    citations = turn["message"]["meta"]["citations"]
    n = int(cite.get_attribute("data-cite"))
    cited = next(c for c in citations if c["n"] == n)
    assert answer.locator(".sources").inner_text().count(cited["title"]) >= 1
    shot(page, "widget-answer-with-citation")

    with page.context.expect_page() as new_tab:
        cite.click()
    article = new_tab.value
    article.wait_for_load_state()
    assert article.url == href
    assert article.locator("h1").inner_text().strip() == cited["title"]
    shot(article, "widget-citation-opened")
    article.close()
    assert js_errors(page) == []


def test_thumbs_down_and_did_this_solve_it_are_stored(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    answer = ask_in_widget(page, "How do I reset my password?")
    message_id = answer.get_attribute("data-id")
    conversation_id = widget_state(page)["conversationId"]

    answer.locator("[data-feedback=down]").click()
    comment = page.locator(f"{WIDGET} .fb-form textarea")
    comment.fill("It did not say how long the link is valid")
    page.locator(f"{WIDGET} .fb-form button[type=submit]").click()
    answer.locator(".fb-status", has_text="Thanks").wait_for()

    page.locator(f"{WIDGET} [data-resolved=no]").click()
    page.locator(f"{WIDGET} .resolved", has_text="Sorry it didn").wait_for()
    shot(page, "widget-feedback")

    docs = live.store.db["feedback"].find({"conversationId": conversation_id}).to_list()
    stored = [Feedback.from_doc(d) for d in live.run(docs)]
    thumbs = [f for f in stored if f.message_id == message_id]
    assert [(f.helpful, f.comment) for f in thumbs] == [
        (False, "It did not say how long the link is valid")
    ]
    assert [f.resolved for f in stored if f.resolved is not None] == [False]

    # The choices survive a reload (no second prompt, thumbs shown as pressed).
    page.reload()
    open_widget(page)
    restored = page.locator(f'{WIDGET} .msg[data-id="{message_id}"]')
    restored.wait_for()
    assert restored.locator("[data-feedback=down]").get_attribute("aria-pressed") == "true"
    assert page.locator(f"{WIDGET} .resolved").is_hidden()
    assert js_errors(page) == []


def test_talk_to_a_person_then_an_agent_reply_reaches_the_widget(
    live: bh.LiveApp, page: Any
) -> None:
    customer = live.customer("pro")
    page.goto(f"{live.base_url}/demo")
    bh.demo_settled(page)
    page.evaluate("t => window.Concierge.identify(t)", customer["identityToken"])
    open_widget(page)
    ask_in_widget(page, "My room panel shows a blinking amber light")

    page.locator(f"{WIDGET} .handoff").click()
    notice = page.locator(f"{WIDGET} .notice.escalation")
    notice.wait_for()
    case_ref = notice.get_attribute("data-case-ref")
    assert case_ref and case_ref in notice.inner_text()
    assert page.locator(f"{WIDGET} .handoff").is_disabled()
    state = widget_state(page)
    assert state["caseRef"] == case_ref and state["status"] == "escalated"

    packet = live.run(live.store.escalations.get(case_ref))
    assert packet is not None
    assert packet.conversation_id == state["conversationId"]
    assert packet.reason == "explicit" and packet.status == "open"
    assert packet.customer and packet.customer["id"] == customer["id"]
    shot(page, "widget-handoff")

    reply = live.admin(
        "POST",
        f"/v1/admin/escalations/{case_ref}/reply",
        json={
            "agent": "Sam",
            "content": "Hi, Sam here. Amber blinking means a firmware update is running.",
        },
    )
    assert reply.status_code == 200, reply.text
    agent_msg = page.locator(f"{WIDGET} .msg.agent")
    agent_msg.wait_for(timeout=15_000)  # the open widget polls every 3 s
    assert "firmware update is running" in agent_msg.inner_text()
    assert "Sam" in agent_msg.inner_text()
    shot(page, "widget-agent-reply")

    # While a person has the conversation the bot stays silent; the message is still sent.
    page.locator(f"{WIDGET} #cg-input").fill("Thanks, how long does it take?")
    page.locator(f"{WIDGET} #cg-input").press("Enter")
    page.locator(f"{WIDGET} .sent-note").wait_for()
    messages = live.run(live.store.messages.after(state["conversationId"], 0))
    assert messages[-1].role == "user" and messages[-1].content == "Thanks, how long does it take?"
    assert js_errors(page) == []


def test_agent_reply_arrives_while_closed_as_an_unread_badge(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    page.locator(f"{WIDGET} .handoff").click()
    case_ref = page.locator(f"{WIDGET} .notice.escalation").get_attribute("data-case-ref")
    page.keyboard.press("Escape")
    live.admin(
        "POST",
        f"/v1/admin/escalations/{case_ref}/reply",
        json={"agent": "Ana", "content": "Still there?"},
    )
    badge = page.locator(f"{WIDGET} .badge")
    badge.wait_for(timeout=25_000)  # background polling while escalated: every 15 s
    assert badge.inner_text() == "1"
    assert "1 new reply" in (page.locator(f"{WIDGET} .launcher").get_attribute("aria-label") or "")


def test_conversation_survives_reload_and_is_kept_per_identity(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    answer = ask_in_widget(page, "How do I invite users?")
    first_id = answer.get_attribute("data-id")
    anon_conversation = widget_state(page)["conversationId"]

    page.reload()
    bh.demo_settled(page)
    open_widget(page)
    page.locator(f'{WIDGET} .msg[data-id="{first_id}"]').wait_for()
    assert widget_state(page)["conversationId"] == anon_conversation

    enterprise = live.customer("enterprise")
    page.evaluate("t => window.Concierge.identify(t)", enterprise["identityToken"])
    assert page.locator(f"{WIDGET} .msg[data-id]").count() == 0
    assert widget_state(page)["conversationId"] is None
    assert widget_state(page)["customer"]["id"] == enterprise["id"]
    assert "Signed in as" in page.locator(f"{WIDGET} #cg-sub").inner_text()

    page.evaluate("() => window.Concierge.identify(null)")
    page.locator(f'{WIDGET} .msg[data-id="{first_id}"]').wait_for()
    assert widget_state(page)["conversationId"] == anon_conversation


def test_keyboard_only_use_and_aria_roles(live: bh.LiveApp, page: Any) -> None:
    page.goto(f"{live.base_url}/demo")
    page.wait_for_function("() => window.Concierge")
    launcher = page.locator(f"{WIDGET} .launcher")
    assert launcher.get_attribute("aria-expanded") == "false"
    launcher.focus()
    page.keyboard.press("Enter")
    panel = page.locator(f"{WIDGET} [role=dialog]")
    panel.wait_for()
    assert launcher.get_attribute("aria-expanded") == "true"
    assert panel.get_attribute("aria-labelledby") == "cg-title"
    assert page.locator(f"{WIDGET} [role=log]").get_attribute("aria-live") == "polite"
    assert shadow_active(page) == "cg-input", "focus should move into the composer"

    page.keyboard.type("What are the API rate limits?")
    page.keyboard.press("Enter")
    page.locator(f"{WIDGET} .msg.assistant[data-id]").wait_for(timeout=60_000)
    for button in page.locator(f"{WIDGET} button").all():
        if button.is_visible():
            name = (button.get_attribute("aria-label") or button.inner_text()).strip()
            assert name, f"unlabelled button: {button.evaluate('b => b.outerHTML')}"

    # Visible focus ring on keyboard focus.
    page.keyboard.press("Shift+Tab")
    outline = page.evaluate(
        """() => { const a = document.querySelector('#concierge-widget').shadowRoot.activeElement;
                   return getComputedStyle(a).outlineStyle; }"""
    )
    assert outline not in ("none", "")
    page.keyboard.press("Escape")
    panel.wait_for(state="hidden")
    assert shadow_active(page) == "launcher", "Esc should return focus to the launcher"


def test_phone_width_panel_is_full_screen_and_readable(live: bh.LiveApp, page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    ask_in_widget(page, "How do I connect Google Calendar?")
    box = page.locator(f"{WIDGET} #cg-panel").bounding_box()
    assert box == {"x": 0, "y": 0, "width": 375, "height": 740}
    assert page.locator(f"{WIDGET} .launcher").is_hidden()
    # Nothing overflows horizontally inside the panel.
    overflow = page.evaluate(
        """() => {
            const root = document.querySelector('#concierge-widget').shadowRoot;
            const log = root.querySelector('.log');
            return log.scrollWidth - log.clientWidth;
        }"""
    )
    assert overflow <= 0
    shot(page, "widget-375px")
    page.locator(f"{WIDGET} .hbtn[aria-label^=Close]").click()
    assert page.locator(f"{WIDGET} .launcher").is_visible()


def test_host_page_css_cannot_break_the_widget(live: bh.LiveApp, page: Any) -> None:
    page.add_init_script(
        """document.addEventListener('DOMContentLoaded', () => {
             const s = document.createElement('style');
             s.textContent = 'button, div, section { display: none !important }'
               + ' * { color: red !important; font-size: 40px !important }';
             document.head.append(s);
           });"""
    )
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    size = page.evaluate(
        """() => getComputedStyle(document.querySelector('#concierge-widget').shadowRoot
                  .querySelector('#cg-input')).fontSize"""
    )
    assert size == "15px"


def test_stream_parser_handles_crlf_comments_and_escapes_html(live: bh.LiveApp, page: Any) -> None:
    """A hand-written SSE body: CRLF line ends, comment lines, `data:` without a space,
    and message text that tries to inject HTML."""
    message = {
        "id": "a-1",
        "seq": 2,
        "role": "assistant",
        "content": "<img src=x onerror=window.__pwned=1> **Use the panel** [1]",
        "createdAt": "2026-01-01T00:00:00+00:00",
        "meta": {
            "intent": "how_to",
            "confidence": "strong",
            "citations": [
                {
                    "n": 1,
                    "title": "Room panel setup",
                    "url": "/help/room-panel-setup",
                    "kind": "doc",
                    "breadcrumb": "Room panel setup › Pairing",
                }
            ],
        },
    }
    meta = {
        "userMessage": {"id": "u-1", "seq": 1},
        "intent": "how_to",
        "confidence": "strong",
        "passages": [],
        "escalated": False,
    }
    body = (
        ": keep-alive\r\n\r\n"
        f"event: meta\r\ndata: {json.dumps(meta)}\r\n\r\n"
        'event: delta\ndata:{"text": "<img src=x onerror=window.__pwned=1> "}\n\n'
        'event: delta\ndata: {"text": "**Use the panel** [1]"}\n\n'
        f"event: done\ndata: {json.dumps({'message': message})}\n\n"
    )

    def fulfil(route: Any) -> None:
        if route.request.method == "POST":
            route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=body)
        else:
            route.continue_()

    page.route("**/v1/conversations/*/messages", fulfil)
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    answer = ask_in_widget(page, "How do I pair a panel?")
    assert answer.get_attribute("data-id") == "a-1"
    assert answer.locator("strong").inner_text() == "Use the panel"
    assert "<img src=x" in answer.locator(".bubble").inner_text()
    assert answer.locator("img").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert (
        answer.locator("a.cite").get_attribute("href") == f"{live.base_url}/help/room-panel-setup"
    )


def test_errors_are_shown_inline_with_retry(live: bh.LiveApp, page: Any) -> None:
    calls = {"n": 0}

    def limited_once(route: Any) -> None:
        if route.request.method == "POST" and calls["n"] == 0:
            calls["n"] += 1
            route.fulfill(
                status=429,
                headers={"Retry-After": "2", "content-type": "application/json"},
                body='{"detail": "rate limited"}',
            )
        else:
            route.continue_()

    page.route("**/v1/conversations/*/messages", limited_once)
    page.goto(f"{live.base_url}/demo")
    open_widget(page)
    page.locator(f"{WIDGET} #cg-input").fill("How do I export bookings?")
    page.locator(f"{WIDGET} #cg-input").press("Enter")
    alert = page.locator(f"{WIDGET} [role=alert]")
    alert.wait_for()
    assert "wait 2 s" in alert.inner_text()
    retry = alert.locator("[data-retry]")
    assert retry.is_disabled()
    shot(page, "widget-rate-limited")
    page.wait_for_function(
        """() => !document.querySelector('#concierge-widget').shadowRoot
                  .querySelector('[data-retry]').disabled""",
        timeout=5_000,
    )
    retry.click()
    page.locator(f"{WIDGET} .msg.assistant[data-id]").wait_for(timeout=60_000)
    assert alert.is_hidden()
    assert page.locator(f"{WIDGET} .msg.user").count() == 1  # the failed attempt was replaced


def test_bad_identity_token_is_reported_not_silently_downgraded(
    live: bh.LiveApp, page: Any
) -> None:
    page.goto(f"{live.base_url}/demo")
    bh.demo_settled(page)
    open_widget(page)
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjdXNfY2FzdGVsbGFuIn0.forged"  # sub cus_castellan
    page.evaluate("t => window.Concierge.identify(t)", forged)
    alert = page.locator(f"{WIDGET} [role=alert]")
    alert.wait_for()
    assert "couldn't verify your sign-in" in alert.inner_text()
    assert widget_state(page)["customer"] is None
    alert.get_by_role("button", name="Continue as guest").click()
    ask_in_widget(page, "hello, how do I book a desk?")
    assert widget_state(page)["anonymous"] is True
