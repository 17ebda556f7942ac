"""The server side of the embed: identity claims that fit real sites (numeric `sub`, `aud`,
`iss`, `kid`, profile claims that create or update the customer), sign-out that ends a
session at once, an anonymous visitor's language, and how widget.js is delivered."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import pytest

from tests.apihelp import Api, running_app

SECRET = "test-identity-secret-0123456789abcdef"
ROTATED = "rotated-identity-secret-0123456789abcd"


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(
        identity_keys={"2026-11": ROTATED},
        identity_audience="concierge",
        identity_issuer="https://shop.example",
    ) as api:
        yield api


def token(claims: dict[str, Any], key: str = SECRET, kid: str | None = None) -> str:
    base: dict[str, Any] = {
        "aud": "concierge",
        "iss": "https://shop.example",
        "iat": datetime.now(UTC),
        "exp": datetime.now(UTC) + timedelta(minutes=5),
    }
    headers = {"kid": kid} if kid else None
    return jwt.encode({**base, **claims}, key, algorithm="HS256", headers=headers)


def sign_in(api: Api, identity: str) -> Any:
    return api.client.post("/v1/sessions", json={"identityToken": identity})


def test_unknown_sub_creates_the_customer_from_claims(api: Api) -> None:
    r = sign_in(
        api,
        token(
            {
                "sub": "host-user-77",
                "name": "Ada Byron",
                "email": "ada@example.com",
                "plan": "Pro",
                "locale": "de-AT",
            }
        ),
    )
    assert r.status_code == 200, r.text
    assert r.json()["customer"] == {
        "id": "host-user-77",
        "name": "Ada Byron",
        "plan": "pro",
        "locale": "de",
    }
    stored = api.run(api.services.store.customers.get, "host-user-77")
    assert stored is not None
    assert (stored.name, stored.email, stored.plan, stored.locale) == (
        "Ada Byron",
        "ada@example.com",
        "pro",
        "de",
    )


def test_known_customer_is_updated_and_an_unknown_plan_is_the_free_rung(api: Api) -> None:
    assert sign_in(api, token({"sub": "host-user-78", "plan": "platinum"})).status_code == 200
    created = api.run(api.services.store.customers.get, "host-user-78")
    assert created is not None and created.plan == "free" and created.locale == "en"
    assert (
        sign_in(
            api, token({"sub": "host-user-78", "name": "Grace", "plan": "enterprise"})
        ).status_code
        == 200
    )
    updated = api.run(api.services.store.customers.get, "host-user-78")
    assert updated is not None and (updated.name, updated.plan) == ("Grace", "enterprise")


def test_numeric_sub_is_a_customer_id(api: Api) -> None:
    r = sign_in(api, token({"sub": 4217}))
    assert r.status_code == 200, r.text
    assert r.json()["customer"]["id"] == "4217"


@pytest.mark.parametrize(
    ("claims", "key", "kid", "says"),
    [
        ({"sub": "u1", "aud": "someone-else"}, SECRET, None, "audience"),
        ({"sub": "u1", "iss": "https://evil.example"}, SECRET, None, "issuer"),
        ({"sub": "u1"}, SECRET, "2025-01", "kid"),
        ({"sub": True}, SECRET, None, "sub"),
        ({"sub": "u1"}, ROTATED, None, "invalid"),  # rotated key without its kid
    ],
    ids=["wrong-aud", "wrong-iss", "unknown-kid", "boolean-sub", "key-without-kid"],
)
def test_rejections_name_the_claim_at_fault(
    api: Api, claims: dict[str, Any], key: str, kid: str | None, says: str
) -> None:
    r = sign_in(api, token(claims, key, kid))
    assert r.status_code == 401
    assert says in r.json()["detail"]


def test_a_rotated_key_is_chosen_by_kid(api: Api) -> None:
    assert sign_in(api, token({"sub": "host-user-79"}, ROTATED, "2026-11")).status_code == 200


def test_missing_aud_or_iss_is_refused_when_configured(api: Api) -> None:
    now = datetime.now(UTC)
    bare = jwt.encode({"sub": "u2", "exp": now + timedelta(minutes=5)}, SECRET, algorithm="HS256")
    assert sign_in(api, bare).status_code == 401


def test_signed_out_session_cannot_read_the_conversation(api: Api) -> None:
    r = sign_in(api, token({"sub": "host-user-80"}))
    headers = {"Authorization": f"Bearer {r.json()['sessionToken']}"}
    conv = api.conversation(headers)
    api.send(headers, conv, "How do I reset my password?")
    assert api.client.get(f"/v1/conversations/{conv}", headers=headers).status_code == 200
    assert api.client.delete("/v1/sessions/current", headers=headers).json() == {"ok": True}
    after = api.client.get(f"/v1/conversations/{conv}", headers=headers)
    assert after.status_code == 401 and "signed out" in after.json()["detail"]
    # A new session for the same customer still reaches their own record.
    renewed = sign_in(api, token({"sub": "host-user-80"})).json()["sessionToken"]
    again = {"Authorization": f"Bearer {renewed}"}
    assert api.client.get(f"/v1/conversations/{conv}", headers=again).status_code == 200


def test_an_anonymous_visitor_gets_articles_in_their_language(api: Api) -> None:
    r = api.client.post("/v1/sessions", json={"locale": "de-DE"})
    assert r.status_code == 200
    headers = {"Authorization": f"Bearer {r.json()['sessionToken']}"}
    conv = api.conversation(headers)
    reply = api.send(headers, conv, "Wie setze ich mein Passwort zurück?")["reply"]
    docs = [p for p in reply["meta"]["passages"] if p["kind"] == "doc"]
    assert docs, reply["content"]
    locales = {api.run(article_locale, api, p["docId"]) for p in docs}
    assert locales == {"de"}
    # English is still what a visitor without a language gets.
    plain = api.session(None)
    english = api.send(plain, api.conversation(plain), "How do I reset my password?")["reply"]
    assert {
        api.run(article_locale, api, p["docId"])
        for p in english["meta"]["passages"]
        if p["kind"] == "doc"
    } == {"en"}
    assert api.client.post("/v1/sessions", json={"locale": "<script>"}).status_code == 422


async def article_locale(api: Api, doc_id: str) -> str | None:
    doc = await api.services.store.db["kb_articles"].find_one({"_id": doc_id})
    return None if doc is None else str(doc["locale"])


def test_widget_js_is_compressed_cached_and_revalidated(api: Api) -> None:
    plain = api.client.get("/widget.js", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    raw = api.client.get("/widget.js", headers={"Accept-Encoding": "gzip"})
    assert raw.headers["content-encoding"] == "gzip"
    assert "Accept-Encoding" in raw.headers["vary"]
    assert "max-age=300" in raw.headers["cache-control"]
    assert int(raw.headers["content-length"]) < len(plain.content) / 3
    assert raw.text == plain.text  # the same script, decoded
    br = api.client.get("/widget.js", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert br.headers["content-encoding"] == "br"
    assert int(br.headers["content-length"]) < int(raw.headers["content-length"])
    assert br.text == plain.text
    assert br.headers["etag"] != raw.headers["etag"] != plain.headers["etag"]
    no_br = api.client.get("/widget.js", headers={"Accept-Encoding": "br;q=0, gzip"})
    assert no_br.headers["content-encoding"] == "gzip"
    etag = raw.headers["etag"]
    again = api.client.get("/widget.js", headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    head = api.client.head("/widget.js", headers={"Accept-Encoding": "gzip"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == etag
    version = plain.text.split("const VERSION = '", 1)[1].split("'", 1)[0]
    pinned = api.client.get(f"/widget-{version}.js")
    assert pinned.status_code == 200 and pinned.text == plain.text
    assert "immutable" in pinned.headers["cache-control"]
    assert api.client.get("/widget-0.0.1.js").status_code == 404


def test_the_read_mark_lives_on_the_server_and_only_moves_forward(api: Api) -> None:
    h = api.session(None)
    conv = api.conversation(h)
    api.send(h, conv, "How do I reset my password?")  # seq 1 and 2

    def read_seq() -> int:
        return int(api.client.get(f"/v1/conversations/{conv}", headers=h).json()["readSeq"])

    def mark(seq: int, headers: dict[str, str] = h) -> Any:
        return api.client.post(f"/v1/conversations/{conv}/read", headers=headers, json={"seq": seq})

    assert read_seq() == 0
    assert mark(2).json() == {"ok": True} and read_seq() == 2
    assert mark(1).status_code == 200 and read_seq() == 2  # never backwards
    assert mark(99).status_code == 200 and read_seq() == 2  # never past the last message
    assert mark(1, api.session(None)).status_code == 404  # someone else's
