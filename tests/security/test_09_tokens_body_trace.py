"""Finding 9: article view links were 7-day bearer links signed with the session key and not tied
to a plan; a chunked body over the limit got 400, not 413; the customer-facing trace carried
exception text and spend-cap state."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import jwt

from app.identity import article_view_token
from app.links import article_url, link_key
from app.providers.chat.fake import ScriptedChatModel
from app.providers.errors import ProviderError
from tests.apihelp import Api


def test_old_style_view_token_signed_with_the_session_key_is_refused(api: Api) -> None:
    session_key = api.services.settings.session_secret.get_secret_value()
    week = datetime.now(UTC) + timedelta(days=7)
    old = jwt.encode({"slug": "audit-logs", "exp": week, "typ": "article"}, session_key, "HS256")
    assert api.client.get(f"/help/audit-logs?v={old}").status_code == 404
    # a session token is not a view token either
    h = api.session("cus_castellan")["Authorization"].split()[1]
    assert api.client.get(f"/help/audit-logs?v={h}").status_code == 404


def test_view_token_is_bound_to_slug_plan_and_time(api: Api) -> None:
    key = link_key(api.services.settings)
    assert key != api.services.settings.session_secret.get_secret_value()
    good = article_url("audit-logs", "enterprise", key)
    assert api.client.get(good).status_code == 200
    pro = article_view_token("audit-logs", "pro", key)  # a pro viewer's token, enterprise page
    assert api.client.get(f"/help/audit-logs?v={pro}").status_code == 404
    other = article_view_token("data-residency", "enterprise", key)
    assert api.client.get(f"/help/audit-logs?v={other}").status_code == 404
    expired = article_view_token("audit-logs", "enterprise", key, minutes=-1)
    assert api.client.get(f"/help/audit-logs?v={expired}").status_code == 404
    claims = jwt.decode(good.split("v=")[1], key, algorithms=["HS256"])
    assert claims["exp"] - datetime.now(UTC).timestamp() <= 3600 + 5


def test_chunked_body_over_the_limit_is_413(api: Api) -> None:
    h = api.session()
    conv = api.conversation(h)
    limit = api.services.tuning.max_body_bytes

    def chunks() -> Iterator[bytes]:
        yield b'{"content": "'
        for _ in range(limit // 1000 + 2):
            yield b"x" * 1000
        yield b'"}'

    r = api.client.post(
        f"/v1/conversations/{conv}/messages",
        headers={**h, "Content-Type": "application/json"},
        content=chunks(),
    )
    assert r.status_code == 413, r.text
    assert api.messages(conv) == []


def test_customer_trace_has_no_exception_text_or_spend_state(api: Api) -> None:
    broken = ProviderError("upstream said: sk-live-secret at 10.2.3.4")
    original = api.services.chat_model
    api.services.chat_model = ScriptedChatModel.always(broken, name="anthropic:broken")
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        out = api.send(h, conv, "How do I update the room panel firmware?")
    finally:
        api.services.chat_model = original
    public = out["reply"]["meta"]
    assert "fallbackReason" not in public and "spendCapReached" not in public
    assert "sk-live-secret" not in str(out) and public["fallback"] is True
    polled = api.client.get(f"/v1/conversations/{conv}/messages", headers=h).json()
    assert "sk-live-secret" not in str(polled) and "spendCapReached" not in str(polled)
    stored = api.messages(conv)[-1]["meta"]
    assert "spendCapReached" in stored  # operators still have it


def test_citation_links_carry_the_customers_plan(api: Api) -> None:
    from types import SimpleNamespace

    from app.turn.engine import _citation_meta

    hit = SimpleNamespace(
        passage_id="audit-logs#0", breadcrumb="Audit logs", audience="enterprise", page=None
    )
    answer = SimpleNamespace(
        citations=({"n": 1, "passageId": "audit-logs#0", "docId": "audit-logs", "kind": "doc"},)
    )
    meta = _citation_meta(api.services, answer, [SimpleNamespace(hit=hit)], "enterprise")  # type: ignore[arg-type]
    url = meta[0]["url"]
    claims = jwt.decode(url.split("v=")[1], link_key(api.services.settings), algorithms=["HS256"])
    assert claims["plan"] == "enterprise" and claims["slug"] == "audit-logs"
    assert api.client.get(url).status_code == 200
    free = _citation_meta(api.services, answer, [SimpleNamespace(hit=hit)], "free")  # type: ignore[arg-type]
    assert api.client.get(free[0]["url"]).status_code == 404  # a free plan's link opens nothing
