"""The embedded store belongs to one process: a second process or uvicorn worker refuses to start.

These start real servers (`python -m uvicorn`, fake embedder) on 127.0.0.1, each bounded by a
timeout, and read what they print and how they exit.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from app.store import StoreInUse, open_store
from tests.serverproc import START_TIMEOUT_S, free_port, running, uvicorn, wait_until

REFUSAL = "for more than one process or worker set MONGODB_URI"


async def test_lock_is_exclusive_within_one_process_too(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, embedded_store="file", data_dir=tmp_path)  # type: ignore[call-arg]
    first = open_store(settings)
    with pytest.raises(StoreInUse) as info:
        open_store(settings)
    assert str(os.getpid()) in str(info.value) and "MONGODB_URI" in str(info.value)
    assert first.describe()["owner"]["pid"] == os.getpid()
    await first.close()


async def test_lock_is_released_on_close(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, embedded_store="file", data_dir=tmp_path)  # type: ignore[call-arg]
    first = open_store(settings)
    await first.close()
    second = open_store(settings)  # no longer refused
    await second.close()


@pytest.mark.integration
def test_second_process_on_the_same_store_refuses_with_one_line(tmp_path: Path) -> None:
    port_a, port_b = free_port(), free_port()
    with running(uvicorn(port_a, tmp_path)) as first:
        wait_until(port_a, first)
        ready = httpx.get(f"http://127.0.0.1:{port_a}/readyz", timeout=10).json()
        assert ready["storage"]["mode"] == "embedded-file"
        assert ready["storage"]["owner"]["pid"] == first.pid
        assert ready["storage"]["dataDir"] == str(tmp_path)
        with running(uvicorn(port_b, tmp_path)) as second:
            _, err = second.communicate(timeout=START_TIMEOUT_S)
            assert second.returncode == 3
            refusal = [line for line in err.splitlines() if REFUSAL in line]
            assert len(refusal) == 1, err
            assert f"process {first.pid}" in refusal[0]
            assert "Traceback" not in err
        # the owner kept serving
        assert httpx.get(f"http://127.0.0.1:{port_a}/healthz", timeout=5).status_code == 200


@pytest.mark.integration
def test_two_uvicorn_workers_without_mongodb_uri_refuse(tmp_path: Path) -> None:
    port = free_port()
    with running(uvicorn(port, tmp_path, "--workers", "2")) as server:
        # the whole server stops by itself (uvicorn's supervisor exits when a worker fails
        # before serving; it reports that with exit status 0, so the output is what we check)
        _, err = server.communicate(timeout=START_TIMEOUT_S)
        assert server.returncode is not None
        assert sum(REFUSAL in line for line in err.splitlines()) == 1, err
        assert "failed to start, stopping the parent process" in err
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
