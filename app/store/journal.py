"""The embedded store's file: every document written through to SQLite, loaded back at start.

One table, one row per document: `(collection, _id) -> BSON`. Each call on the embedded store
that changes documents commits the changed documents (and deletes the removed ones) in one
transaction before the call returns, so anything a request was told is stored survives a crash.
WAL mode with `synchronous=NORMAL`: a commit is in the OS before the call returns (a killed
process loses nothing); a power cut may lose the last few commits, never corrupt the file.

Indexes are not stored: they come from `atlas_indexes/` at every start (`ensure_regular_indexes`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bson
from bson.codec_options import CodecOptions

FILE_NAME = "concierge.sqlite3"
# mongomock keeps datetimes naive (UTC) inside; decode them the same way
_CODEC: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=False)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    coll TEXT NOT NULL,
    id   BLOB NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (coll, id)
) WITHOUT ROWID
"""


def row_id(key: Any) -> bytes:
    """A document's `_id` as a stable byte key (str, ObjectId, int or a sub-document)."""
    return bson.encode({"k": key})


@dataclass
class WriteStats:
    """What the journal wrote: the figures the write-cost benchmark reads."""

    commits: int = 0
    documents: int = 0
    deletes: int = 0
    bytes: int = 0
    by_collection: dict[str, int] = field(default_factory=dict)


class Journal:
    """Write-through persistence for the embedded store (one process owns it: see `lock`)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self.stats = WriteStats()

    def load(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every stored document, as `(collection, document)`."""
        for coll, body in self._db.execute("SELECT coll, body FROM docs ORDER BY coll"):
            yield coll, bson.decode(body, codec_options=_CODEC)

    def write(
        self, coll: str, upserts: Iterable[tuple[Any, dict[str, Any]]], deletes: Iterable[Any]
    ) -> None:
        """Store these documents (by key) and remove those keys, in one transaction."""
        rows = [(coll, row_id(key), bson.encode(doc)) for key, doc in upserts]
        gone = [(coll, row_id(key)) for key in deletes]
        if not rows and not gone:
            return
        with self._transaction():
            if rows:
                self._db.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?, ?)", rows)
            if gone:
                self._db.executemany("DELETE FROM docs WHERE coll = ? AND id = ?", gone)
        written = sum(len(r[2]) for r in rows)
        s = self.stats
        s.commits += 1
        s.documents += len(rows)
        s.deletes += len(gone)
        s.bytes += written
        s.by_collection[coll] = s.by_collection.get(coll, 0) + written

    def drop(self, coll: str) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM docs WHERE coll = ?", (coll,))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Commit on success, roll back on error (the connection is in autocommit mode)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
