"""`ARTICLES_DIR=path make run`: the app serves a folder of docs, and nothing else."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.apihelp import make_settings, running_app

pytestmark = pytest.mark.integration

RAW_SYNTAX = re.compile(r"\[\[|\]\]|\[![a-z]+\]|^:::|^!!! |&lt;!--|%%|\{/\*|&lt;Tab", re.M)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    _write(
        tmp_path,
        "Sync/Security and privacy.md",
        "---\ndescription: How your notes are protected.\n---\n"
        "Notes are encrypted end to end.\n\n## Where are the servers?\n\n"
        "> [!abstract] Server regions\n> **Europe**: Frankfurt\n> **Asia**: Singapore\n"
        "^regions\n",
    )
    _write(
        tmp_path,
        "Sync/Sync regions.md",
        "Move your vault to another region.\n\n## Available regions\n\n"
        "![[Security and privacy#^regions]]\n\n## Change region\n\n"
        "> [!warning] Back up first\n> Changing region deletes the remote [[Version history]].\n"
        "<!-- internal: update when a region is added -->\n",
    )
    _write(
        tmp_path,
        "Sync/Version history.md",
        "Version history keeps old copies of your notes.\n\n"
        "| Plan | Kept for |\n|---|---|\n| Standard | 1 month |\n| Plus | 12 months |\n",
    )
    _write(
        tmp_path,
        "guides/keyboard.mdx",
        "import Tabs from '@theme/Tabs';\n\n# Keyboard shortcuts\n\n"
        "<Tabs>\n<TabItem value='mac' label='macOS'>\nPress Cmd+P to open the command palette.\n"
        "</TabItem>\n</Tabs>\n\n:::tip Faster\nPin the commands you use most.\n:::\n",
    )
    _write(tmp_path, "guides/export.md", "# Export\n\n!!! note\n    Use **Export to PDF**.\n")
    return tmp_path


def test_the_app_serves_the_folder_and_answers_from_it(folder: Path) -> None:
    with running_app(articles_dir=folder, seed_on_start=True) as api:
        services = api.services

        async def counts() -> list[int]:
            db = services.store.db
            names = ("kb_articles", "customers", "orders", "subscriptions", "tickets")
            return [await db[name].count_documents({}) for name in names]

        assert api.run(counts) == [5, 0, 0, 0, 0]  # the folder, and no demo company at all

        for slug in ("sync-regions", "security-and-privacy", "keyboard", "export"):
            page = api.client.get(f"/help/{slug}")
            assert page.status_code == 200, slug
            assert not RAW_SYNTAX.search(page.text), (slug, RAW_SYNTAX.findall(page.text))
        regions = api.client.get("/help/sync-regions").text
        assert "Frankfurt" in regions and "Singapore" in regions  # the embedded block
        assert 'href="/help/version-history"' in regions  # the wiki-link
        assert "internal: update" not in regions

        headers = api.session()
        conv = api.conversation(headers)
        api.send(headers, conv, "Which regions are the sync servers in?")
        stored = api.messages(conv)[-1]
        assert stored["role"] == "assistant"
        assert stored["meta"]["escalated"] is False
        assert not RAW_SYNTAX.search(stored["content"])

        async def region_chunks() -> set[str]:
            found = services.store.db["kb_chunks"].find({"text": {"$regex": "Frankfurt"}})
            return {c["_id"] for c in await found.to_list()}

        passages = {p["id"] for p in stored["meta"]["passages"]}
        assert passages & api.run(region_chunks)  # the embedded region list was retrieved


def test_a_folder_with_no_loadable_article_says_why_it_is_not_ready(tmp_path: Path) -> None:
    _write(tmp_path, "bad.md", "---\naudience: partners\n---\nBody\n")
    app = create_app(make_settings(articles_dir=tmp_path, seed_on_start=True))
    with TestClient(app) as client:
        deadline = time.monotonic() + 60
        while "error" not in (body := client.get("/readyz").json()):
            assert time.monotonic() < deadline, body
            time.sleep(0.05)
        assert body["ready"] is False
        assert "ARTICLES_DIR" in body["error"] and "1 files rejected" in body["error"]
        assert "unknown audience 'partners'" in body["error"]


def test_a_docs_folder_gets_its_own_durable_store_that_follows_the_folder(
    folder: Path, tmp_path: Path
) -> None:
    settings = make_settings(articles_dir=folder, embedded_store="file", data_dir=tmp_path)
    assert settings.data_dir.parent == tmp_path
    assert settings.data_dir.name.startswith("docs-")  # never the demo company's store

    store_dir = tmp_path / "data"
    with running_app(
        articles_dir=folder, seed_on_start=True, embedded_store="file", data_dir=store_dir
    ) as api:

        async def slugs() -> set[str]:
            return {a.slug for a in await api.services.store.articles.list()}

        assert api.run(slugs) == {
            "sync-regions",
            "security-and-privacy",
            "version-history",
            "keyboard",
            "export",
        }
    (folder / "guides" / "export.md").unlink()
    _write(folder, "guides/import.md", "# Import\n\nDrop files in.\n")
    with running_app(
        articles_dir=folder, seed_on_start=True, embedded_store="file", data_dir=store_dir
    ) as api:
        assert api.run(slugs) == {
            "sync-regions",
            "security-and-privacy",
            "version-history",
            "keyboard",
            "import",
        }


def test_a_docs_only_deployment_has_no_order_or_subscription_tools(folder: Path) -> None:
    with running_app(articles_dir=folder, seed_on_start=True) as api:
        headers = api.session()
        for text in ("Where is my order ORD-1042?", "When does my subscription renew?"):
            conv = api.conversation(headers)
            api.send(headers, conv, text)
            meta = api.messages(conv)[-1]["meta"]
            assert meta["intent"] != "order_status"
            used = {t["tool"] for t in meta.get("tools", [])}
            assert not used & {"lookupOrder", "listRecentOrders", "lookupSubscription"}, used


def test_without_customer_data_shrinks_the_closed_sets() -> None:
    from app.turn.clamp import Condensation, without_customer_data

    cond = Condensation(
        standalone_question="Where is order ORD-1042?",
        intent="order_status",
        needs_retrieval=True,
        needs_tools=("lookupOrder", "lookupCase"),
        sentiment="neutral",
        mentioned_order_id="ORD-1042",
        explicit_human_request=False,
    )
    out = without_customer_data(cond)
    assert (out.intent, out.needs_tools, out.mentioned_order_id) == ("other", ("lookupCase",), None)
    assert {"intent", "needs_tools"} <= set(out.clamped_fields)
    how_to = Condensation("How do I export?", "how_to", True, (), "neutral", None, False)
    assert without_customer_data(how_to) is how_to


@pytest.mark.parametrize(
    ("tenant_file", "escalates"),
    [
        (None, True),  # no tenant file: the generic profile escalates every policy intent
        ("escalateIntents: [refund_request, human_handoff]\n", False),  # this tenant: not legal
    ],
)
def test_which_policy_intents_escalate_comes_from_the_folders_tenant_file(
    folder: Path, tenant_file: str | None, escalates: bool
) -> None:
    if tenant_file is not None:
        (folder / "tenant.yaml").write_text(tenant_file, encoding="utf-8")
    with running_app(articles_dir=folder, seed_on_start=True) as api:

        async def published() -> int:
            return await api.services.store.articles.count({"status": "published"})

        assert api.run(published) == 5  # tenant.yaml is configuration, not an article
        headers = api.session()
        conv = api.conversation(headers)
        api.send(headers, conv, "My lawyer says your sync regions page is wrong.")
        meta = api.messages(conv)[-1]["meta"]
        assert meta["intent"] == "legal"  # a policy phrase of the generic profile
        assert meta["escalated"] is escalates
        assert bool(api.escalations(conv)) is escalates


def test_a_tenant_can_narrow_the_policy_set_but_never_widen_it() -> None:
    from app.turn.escalate import policy_escalates
    from tuning import TUNING

    assert policy_escalates("legal", TUNING)  # no tenant data: the design's closed set
    assert not policy_escalates("legal", TUNING, {"refund_request"})
    assert policy_escalates("refund_request", TUNING, {"refund_request"})
    assert not policy_escalates("how_to", TUNING, {"how_to"})  # not a policy intent at all
