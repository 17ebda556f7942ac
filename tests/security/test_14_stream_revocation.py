"""Issue 41, item 6: a stream opened before sign-out kept delivering messages stored after it."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from app.main import create_app
from tests.apihelp import ADMIN, make_settings, served
from tests.security.conftest import ROOMY


async def _read_events(client: httpx.AsyncClient, url: str, h: dict[str, str]) -> list[str]:
    lines: list[str] = []
    async with client.stream("GET", url, headers={**h, "Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            lines.append(line)
    return lines


@pytest.mark.integration
def test_sign_out_closes_every_open_stream_of_the_session() -> None:
    app = create_app(make_settings(), tuning=ROOMY)
    with served(app) as base:
        deadline = time.monotonic() + 300
        while httpx.get(f"{base}/readyz", timeout=30).status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.2)

        async def main() -> tuple[list[list[str]], float, list[dict[str, object]]]:
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                s = (await client.post("/v1/sessions", json={})).json()
                h = {"Authorization": f"Bearer {s['sessionToken']}"}
                conv = (await client.post("/v1/conversations", headers=h)).json()["id"]
                r = await client.post(f"/v1/conversations/{conv}/handoff", headers=h)
                case_ref = r.json()["caseRef"]
                url = f"/v1/conversations/{conv}/messages?after=100"
                streams = [asyncio.create_task(_read_events(client, url, h)) for _ in range(2)]
                await asyncio.sleep(1.5)  # both streams are open and listening
                started = time.monotonic()
                assert (await client.delete("/v1/sessions/current", headers=h)).status_code == 200
                reply = {"agent": "kim", "content": "SECRET-AFTER-SIGNOUT reply from a person"}
                r = await client.post(
                    f"/v1/admin/escalations/{case_ref}/reply", headers=ADMIN, json=reply
                )
                assert r.status_code == 200
                done = await asyncio.wait_for(asyncio.gather(*streams), 20)
                took = time.monotonic() - started
                stored = await client.get(f"/v1/admin/escalations/{case_ref}", headers=ADMIN)
                return done, took, stored.json()["messages"]

        events, took, stored = asyncio.run(main())
    # the message was stored after sign-out ...
    assert any("SECRET-AFTER-SIGNOUT" in str(m["content"]) for m in stored)
    # ... and neither stream delivered it; both ended at the sign-out, not at their ~25 s end
    for lines in events:
        assert not any("SECRET-AFTER-SIGNOUT" in line for line in lines)
        assert "event: end" in lines
    assert took < 10, took
