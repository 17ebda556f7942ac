"""The embedded store belongs to one process: a second process or uvicorn worker refuses to start.

These start real servers (`python -m uvicorn`, fake embedder) on 127.0.0.1, each bounded by a
timeout, and read what they print and how they exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from app.store import StoreInUse, open_store

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 90.0
REFUSAL = "for more than one process or worker set MONGODB_URI"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    env.update(
        EMBEDDED_STORE="file",
        DATA_DIR=str(data_dir),
        EMBEDDER="fake",
        EMBEDDING_CACHE_DIR="",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


def _uvicorn(port: int, data_dir: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *extra]
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@contextlib.contextmanager
def _running(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)  # reap it and close its pipes


def _wait_up(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate(timeout=5)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError("server did not come up in time")


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


def test_second_process_on_the_same_store_refuses_with_one_line(tmp_path: Path) -> None:
    port_a, port_b = _port(), _port()
    with _running(_uvicorn(port_a, tmp_path)) as first:
        _wait_up(port_a, first)
        ready = httpx.get(f"http://127.0.0.1:{port_a}/readyz", timeout=10).json()
        assert ready["storage"]["mode"] == "embedded-file"
        assert ready["storage"]["owner"]["pid"] == first.pid
        assert ready["storage"]["dataDir"] == str(tmp_path)
        with _running(_uvicorn(port_b, tmp_path)) as second:
            _, err = second.communicate(timeout=START_TIMEOUT_S)
            assert second.returncode == 3
            refusal = [line for line in err.splitlines() if REFUSAL in line]
            assert len(refusal) == 1, err
            assert f"process {first.pid}" in refusal[0]
            assert "Traceback" not in err
        # the owner kept serving
        assert httpx.get(f"http://127.0.0.1:{port_a}/healthz", timeout=5).status_code == 200


def test_two_uvicorn_workers_without_mongodb_uri_refuse(tmp_path: Path) -> None:
    port = _port()
    with _running(_uvicorn(port, tmp_path, "--workers", "2")) as server:
        # the whole server stops by itself (uvicorn's supervisor exits when a worker fails
        # before serving; it reports that with exit status 0, so the output is what we check)
        _, err = server.communicate(timeout=START_TIMEOUT_S)
        assert server.returncode is not None
        assert sum(REFUSAL in line for line in err.splitlines()) == 1, err
        assert "failed to start, stopping the parent process" in err
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
