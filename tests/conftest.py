"""Shared fixtures. Tests never reach the network: a guard refuses non-loopback connections."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.providers.embeddings.fake import FakeEmbedder
from app.settings import Settings
from app.store import Store, open_store

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_real_connect = socket.socket.connect
_ATLAS_URI = os.environ.get("MONGODB_URI")


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    allowed = {"127.0.0.1", "::1", "localhost"}
    if (
        isinstance(host, str)
        and host not in allowed
        and not host.startswith("/")
        and not _ATLAS_URI
    ):
        raise RuntimeError(f"tests must not reach the network (tried {address!r})")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_atlas = pytest.mark.skip(reason="MONGODB_URI not set")
    for item in items:
        if "atlas" in item.keywords and not _ATLAS_URI:
            item.add_marker(skip_atlas)


@pytest.fixture
def settings() -> Settings:
    return Settings(mongodb_uri=None, embedder="fake", seed_on_start=False, _env_file=None)  # type: ignore[call-arg]


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[Store]:
    s = open_store(settings)
    yield s
    await s.close()


def _backends() -> list[Any]:
    params: list[Any] = [pytest.param("embedded", id="embedded")]
    params.append(pytest.param("atlas", id="atlas", marks=pytest.mark.atlas))
    return params


@pytest.fixture(params=_backends())
async def any_store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """The contract suite's store: embedded always, a real cluster when MONGODB_URI is set."""
    if request.param == "embedded":
        s = open_store(Settings(mongodb_uri=None, _env_file=None))  # type: ignore[call-arg]
        yield s
        await s.close()
        return
    name = f"concierge_test_{uuid.uuid4().hex[:8]}"
    s = open_store(Settings(mongodb_uri=_ATLAS_URI, mongodb_db=name, _env_file=None))  # type: ignore[call-arg]
    try:
        yield s
    finally:
        await s.client.drop_database(name)
        await s.close()
