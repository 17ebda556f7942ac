"""`kill -9` during 20 concurrent turns: after a restart every answered message is there.

A real server (durable embedded store in a temp dir, fake embedder) on 127.0.0.1 gets 20
conversations sending at once; once some turns have been answered and others are in flight, the
server is killed with SIGKILL, started again on the same directory, and every message that got a
200 must be there, in a transcript whose `seq` runs 1, 2, 3... with no hole. Bounded: two
messages per conversation at most, every wait has a timeout.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serverproc import free_port, running, uvicorn, wait_until

pytestmark = pytest.mark.integration

CONVERSATIONS = 20
MESSAGES_EACH = 2
KILL_AFTER_ANSWERED = 12
TIMEOUT = httpx.Timeout(60.0)


async def _converse(
    client: httpx.AsyncClient,
    token: str,
    conv: str,
    answered: list[dict[str, Any]],
    enough: asyncio.Event,
) -> None:
    h = {"Authorization": f"Bearer {token}"}
    for n in range(MESSAGES_EACH):
        try:
            r = await client.post(
                f"/v1/conversations/{conv}/messages",
                headers=h,
                json={"content": f"How do I reset the room panel? (try {n})"},
            )
        except httpx.HTTPError:
            return  # the server died under this request: it was never acknowledged
        if r.status_code != 200:
            return
        body = r.json()
        answered.append({"conv": conv, "token": token, **body})
        if len(answered) >= KILL_AFTER_ANSWERED:
            enough.set()


async def _load_then_kill(base: str, pid: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    answered: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=base, timeout=TIMEOUT) as client:
        owners: dict[str, str] = {}
        for _ in range(CONVERSATIONS):
            token = (await client.post("/v1/sessions", json={})).json()["sessionToken"]
            conv = (
                await client.post("/v1/conversations", headers={"Authorization": f"Bearer {token}"})
            ).json()["id"]
            owners[conv] = token
        enough = asyncio.Event()
        tasks = [
            asyncio.create_task(_converse(client, token, conv, answered, enough))
            for conv, token in owners.items()
        ]
        await asyncio.wait_for(enough.wait(), timeout=120)
        os.killpg(pid, signal.SIGKILL)  # mid-flight: other turns are still running
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    return answered, owners


@pytest.mark.integration
def test_kill_9_during_concurrent_turns_loses_no_answered_message(tmp_path: Path) -> None:
    port = free_port()
    with running(uvicorn(port, tmp_path)) as first:
        wait_until(port, first, "/readyz")
        answered, owners = asyncio.run(_load_then_kill(f"http://127.0.0.1:{port}", first.pid))
        first.wait(timeout=30)
    assert KILL_AFTER_ANSWERED <= len(answered) < CONVERSATIONS * MESSAGES_EACH, len(answered)

    port = free_port()
    with running(uvicorn(port, tmp_path)) as second:
        wait_until(port, second, "/readyz")
        base = f"http://127.0.0.1:{port}"
        transcripts: dict[str, list[dict[str, Any]]] = {}
        for conv, token in owners.items():
            r = httpx.get(
                f"{base}/v1/conversations/{conv}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            assert r.status_code == 200, (conv, r.text)  # the conversation itself survived
            transcripts[conv] = r.json()["messages"]

        for turn in answered:
            stored = {m["id"]: m for m in transcripts[turn["conv"]]}
            for key in ("userMessage", "reply"):
                sent = turn[key]
                assert sent["id"] in stored, f"{key} answered with 200 but lost after kill -9"
                assert stored[sent["id"]]["seq"] == sent["seq"]
                assert stored[sent["id"]]["content"] == sent["content"]
        for messages in transcripts.values():
            assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))

        # and the restarted server carries on where each conversation left off
        conv, token = next(iter(owners.items()))
        h = {"Authorization": f"Bearer {token}"}
        r = httpx.post(
            f"{base}/v1/conversations/{conv}/messages",
            headers=h,
            json={"content": "thanks"},
            timeout=60,
        )
        assert r.status_code == 200, r.text
        assert r.json()["userMessage"]["seq"] == len(transcripts[conv]) + 1
