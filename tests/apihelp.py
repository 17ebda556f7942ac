"""Drive the real app through HTTP (TestClient) and read what it stored."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from fastapi.testclient import TestClient

from app.identity import mint_identity
from app.main import create_app
from app.services import Services
from app.settings import Settings
from tuning import TUNING, Tuning

T = TypeVar("T")
ADMIN = {"Authorization": "Bearer test-admin-token"}


def make_settings(**overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "mongodb_uri": None,
        "embedder": "fake",
        "admin_token": "test-admin-token",
        "identity_secret": "test-identity-secret-0123456789abcdef",
        "session_secret": "test-session-secret-0123456789abcdef",
        "ttl_sweep_seconds": 3600,
        "allowed_hosts": ["testserver", "127.0.0.1", "localhost"],
        "_env_file": None,
    }
    base.update(overrides)
    return Settings(**base)


class Api:
    def __init__(self, client: TestClient) -> None:
        self.client = client

    @property
    def services(self) -> Services:
        services: Services = self.client.app.state.services  # type: ignore[attr-defined]
        return services

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run a coroutine function on the app's event loop (to read or change the store)."""
        portal = self.client.portal
        assert portal is not None
        return portal.call(fn, *args)

    def identity(self, customer_id: str, minutes: int = 10) -> str:
        return mint_identity(
            customer_id, self.services.settings.identity_secret.get_secret_value(), minutes
        )

    def session(self, customer_id: str | None = None) -> dict[str, str]:
        body = {"identityToken": self.identity(customer_id)} if customer_id else {}
        r = self.client.post("/v1/sessions", json=body)
        assert r.status_code == 200, r.text
        return {"Authorization": f"Bearer {r.json()['sessionToken']}"}

    def conversation(self, headers: dict[str, str]) -> str:
        r = self.client.post("/v1/conversations", headers=headers)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def send(self, headers: dict[str, str], conv: str, text: str) -> dict[str, Any]:
        r = self.client.post(
            f"/v1/conversations/{conv}/messages", headers=headers, json={"content": text}
        )
        assert r.status_code == 200, r.text
        return dict(r.json())

    def stream(self, headers: dict[str, str], conv: str, text: str) -> list[tuple[str, Any]]:
        r = self.client.post(
            f"/v1/conversations/{conv}/messages",
            headers={**headers, "Accept": "text/event-stream"},
            json={"content": text},
        )
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("text/event-stream")
        return parse_sse(r.text)

    def messages(self, conv: str) -> list[dict[str, Any]]:
        async def read() -> list[dict[str, Any]]:
            cur = self.services.store.db["messages"].find({"conversationId": conv}).sort("seq", 1)
            return list(await cur.to_list())

        return self.run(read)

    def ask(self, question: str, customer_id: str | None = None) -> dict[str, Any]:
        """One question in a new conversation; the stored assistant message that answered it."""
        headers = self.session(customer_id)
        conv = self.conversation(headers)
        self.send(headers, conv, question)
        reply = self.messages(conv)[-1]
        assert reply["role"] == "assistant"
        return reply

    def conversation_doc(self, conv: str) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            doc = await self.services.store.db["conversations"].find_one({"_id": conv})
            assert doc is not None
            return dict(doc)

        return self.run(read)

    def escalations(self, conv: str) -> list[dict[str, Any]]:
        async def read() -> list[dict[str, Any]]:
            cur = self.services.store.db["escalations"].find({"conversationId": conv})
            return list(await cur.to_list())

        return self.run(read)


def parse_sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        event, data = "message", ""
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        events.append((event, json.loads(data) if data else None))
    return events


@contextmanager
def running_app(
    tuning: Tuning = TUNING, *, ready_seconds: float = 600, **overrides: Any
) -> Iterator[Api]:
    # Readiness includes seeding with the real MiniLM, which on a shared 2-core machine under load
    # has taken over two minutes; the bound only has to stop a run that would never get ready.
    app = create_app(make_settings(**overrides), tuning=tuning)
    with TestClient(app) as client:
        api = Api(client)
        deadline = time.monotonic() + ready_seconds
        while True:
            r = client.get("/readyz")
            if r.status_code == 200:
                break
            assert time.monotonic() < deadline, f"app never became ready: {r.json()}"
            time.sleep(0.1)
        yield api


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    import socket
    import threading

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    # A long keep-alive: with the default 5 s, a pooled client connection can be closed by the
    # server just as the client reuses it (a client-side race that shows up under load).
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_keep_alive=120,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
