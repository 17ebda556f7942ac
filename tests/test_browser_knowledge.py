"""/admin's knowledge loop in a browser: gap clusters, resolving into knowledge, and editing
and publishing a draft article (screenshots in test-artifacts/)."""

from __future__ import annotations

from typing import Any

import browser_helpers as bh
import pytest
from browser_helpers import ADMIN_TOKEN, js_errors, shot

pytestmark = pytest.mark.browser

live = bh.live
browser = bh.browser
page = bh.page_fixture

QUESTION = "Can the room panel show our canteen's lunch menu between meetings?"
FIX = (
    "Room panels cannot show menus. Put the menu in the meeting room's description field; "
    "the panel shows the description while the room is free."
)
LONG = ("My panel is strange, write to me at pat.long@example.com. " + "It flickers. " * 300)[:3856]


def _handoff(live: bh.LiveApp, plan: str, text: str) -> tuple[str, str]:
    session = live.session(live.customer(plan)["identityToken"])
    conv = live.new_conversation(session)
    live.ask(session, conv, text)
    r = live.http.post(
        f"/v1/conversations/{conv}/handoff",
        json={},
        headers={"Authorization": f"Bearer {session}"},
    )
    r.raise_for_status()
    return r.json()["caseRef"], conv


@pytest.fixture(scope="module")
def cases(live: bh.LiveApp) -> dict[str, str]:
    """Three customers hand off the same unanswered question; one case is resolved with its
    resolution allowed to become knowledge; a 3,856-character complaint is handed off too."""
    first, _ = _handoff(live, "enterprise", QUESTION)
    second, _ = _handoff(live, "pro", QUESTION)
    third, _ = _handoff(live, "enterprise", QUESTION)
    live.admin(
        "POST", f"/v1/admin/escalations/{first}/reply", json={"agent": "Sam", "content": FIX}
    ).raise_for_status()
    live.admin(
        "POST",
        f"/v1/admin/escalations/{first}/resolve",
        json={"agent": "Sam", "resolution": FIX, "knowledge": True},
    ).raise_for_status()
    long_case, _ = _handoff(live, "free", LONG)
    return {"first": first, "second": second, "third": third, "long": long_case}


def sign_in(page: Any, live: bh.LiveApp) -> None:
    page.goto(f"{live.base_url}/admin")
    page.locator("#token").fill(ADMIN_TOKEN)
    page.locator("#token").press("Enter")
    page.locator("#agent").fill("Kim")


def _cluster(page: Any) -> Any:
    cluster = page.locator("#gap-clusters .cluster", has_text="lunch menu").first
    cluster.wait_for()
    return cluster


def test_gap_clusters_group_the_question_and_truncate_long_ones(
    live: bh.LiveApp, page: Any, cases: dict[str, str]
) -> None:
    sign_in(page, live)
    cluster = _cluster(page)
    assert int(cluster.locator("[data-count]").get_attribute("data-count") or 0) >= 3
    text = cluster.inner_text()
    assert cases["first"] in text and FIX[:30] in text  # the handoff's resolution is shown
    assert "audience: pro" in text  # the lowest rung among the askers
    assert cluster.locator("svg.spark rect").count() >= 1
    assert cluster.locator("[data-action=draft]").is_enabled()

    whole = page.locator("#gap-clusters").inner_text()
    assert "pat.long@example.com" not in whole  # masked
    assert all(
        len(li) <= 160 for li in page.locator("#gap-clusters .examples li").all_inner_texts()
    )
    shot(page, "admin-gap-clusters", full_page=True)

    # a phone-width layout stays compact (the flat panel was 10,752 px tall here)
    page.set_viewport_size({"width": 375, "height": 800})
    box = page.locator("#gap-clusters").bounding_box()
    assert box is not None and box["height"] < 3000
    shot(page, "admin-gap-clusters-375", full_page=False)
    assert js_errors(page) == []


def test_resolve_dialog_makes_knowledge_from_the_agents_reply(
    live: bh.LiveApp, page: Any, cases: dict[str, str]
) -> None:
    case_ref = cases["second"]
    live.admin(
        "POST", f"/v1/admin/escalations/{case_ref}/reply", json={"agent": "Kim", "content": FIX}
    ).raise_for_status()
    sign_in(page, live)
    page.locator("#status-filter").select_option("claimed")  # the reply claimed it
    page.locator(f"#queue-table tr[data-case='{case_ref}'] .case-btn").click()
    detail = page.locator("#detail")
    detail.locator("[data-action=resolve]").click()
    assert detail.locator("#resolution-text").input_value() == FIX
    detail.locator("#knowledge-consent").check()
    # the exact text to be published, shown and editable before publishing
    detail.locator("#knowledge-subject").wait_for()
    published_title = detail.locator("#knowledge-subject").input_value()
    assert published_title
    detail.locator("#resolution-quality").select_option("0.9")
    shot(page, "admin-resolve-dialog")
    detail.locator("[data-action=confirm-resolve]").click()
    detail.locator("h3 + p .badge.resolved").first.wait_for()
    row = page.locator("#tickets-table tr", has_text=case_ref)
    row.wait_for()
    ticket = live.run(live.store.tickets.get(f"res-{case_ref.lower()}"))
    assert ticket is not None and ticket.audience == "pro" and ticket.quality == 0.9
    assert ticket.subject == published_title
    assert ticket.status == "resolved" and ticket.source == "resolution"

    row.locator("[data-action=unpublish-ticket]").click()
    page.locator("#tickets-table tr", has_text=case_ref).locator(
        "[data-action=republish-ticket]"
    ).wait_for()
    assert live.run(live.store.tickets.get(ticket.id)).status == "unpublished"
    assert js_errors(page) == []


def test_draft_from_a_cluster_is_edited_and_published(
    live: bh.LiveApp, page: Any, cases: dict[str, str]
) -> None:
    sign_in(page, live)
    _cluster(page).locator("[data-action=draft]").click()
    editor = page.locator("#draft-editor")
    area = editor.locator("#draft-markdown")
    area.wait_for()
    markdown = area.input_value()
    # a draft's audience is the strictest rung among the cases it is built from (the resolved
    # case is an enterprise customer's), never widened by the pro customer who asked too
    assert "status: draft" in markdown and "audience: enterprise" in markdown
    assert "description field" in markdown  # from the agent's resolution
    [draft] = live.run(live.store.drafts.list("draft"))
    # drafts are never retrievable: no article, no chunk
    assert live.run(live.store.articles.count({"_id": {"$regex": "lunch"}})) == 0

    edited = markdown.replace("slug: ", "slug: canteen-menu-on-panels\nold_slug: ", 1).replace(
        "## What to do", "## What to do\n\nAsk your workspace admin first.", 1
    )
    area.fill(edited)
    editor.locator("[data-action=save-draft]").click()
    editor.locator(".toast", has_text="Save — done").wait_for()
    assert "Ask your workspace admin first." in live.run(live.store.drafts.get(draft.id)).markdown
    shot(page, "admin-draft-editor", full_page=True)

    editor.locator("[data-action=publish-draft]").click()
    editor.locator("[data-published]").wait_for()
    article = live.run(live.store.articles.get("canteen-menu-on-panels"))
    assert (
        article is not None and article.status == "published" and article.audience == "enterprise"
    )
    assert "Ask your workspace admin first." in article.body
    chunks = live.run(live.store.chunks.for_article("canteen-menu-on-panels"))
    assert chunks and all(c.status == "published" and c.embedding for c in chunks)
    assert live.run(live.store.drafts.get(draft.id)).status == "published"
    page.locator("#drafts-table tr", has_text="published").first.wait_for()
    shot(page, "admin-draft-published", full_page=True)
    assert js_errors(page) == []
