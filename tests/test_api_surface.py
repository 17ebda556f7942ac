"""Every endpoint's success and failure paths (DESIGN 10, issue 5)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jwt
import pytest

from app.links import article_url, link_key
from tests.apihelp import ADMIN, Api, running_app

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app() as api:
        yield api


def test_health_and_openapi(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}
    ready = api.client.get("/readyz").json()
    assert ready["ready"] is True and ready["store"] is True
    assert ready["searchIndexes"]["backend"] == "local"  # embedded: LocalSearch, no Atlas indexes
    paths = api.client.get("/openapi.json").json()["paths"]
    assert "/v1/conversations/{conversation_id}/messages" in paths
    assert api.client.get("/docs").status_code == 200


def _unsigned(claims: dict[str, object]) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


@pytest.mark.parametrize(
    "token_factory",
    [
        lambda s: jwt.encode(
            {"sub": "cus_castellan", "exp": datetime.now(UTC) + timedelta(minutes=5)},
            "wrong-secret-wrong-secret-wrong-secret",
            algorithm="HS256",
        ),
        lambda s: jwt.encode(
            {"sub": "cus_castellan", "exp": datetime.now(UTC) - timedelta(minutes=5)},
            s,
            algorithm="HS256",
        ),
        lambda s: jwt.encode({"sub": "cus_castellan"}, s, algorithm="HS256"),  # no exp
        lambda s: "not-a-jwt",
        lambda s: _unsigned(  # alg "none", otherwise valid: only the missing signature is wrong
            {
                "sub": "cus_castellan",
                "exp": int((datetime.now(UTC) + timedelta(minutes=5)).timestamp()),
            }
        ),
    ],
    ids=["forged", "expired", "no-exp", "garbage", "alg-none"],
)
def test_bad_identity_is_401_never_a_fallback(api: Api, token_factory) -> None:  # type: ignore[no-untyped-def]
    secret = api.services.settings.identity_secret.get_secret_value()
    r = api.client.post("/v1/sessions", json={"identityToken": token_factory(secret)})
    assert r.status_code == 401
    assert r.json()["detail"]


def test_customer_routes_need_a_valid_session(api: Api) -> None:
    assert api.client.post("/v1/conversations").status_code == 401
    bad = {"Authorization": "Bearer nonsense"}
    assert api.client.post("/v1/conversations", headers=bad).status_code == 401
    expired = jwt.encode(
        {"sid": "x", "cid": "cus_castellan", "exp": datetime.now(UTC) - timedelta(seconds=1)},
        api.services.settings.session_secret.get_secret_value(),
        algorithm="HS256",
    )
    r = api.client.post("/v1/conversations", headers={"Authorization": f"Bearer {expired}"})
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_someone_elses_conversation_is_404(api: Api) -> None:
    mine = api.session("cus_castellan")
    conv = api.conversation(mine)
    api.send(mine, conv, "hello")
    for other in (api.session("cus_tidewater"), api.session(None)):
        assert api.client.get(f"/v1/conversations/{conv}", headers=other).status_code == 404
        r = api.client.post(
            f"/v1/conversations/{conv}/messages", headers=other, json={"content": "hi"}
        )
        assert r.status_code == 404
        assert (
            api.client.post(f"/v1/conversations/{conv}/handoff", headers=other, json={}).status_code
            == 404
        )
    assert len(api.messages(conv)) == 2  # nothing was added by the intruders
    got = api.client.get(f"/v1/conversations/{conv}", headers=mine).json()
    assert [m["role"] for m in got["messages"]] == ["user", "assistant"]


def test_body_limits_and_malformed_json(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    url = f"/v1/conversations/{conv}/messages"
    big = api.client.post(
        url,
        headers={**h, "Content-Type": "application/json"},
        content=b'{"content": "' + b"a" * 70_000 + b'"}',
    )
    assert big.status_code == 413 and "too large" in big.json()["detail"]
    bad = api.client.post(
        url, headers={**h, "Content-Type": "application/json"}, content=b'{"content": "unterminated'
    )
    assert bad.status_code == 422 and "JSON" in bad.json()["detail"]
    missing = api.client.post(url, headers=h, json={"text": "wrong field"})
    assert missing.status_code == 422 and "content" in missing.json()["detail"]
    assert api.messages(conv) == []


def test_feedback_is_stored_and_unknown_message_is_404(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    reply = api.send(h, conv, "How do I reset my password?")["reply"]
    r = api.client.post(
        f"/v1/conversations/{conv}/messages/{reply['id']}/feedback",
        headers=h,
        json={"helpful": False, "comment": "did not work"},
    )
    assert r.status_code == 200
    r = api.client.post(
        f"/v1/conversations/{conv}/messages/nope/feedback", headers=h, json={"helpful": True}
    )
    assert r.status_code == 404
    r = api.client.post(f"/v1/conversations/{conv}/feedback", headers=h, json={"resolved": True})
    assert r.status_code == 200

    async def read() -> list[dict[str, object]]:
        cur = api.services.store.db["feedback"].find({"conversationId": conv}).sort("createdAt", 1)
        return list(await cur.to_list())

    fb = api.run(read)
    assert fb[0]["helpful"] is False and fb[0]["messageId"] == reply["id"]
    assert fb[1]["resolved"] is True
    assert api.conversation_doc(conv)["resolved"] is True


def test_admin_routes_require_the_token(api: Api) -> None:
    for path in ("/v1/admin/metrics", "/v1/admin/gaps", "/v1/admin/escalations"):
        assert api.client.get(path).status_code == 401
        assert api.client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert api.client.get(path, headers=ADMIN).status_code == 200
    assert api.client.delete("/v1/admin/customers/cus_x").status_code == 401


def test_escalation_queue_claim_reply_resolve(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    api.send(h, conv, "How do I set up SSO?")
    r = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
    case = r.json()["caseRef"]
    assert r.json()["message"]["meta"]["caseRef"] == case
    again = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={}).json()
    assert again["caseRef"] == case  # one open case per conversation
    queue = api.client.get("/v1/admin/escalations?status=open", headers=ADMIN).json()
    packet = next(e for e in queue["escalations"] if e["caseRef"] == case)
    assert packet["breached"] is False and packet["customer"]["plan"] == "enterprise"
    assert packet["attempted"]["passages"], "the packet shows what the bot already tried"
    detail = api.client.get(f"/v1/admin/escalations/{case}", headers=ADMIN).json()
    assert [m["role"] for m in detail["messages"]][:2] == ["user", "assistant"]
    assert (
        api.client.post(
            f"/v1/admin/escalations/{case}/claim", headers=ADMIN, json={"agent": "ana"}
        ).status_code
        == 200
    )
    assert (
        api.client.post(
            f"/v1/admin/escalations/{case}/claim", headers=ADMIN, json={"agent": "bo"}
        ).status_code
        == 409
    )
    assert (
        api.client.post(
            f"/v1/admin/escalations/{case}/reply",
            headers=ADMIN,
            json={"agent": "ana", "content": "On it."},
        ).status_code
        == 200
    )
    assert (
        api.client.post(f"/v1/admin/escalations/{case}/resolve", headers=ADMIN).status_code == 200
    )
    assert (
        api.client.post(f"/v1/admin/escalations/{case}/resolve", headers=ADMIN).status_code == 409
    )
    assert api.client.get("/v1/admin/escalations/CASE-ZZZZZZ", headers=ADMIN).status_code == 404
    # after resolution the assistant answers again
    assert api.send(h, conv, "thanks!")["reply"] is not None


def test_metrics_and_gaps(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    api.send(h, conv, "Does Harborline integrate with my coffee machine?")
    api.client.post(f"/v1/conversations/{conv}/feedback", headers=h, json={"resolved": True})
    m = api.client.get("/v1/admin/metrics", headers=ADMIN).json()
    t = m["totals"]
    assert t["conversations"] >= 1
    assert t["deflected"] == t["conversations"] - t["escalated"]
    assert t["unconfirmedDeflections"] == t["deflected"] - t["resolved"]
    assert 0 <= t["resolutionRate"] <= t["deflectionRate"] <= 1
    assert m["perDay"] and m["perDay"][-1]["date"] == datetime.now(UTC).date().isoformat()
    assert set(m["confidenceMix"]) == {"strong", "weak", "none"}
    assert m["spend"]["capReached"] is False
    gaps = api.client.get("/v1/admin/gaps", headers=ADMIN).json()["gaps"]
    assert gaps == sorted(gaps, key=lambda g: -g["count"])
    for g in gaps:
        assert g["count"] >= 1 and len(g["examples"]) <= 5
    r = api.client.get("/v1/admin/metrics?from=2026-12-10&to=2026-12-01", headers=ADMIN)
    assert r.status_code == 422


def test_gdpr_delete_removes_everything_about_a_customer(api: Api) -> None:
    h = api.session("cus_quillfeather")
    conv = api.conversation(h)
    api.send(h, conv, "Where is my order?")
    api.client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
    r = api.client.delete("/v1/admin/customers/cus_quillfeather", headers=ADMIN)
    deleted = r.json()["deleted"]
    assert deleted["customers"] == 1 and deleted["conversations"] == 1
    assert deleted["messages"] >= 3 and deleted["escalations"] == 1
    assert api.messages(conv) == []
    # Signing in again (the host still knows them) starts from nothing: a new, empty record.
    r = api.client.post("/v1/sessions", json={"identityToken": api.identity("cus_quillfeather")})
    assert r.status_code == 200 and r.json()["customer"]["name"] == ""
    fresh = {"Authorization": f"Bearer {r.json()['sessionToken']}"}
    assert api.client.get(f"/v1/conversations/{conv}", headers=fresh).status_code == 404


def test_help_pages_respect_audience(api: Api) -> None:
    assert api.client.get("/help/reset-password").status_code == 200
    assert api.client.get("/help/audit-logs").status_code == 404  # enterprise-only, no token
    assert api.client.get("/help/floor-plan-heatmaps-beta").status_code == 404  # draft
    secret = link_key(api.services.settings)
    url = article_url("audit-logs", "enterprise", secret)
    page = api.client.get(url)
    assert page.status_code == 200 and "400 days" in page.text
    other = article_url("data-residency", "enterprise", secret).split("?")[1]
    assert api.client.get(f"/help/audit-logs?{other}").status_code == 404


def test_rate_limit_per_session(api: Api) -> None:
    h = api.session("cus_harrowgate")
    conv = api.conversation(h)
    limit = api.services.tuning.rate_limit_session_per_minute
    codes = []
    for _ in range(2 * limit + 2):  # a window may roll over once mid-test
        r = api.client.post(
            f"/v1/conversations/{conv}/messages", headers=h, json={"content": "thanks"}
        )
        codes.append(r.status_code)
        if r.status_code == 429:
            assert int(r.headers["Retry-After"]) >= 1
            break
    assert 429 in codes
    # every accepted message was answered; the refused one was not stored
    stored = api.messages(conv)
    assert len(stored) == 2 * codes.count(200)


def test_cors_lets_a_listed_host_site_embed_the_widget() -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from tests.apihelp import make_settings

    app = create_app(make_settings(cors_origins=["https://shop.example.com"], seed_on_start=False))
    with TestClient(app) as client:
        preflight = {
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        }
        r = client.options(
            "/v1/sessions", headers={"Origin": "https://shop.example.com", **preflight}
        )
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://shop.example.com"
        assert "authorization" in r.headers["access-control-allow-headers"].lower()
        r = client.options("/v1/sessions", headers={"Origin": "https://evil.example", **preflight})
        assert "access-control-allow-origin" not in r.headers


def test_flagged_article_can_be_reviewed_and_unpublished() -> None:
    from tests.apihelp import running_app as fresh_app

    with fresh_app() as api:
        flagged = api.client.get("/v1/admin/reviews", headers=ADMIN).json()["articles"]
        assert [a["slug"] for a in flagged] == ["room-panel-cleaning"]
        assert flagged[0]["reviewFlags"]
        assert api.client.get("/v1/admin/reviews").status_code == 401
        r = api.client.post(
            "/v1/admin/articles/nope/review",
            headers=ADMIN,
            json={"reviewer": "kim", "decision": "approve"},
        )
        assert r.status_code == 404
        r = api.client.post(
            "/v1/admin/articles/room-panel-cleaning/review",
            headers=ADMIN,
            json={"reviewer": "kim", "decision": "unpublish"},
        )
        assert r.status_code == 200 and r.json()["article"]["status"] == "draft"
        assert api.client.get("/help/room-panel-cleaning").status_code == 404
        chunks = api.run(api.services.store.chunks.for_article, "room-panel-cleaning")
        assert chunks and all(c.status == "draft" for c in chunks)
        # gone from every ranker, immediately
        from app.turn.entitlement import filter_for_customer

        filt = filter_for_customer("enterprise", "en", api.services.tuning)
        hits = api.run(api.services.search.bm25_articles, "clean room panel disinfectant", filt, 30)
        assert "room-panel-cleaning" not in {h.doc_id for h in hits}


def test_root_redirects_to_the_demo_in_demo_mode_else_to_the_docs() -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from tests.apihelp import make_settings

    for demo, target in ((True, "/demo"), (False, "/docs")):
        app = create_app(make_settings(demo=demo, seed_on_start=False))
        with TestClient(app) as client:
            r = client.get("/", follow_redirects=False)
        assert (r.status_code, r.headers["location"]) == (307, target)


def test_api_reference_loads_only_local_assets(api: Api) -> None:
    html = api.client.get("/docs").text
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) >= 2 and "<script>" not in html  # no inline code either
    for url in assets:
        assert url.startswith("/docs-assets/"), url
        assert api.client.get(url).status_code == 200, url


def test_every_operation_declares_its_response_schema(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    operations = [(m, p, op) for p, ops in spec["paths"].items() for m, op in ops.items()]
    assert len(operations) >= 20  # the demo route exists only with DEMO=1
    for method, path, op in operations:
        ok = next(v for k, v in op["responses"].items() if k.startswith("2"))
        ref = ok["content"]["application/json"]["schema"]["$ref"]
        model = schemas[ref.rsplit("/", 1)[1]]
        assert model["type"] == "object" and model["properties"], (method, path)
        assert model.get("additionalProperties") is False, (method, path)  # no silent drift


def test_demo_page_is_the_tenants_own_else_a_generic_one(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from tests.apihelp import make_settings

    tenant_page = Path(__file__).resolve().parent.parent / "seed" / "web" / "demo.html"
    generic_page = Path(__file__).resolve().parent.parent / "app" / "web" / "static" / "demo.html"
    for extra, expected in (
        ({}, tenant_page),  # the seed ships its stand-in site
        ({"articles_dir": tmp_path, "data_dir": tmp_path / "data"}, generic_page),  # docs only
    ):
        app = create_app(make_settings(demo=True, seed_on_start=False, **extra))
        with TestClient(app, client=("127.0.0.1", 40000)) as client:
            r = client.get("/demo")
        assert r.status_code == 200, r.text
        assert r.text == expected.read_text(encoding="utf-8")
        assert "default-src" in r.headers["content-security-policy"]
    assert tenant_page.read_text(encoding="utf-8") != generic_page.read_text(encoding="utf-8")
