"""Finding 8: no security headers (the admin page and its buttons could be framed), and the Host
header was echoed into the trailing-slash redirect."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.apihelp import Api, make_settings


@pytest.fixture(scope="module")
def demo() -> Iterator[TestClient]:
    app = create_app(make_settings(demo=True, seed_on_start=False))
    with TestClient(app, client=("127.0.0.1", 5000)) as client:
        yield client


@pytest.mark.parametrize("path", ["/admin", "/demo"])
def test_pages_cannot_be_framed_and_carry_a_csp(demo: TestClient, path: str) -> None:
    r = demo.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_help_pages_and_api_responses_carry_headers(api: Api) -> None:
    page = api.client.get("/help/reset-password")
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "<style>" not in page.text  # styles come from /static, which the CSP allows
    assert api.client.get("/static/help.css").status_code == 200
    r = api.client.get("/healthz")
    assert r.headers["x-content-type-options"] == "nosniff"


def test_foreign_host_is_refused_and_never_echoed(demo: TestClient) -> None:
    r = demo.get("/admin", headers={"Host": "evil.example"})
    assert r.status_code == 400
    r = demo.get("/v1/admin/metrics/", headers={"Host": "127.0.0.1"}, follow_redirects=False)
    assert r.status_code == 404 and "location" not in r.headers
    r = demo.get("/admin/", headers={"Host": "evil.example"}, follow_redirects=False)
    assert r.status_code == 400 and "evil.example" not in r.headers.get("location", "")
