"""Finding 2: any website could sign in as any customer through the demo token minting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.errors import Misconfigured
from app.main import create_app
from app.settings import Settings
from tests.apihelp import make_settings

ROOT = Path(__file__).resolve().parents[2]
EVIL = {"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}


def _client(client_host: str = "127.0.0.1", **overrides: object) -> TestClient:
    settings = make_settings(**{"seed_on_start": True, **overrides})
    return TestClient(create_app(settings), client=(client_host, 50000))


def test_without_demo_mode_there_is_no_token_minting_and_no_demo_page() -> None:
    with _client() as client:
        assert client.get("/v1/demo/customers").status_code == 404
        assert client.get("/demo").status_code == 404
        assert "/v1/demo/customers" not in client.get("/openapi.json").json()["paths"]


def test_cors_is_same_origin_by_default() -> None:
    with _client(seed_on_start=False) as client:
        r = client.options(
            "/v1/sessions", headers={**EVIL, "Access-Control-Request-Method": "POST"}
        )
        assert "access-control-allow-origin" not in r.headers
        r = client.get("/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers


def test_demo_mode_answers_loopback_only() -> None:
    with _client("203.0.113.7", demo=True) as remote:
        assert remote.get("/v1/demo/customers").status_code == 404
        assert remote.get("/demo").status_code == 404
    with _client("127.0.0.1", demo=True) as local:
        r = local.get("/v1/demo/customers")
        assert r.status_code == 200 and r.json()["customers"][0]["identityToken"]
        assert local.get("/demo").status_code == 200


def test_a_forwarded_header_does_not_make_a_remote_client_local() -> None:
    with _client("203.0.113.7", demo=True, trusted_proxies=[]) as remote:
        r = remote.get("/v1/demo/customers", headers={"X-Forwarded-For": "127.0.0.1"})
        assert r.status_code == 404


def test_published_default_secrets_refused_outside_demo_mode() -> None:
    defaults = Settings(_env_file=None, mongodb_uri=None, embedder="fake")  # type: ignore[call-arg]
    with pytest.raises(Misconfigured, match="ADMIN_TOKEN"):
        create_app(defaults)
    weak = make_settings(admin_token="short")
    with pytest.raises(Misconfigured, match="ADMIN_TOKEN"):
        create_app(weak)
    with pytest.raises(Misconfigured, match="IDENTITY_KEYS"):
        create_app(make_settings(identity_keys={"2026-11": "short"}))
    create_app(defaults.model_copy(update={"demo": True}))  # the local demo may use them


def test_make_run_is_the_demo_and_ignores_forwarded_headers() -> None:
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert run is not None
    recipe = run.group(1)
    assert "DEMO=1" in recipe and "--no-proxy-headers" in recipe
