"""Real servers in child processes (`python -m uvicorn`, fake embedder) on 127.0.0.1, bounded."""

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

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(data_dir: Path) -> dict[str, str]:
    """The durable embedded store in `data_dir`, fake embedder, quiet logs."""
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    env.update(
        EMBEDDED_STORE="file",
        DATA_DIR=str(data_dir),
        EMBEDDER="fake",
        EMBEDDING_CACHE_DIR="",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
        # not the published defaults: outside demo mode the server refuses to start with those
        IDENTITY_SECRET="test-identity-secret-0123456789abcdef",
        SESSION_SECRET="test-session-secret-0123456789abcdef",
        ADMIN_TOKEN="test-admin-token",
    )
    return env


def uvicorn(port: int, data_dir: Path, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *extra]
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=server_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@contextlib.contextmanager
def running(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """Stops the server (its whole process group) however the block ends."""
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


def wait_until(port: int, proc: subprocess.Popen[str], path: str = "/healthz") -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate(timeout=5)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError(f"server did not answer {path} in time")
