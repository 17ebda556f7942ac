"""A fake Voyage AI API: a real HTTP server on 127.0.0.1 (aiohttp), so the voyageai SDK runs its
own request code — sessions, timeouts, status handling — against it.

`POST /v1/embeddings` and `POST /v1/rerank` answer in Voyage's response shapes
(`{"object": "list", "data": [...], "model", "usage": {"total_tokens"}}`) from deterministic
content, or — per scripted `mode` — hang forever, answer 429 with `retry-after`, 401, 503. Every
request (path, headers, JSON body) is recorded with the client port it came from, so a test
can tell a reused (pooled) connection from a new one.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

API_KEY = "pa-test-key"


def vector(text: str, dimensions: int) -> list[float]:
    raw = [
        int.from_bytes(hashlib.sha256(f"{text}|{i}".encode()).digest()[:4], "big") / 2**32 - 0.5
        for i in range(dimensions)
    ]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


@dataclass
class FakeVoyage:
    modes: deque[str] = field(default_factory=deque)  # "ok" | "hang" | "429" | "401" | "503"
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    client_ports: list[int] = field(default_factory=list)  # one per request: same = reused
    retry_after: str = "1"
    base_url: str = ""
    width: int | None = None  # force a wrong vector width

    def script(self, *modes: str) -> FakeVoyage:
        self.modes.extend(modes)
        return self

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append((request.path, dict(request.headers), body))
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.client_ports.append(int(peer[1]) if peer else -1)
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return web.json_response({"detail": "Provided API key is invalid."}, status=401)
        mode = self.modes.popleft() if self.modes else "ok"
        if mode == "hang":
            await asyncio.sleep(3600)
        if mode == "429":
            return web.json_response(
                {"detail": "Rate limit exceeded"},
                status=429,
                headers={"retry-after": self.retry_after},
            )
        if mode == "401":
            return web.json_response({"detail": "Provided API key is invalid."}, status=401)
        if mode == "503":
            return web.json_response({"detail": "Service unavailable"}, status=503)
        if request.path.endswith("/embeddings"):
            dims = self.width or int(body.get("output_dimension") or 1024)
            data = [
                {"object": "embedding", "embedding": vector(t, dims), "index": i}
                for i, t in enumerate(body["input"])
            ]
        else:
            query_words = set(body["query"].lower().split())
            scored = [
                (i, len(query_words & set(d.lower().split())) / (len(query_words) or 1))
                for i, d in enumerate(body["documents"])
            ]
            scored.sort(key=lambda x: -x[1])
            data = [{"index": i, "relevance_score": round(s, 4)} for i, s in scored]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"total_tokens": 10 * len(data)},
            }
        )

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[FakeVoyage]:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._handle)
        app.router.add_post("/v1/rerank", self._handle)

        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        try:
            yield self
        finally:
            await runner.cleanup()
