"""One process owns the embedded store: an exclusive lock on a file in its data directory.

The embedded store lives in one process's memory (written through to a file), so a second
process opening the same data directory would hold a second, diverging copy: a conversation
created in one worker would not exist in the other. The lock makes that a start-up error.
It is an advisory `flock`, released by the kernel when the process exits, even on `kill -9`,
so a crashed server never leaves a stale lock behind; the owner's pid in the file is for people.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOCK_NAME = "concierge.lock"


class StoreInUse(RuntimeError):
    """Another process already owns this embedded store."""

    def __init__(self, data_dir: Path, owner: dict[str, Any]) -> None:
        self.data_dir = data_dir
        self.owner = owner
        who = f"process {owner['pid']}" if owner.get("pid") else "another process"
        if owner.get("host"):
            who += f" on {owner['host']}"
        super().__init__(
            f"the embedded store in {data_dir} is already owned by {who}; the embedded store "
            "serves exactly one process, so for more than one process or worker set MONGODB_URI "
            "to a MongoDB deployment"
        )


class StoreLock:
    """Held for the life of the process that opened the store; `release` on close."""

    def __init__(self, path: Path, fd: int, owner: dict[str, Any]) -> None:
        self.path = path
        self._fd: int | None = fd
        self.owner = owner

    @classmethod
    def acquire(cls, data_dir: Path) -> StoreLock:
        """Take the lock or raise `StoreInUse` at once (never waits)."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = read_owner(path)
            os.close(fd)
            raise StoreInUse(data_dir, owner) from None
        owner = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(owner).encode(), 0)
        return cls(path, fd, owner)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_owner(path: Path) -> dict[str, Any]:
    """Who holds the lock, as its owner wrote it (empty when unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
