"""Finding 5: card masking missed dots and no-break spaces; agent replies and feedback were never
masked; emails, phones, IBANs and typed passwords were stored verbatim and copied onwards."""

from __future__ import annotations

import json
import logging

import pytest

from app.logs import JsonFormatter
from app.safety.pii import mask
from tests.apihelp import ADMIN, Api

CARD_DOTS = "4111.1111.1111.1111"
CARD_NBSP = "4111\u00a01111\u00a01111\u00a01111"
EMAIL = "dana.holt+billing@example.org"
PHONE = "+44 20 7946 0958"
IBAN = "DE89 3704 0044 0532 0130 00"
PASSWORD = "Tr0ub4dor&3"
SECRETS = (CARD_DOTS, CARD_NBSP, EMAIL, PHONE, "0532 0130 00", PASSWORD, "4111111111111111")


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"card {CARD_DOTS}", "card [card ending 1111]"),
        (f"card {CARD_NBSP}", "card [card ending 1111]"),
        (f"write to {EMAIL} today", "write to [email] today"),
        (f"call {PHONE} please", "call [phone] please"),
        (f"IBAN {IBAN}", "IBAN [IBAN ending 3000]"),
        (f"my password is {PASSWORD}", "my password is [password]"),
        (f"password {PASSWORD}", "password [password]"),
        ("my password is banana", "my password is [password]"),
        ("How do I change my password if I use SSO?", None),  # the sentence goes on
        ("I forgot my password when I came back", None),
        ("order ORD-1042 placed 2026-07-01, error AUTH-302", None),
        ("tracking 1Z999AA10123456784, 4111.1111.1111.1112 fails Luhn", None),
    ],
)
def test_mask_table(text: str, expected: str | None) -> None:
    assert mask(text) == (expected if expected is not None else text)


def test_masking_is_configurable_per_kind() -> None:
    assert mask(f"{EMAIL} {CARD_DOTS}", ["card"]) == f"{EMAIL} [card ending 1111]"
    assert mask(f"{EMAIL} {CARD_DOTS}", []) == f"{EMAIL} {CARD_DOTS}"


def test_nothing_typed_is_stored_verbatim_anywhere(api: Api) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    message = (
        f"My card {CARD_DOTS} and {CARD_NBSP} were charged twice, email {EMAIL}, call {PHONE}, "
        f"refund to {IBAN}; my password is {PASSWORD}"
    )
    out = api.send(h, conv, message)
    assert not _leaks(json.dumps(out))
    r = api.client.post(f"/v1/conversations/{conv}/handoff", headers=h)
    case_ref = r.json()["caseRef"]
    reply = f"Thanks, I called {PHONE} and emailed {EMAIL} about card 4111111111111111"
    r = api.client.post(
        f"/v1/admin/escalations/{case_ref}/reply",
        headers=ADMIN,
        json={"agent": "kim", "content": reply},
    )
    assert r.status_code == 200 and not _leaks(r.text)
    msgs = api.messages(conv)
    assistant = next(m for m in msgs if m["role"] == "assistant")
    api.client.post(
        f"/v1/conversations/{conv}/messages/{assistant['_id']}/feedback",
        headers=h,
        json={"helpful": False, "comment": f"reach me on {PHONE} or {EMAIL}"},
    )
    api.client.post(
        f"/v1/conversations/{conv}/feedback",
        headers=h,
        json={"resolved": False, "comment": f"card {CARD_DOTS}"},
    )

    async def stored() -> str:
        db = api.services.store.db
        docs = {}
        for name in ("messages", "escalations", "feedback", "conversations"):
            docs[name] = await db[name].find({}).to_list()
        return json.dumps(docs, default=str, ensure_ascii=False)

    everything = api.run(stored)
    assert "[card ending 1111]" in everything and "[email]" in everything
    assert not _leaks(everything), _leaks(everything)
    gaps = api.client.get("/v1/admin/gaps", headers=ADMIN).text
    assert not _leaks(gaps)


def test_logs_are_masked() -> None:
    record = logging.makeLogRecord(
        {"msg": f"customer wrote {EMAIL} and {CARD_DOTS}", "levelname": "INFO", "name": "x"}
    )
    record.detail = {"phone": PHONE, "iban": IBAN}
    line = JsonFormatter().format(record)
    assert not _leaks(line) and "[email]" in line
