"""The /admin dashboard: token prompt, charts, gap clusters and the escalation queue."""

from __future__ import annotations

from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import ADMIN_TOKEN, js_errors, shot

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture


@pytest.fixture(scope="module")
def activity(live: bh.LiveApp) -> dict[str, Any]:
    """A few conversations through the API: answered and confirmed, answered and not,
    unanswerable (a docs gap), a policy escalation and an explicit handoff."""
    out: dict[str, Any] = {}
    enterprise = live.session(live.customer("enterprise")["identityToken"])
    free = live.session(live.customer("free")["identityToken"])
    anon = live.session()

    c1 = live.new_conversation(enterprise)
    live.ask(enterprise, c1, "How long are audit logs kept?")
    live.http.post(
        f"/v1/conversations/{c1}/feedback",
        json={"resolved": True},
        headers={"Authorization": f"Bearer {enterprise}"},
    ).raise_for_status()

    c2 = live.new_conversation(free)
    live.ask(free, c2, "How do I reset my password?")
    live.http.post(
        f"/v1/conversations/{c2}/feedback",
        json={"resolved": False},
        headers={"Authorization": f"Bearer {free}"},
    ).raise_for_status()

    c3 = live.new_conversation(anon)
    live.ask(anon, c3, "Can Harborline water the plants in my office?")
    live.ask(anon, c3, "Does it integrate with my espresso machine?")

    c4 = live.new_conversation(free)
    refund = live.ask(free, c4, "I want a refund for last month")
    out["policy_case"] = refund["reply"]["meta"]["caseRef"]

    c5 = live.new_conversation(enterprise)
    live.ask(enterprise, c5, "How do I pair a room panel?")
    r = live.http.post(
        f"/v1/conversations/{c5}/handoff",
        json={},
        headers={"Authorization": f"Bearer {enterprise}"},
    )
    r.raise_for_status()
    out["explicit_case"] = r.json()["caseRef"]
    out["explicit_conversation"] = c5
    return out


def sign_in(page: Any, live: bh.LiveApp, token: str = ADMIN_TOKEN) -> None:
    page.goto(f"{live.base_url}/admin")
    page.locator("#token").fill(token)
    page.locator("#token").press("Enter")


def test_panels_say_what_the_product_does(live: bh.LiveApp, page: Any) -> None:
    """Before any activity: no literal "null" under an empty knowledge loop, and the review
    panel describes quarantine, which is what happens to the seed's flagged article."""
    sign_in(page, live)
    page.locator("#loop-weeks [data-loop=totals]").wait_for()
    page.locator("#res-tickets .empty").wait_for()
    loop = page.locator("section:has(#loop-title)").inner_text()
    assert "null" not in loop.split()
    assert "0 tickets from resolutions" in loop

    words = page.locator("#review-help").inner_text()
    assert "stay searchable" not in words
    assert "quarantined" in words and "404" in words
    row = page.locator("#review-table tbody tr", has_text="room-panel-cleaning")
    row.wait_for()
    assert "quarantined" in row.inner_text()
    assert live.http.get("/help/room-panel-cleaning").status_code == 404  # as the words say
    assert js_errors(page) == []


def test_token_prompt_rejects_a_wrong_token(live: bh.LiveApp, page: Any) -> None:
    sign_in(page, live, "not-the-token")
    error = page.locator("#login-error")
    error.wait_for()
    assert "rejected" in error.inner_text()
    assert page.locator("#dashboard").is_hidden()
    assert page.evaluate("() => sessionStorage.getItem('concierge.adminToken')") is None


def test_dashboard_renders_charts_and_docs_gaps(
    live: bh.LiveApp, page: Any, activity: dict[str, Any]
) -> None:
    sign_in(page, live)
    page.locator("svg[data-chart=lines]").wait_for()

    lines = page.locator("#chart-daily svg[data-chart=lines]")
    assert lines.get_attribute("role") == "img"
    assert lines.locator("title").first.text_content()
    assert lines.locator("polyline").count() >= 2
    assert lines.locator("[data-series=deflected] circle").count() >= 1
    assert lines.locator("[data-series=conversations] rect").count() >= 1  # today's bar

    stacked = page.locator("#chart-confidence svg[data-chart=stacked]")
    assert stacked.locator("rect[data-segment]").count() >= 1
    bars = page.locator("#chart-reasons svg[data-chart=hbars]")
    assert bars.locator("rect[data-item]").count() == 4
    policy_width = float(
        bars.locator("rect[data-item='Policy intent']").get_attribute("width") or 0
    )
    explicit_width = float(
        bars.locator("rect[data-item='Asked for a person']").get_attribute("width") or 0
    )
    assert policy_width > 0 and explicit_width > 0

    assert page.locator("[data-rate=deflection]").inner_text().endswith("%")
    assert page.locator("[data-rate=resolution]").inner_text().endswith("%")

    clusters = page.locator("#gap-clusters .cluster")
    clusters.first.wait_for()
    assert clusters.first.locator("h3").inner_text()
    assert clusters.first.locator(".examples li").count() >= 1
    # the policy handoff (a refund) is not a gap
    assert "refund" not in page.locator("#gap-clusters").inner_text().lower()
    shot(page, "admin-dashboard", full_page=True)
    assert js_errors(page) == []


def test_queue_claim_reply_resolve(live: bh.LiveApp, page: Any, activity: dict[str, Any]) -> None:
    case_ref = activity["explicit_case"]
    sign_in(page, live)
    row = page.locator(f"#queue-table tr[data-case='{case_ref}']")
    row.wait_for()
    assert row.locator("[data-sla]").count() == 1
    assert page.locator(f"#queue-table tr[data-case='{activity['policy_case']}']").count() == 1

    row.locator(".case-btn").click()
    detail = page.locator("#detail")
    detail.locator("h3", has_text=case_ref).wait_for()
    text = detail.inner_text()
    for label in ("Asked for", "Reason", "Customer", "Plan", "Turns", "Confidence", "Transcript"):
        assert label.lower() in text.lower(), label
    assert detail.locator(".transcript li").count() >= 2
    shot(page, "admin-case-detail", full_page=True)

    page.locator("#agent").fill("Sam")
    detail.locator("[data-action=claim]").click()
    detail.locator(".badge.claimed").wait_for()
    assert live.run(live.store.escalations.get(case_ref)).claimed_by == "Sam"

    detail.locator("#reply-text").fill("Hi, Sam from Harborline here — I'll pair it with you.")
    detail.locator("[data-action=reply]").click()
    detail.locator(".transcript li.agent").wait_for()
    messages = live.run(live.store.messages.after(activity["explicit_conversation"], 0))
    assert messages[-1].role == "agent" and messages[-1].content.startswith("Hi, Sam")

    detail.locator("[data-action=resolve]").click()
    # prefilled from the agent's reply; knowledge is opt-in (left unticked here)
    assert detail.locator("#resolution-text").input_value().startswith("Hi, Sam")
    assert not detail.locator("#knowledge-consent").is_checked()
    detail.locator("[data-action=confirm-resolve]").click()
    detail.locator("h3 + p .badge.resolved").first.wait_for()
    assert live.run(live.store.escalations.get(case_ref)).status == "resolved"

    page.locator("#status-filter").select_option("resolved")
    page.locator(f"#queue-table tr[data-case='{case_ref}']").wait_for()
    assert js_errors(page) == []


def test_content_review_approves_a_flagged_article(live: bh.LiveApp, page: Any) -> None:
    sign_in(page, live)
    row = page.locator("#review-table tbody tr", has_text="room-panel-cleaning")
    row.wait_for()
    assert "prompt-injection" in row.inner_text() or "injection" in row.inner_text()
    page.locator("#agent").fill("Kim")
    row.get_by_role("button", name="Approve").click()
    page.locator("#reviews .empty").wait_for()
    article = live.run(live.store.articles.get("room-panel-cleaning"))
    assert article.review_flags == [] and article.reviewed_by == "Kim"
    assert article.status == "published"
    assert js_errors(page) == []
