"""The embedded store: mongomock-ng behind the awaitable surface of `pymongo.AsyncMongoClient`.

Only the subset our repositories use is exposed. Each call runs synchronously on the event loop
(which keeps mongomock on one thread and every single operation atomic, as on a server), then
yields to the loop once before returning (an error included), as a network driver's round trip
would: concurrent turns interleave between store calls here just as they do against MongoDB, so
a race a test can provoke in production can be provoked here too (`tests/test_store_races.py`).
`session=` is refused (`SessionsUnsupported`), not dropped: there are no transactions here, and
code that relied on one would pass every test and race in production.

With a data directory the store is durable: every call that changed documents writes them
through to SQLite (`journal`) before it returns, the file is loaded back at start, and an
exclusive lock (`lock`) makes the directory belong to one process. Without one it lives in
process memory only (tests).

The embedded store has no TTL monitor: `sweep_expired` stands in for it, driven by a timer (and
run once at load). mongomock's own expire-on-every-read is switched off: it scanned the whole
collection on every access, and a real server deletes expired documents on a timer too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mongomock_ng
from bson import ObjectId
from mongomock_ng import helpers
from mongomock_ng.store import CollectionStore, DatabaseStore, ServerStore

from app.store.journal import Journal
from app.store.lock import StoreLock

Doc = dict[str, Any]


# Fields with an equality index in memory: a query (or a unique-index check) naming one of them
# with a string value looks only at the documents holding that value, instead of mongomock's
# scan of the whole collection. Without it every turn's reads and inserts would cost time in
# proportion to every message ever stored, which a durable store keeps accumulating.
INDEXED_FIELDS = ("conversationId", "customerId", "articleId", "caseRef")
_SIMPLE_ID = (str, int, ObjectId)


class _TrackedCollection(CollectionStore):
    """mongomock's document map, noting which keys changed since the last flush, with hash
    indexes on `_id` (the map itself) and on `INDEXED_FIELDS`.

    The indexes only narrow the candidates; mongomock still applies the whole filter to each,
    so a stale entry costs a little time, never a wrong result.
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.dirty: set[Any] = set()
        self.dropped = False
        self._pos: dict[Any, int] = {}  # natural (insertion) order, to return candidates in it
        self._next = 0
        self._buckets: dict[str, dict[str, dict[Any, None]]] = {f: {} for f in INDEXED_FIELDS}
        self._odd: dict[Any, None] = {}  # an indexed field holding a non-string: always scanned
        self.restrict: list[Any] | None = None

    def __setitem__(self, key: Any, val: Any) -> None:
        old = self._documents.get(key)
        super().__setitem__(key, val)
        if old is not None and old is not val:
            self._unindex(key, old)
        self._index(key, val)
        self.dirty.add(key)

    def __delitem__(self, key: Any) -> None:
        old = self._documents.get(key)
        super().__delitem__(key)
        if old is not None:
            self._unindex(key, old)
        self._pos.pop(key, None)
        self.dirty.add(key)

    def drop(self) -> None:
        super().drop()
        self.dirty.clear()
        self.dropped = True
        self._pos.clear()
        self._odd.clear()
        for bucket in self._buckets.values():
            bucket.clear()

    def _index(self, key: Any, doc: Doc) -> None:
        if key not in self._pos:
            self._pos[key] = self._next
            self._next += 1
        for name, bucket in self._buckets.items():
            value = doc.get(name)
            if isinstance(value, str):
                bucket.setdefault(value, {})[key] = None
            elif value is not None:
                self._odd[key] = None

    def _unindex(self, key: Any, doc: Doc) -> None:
        for name, bucket in self._buckets.items():
            value = doc.get(name)
            if isinstance(value, str) and value in bucket:
                bucket[value].pop(key, None)
                if not bucket[value]:
                    del bucket[value]
        self._odd.pop(key, None)

    def _ordered(self, keys: dict[Any, None]) -> list[Any]:
        keys.update(self._odd)
        far = len(self._pos) + self._next
        return sorted(keys, key=lambda k: self._pos.get(k, far))

    def candidates(self, query: Any) -> list[Any] | None:
        """Keys of the only documents that can match `query`, or None to scan them all."""
        if not isinstance(query, Mapping):
            return None
        ident = query.get("_id")
        if isinstance(ident, _SIMPLE_ID) and not isinstance(ident, bool):
            return [ident]
        if isinstance(ident, Mapping) and set(ident) == {"$in"}:
            values = list(ident["$in"])
            if all(isinstance(v, _SIMPLE_ID) and not isinstance(v, bool) for v in values):
                return self._ordered(dict.fromkeys(values))
        for name, bucket in self._buckets.items():
            value = query.get(name)
            if isinstance(value, str):
                return self._ordered(dict(bucket.get(value, {})))
        return None

    def unique_candidates(self, doc: Doc) -> list[Any] | None:
        """Documents a unique-index check must compare `doc` with, or None for all of them."""
        keys: dict[Any, None] = {}
        for spec in self.indexes.values():
            if not spec.get("unique"):
                continue
            first = spec["key"][0][0]
            value = doc.get(first)
            if first not in self._buckets or not isinstance(value, str):
                return None
            keys.update(self._buckets[first].get(value, {}))
        return self._ordered(keys)

    @property
    def documents(self) -> Iterator[Doc]:
        if self.restrict is None:
            yield from super().documents
            return
        docs = self._documents
        for key in self.restrict:
            doc = docs.get(key)
            if doc is not None:
                yield doc

    def _remove_expired_documents(self) -> None:
        """Off: `sweep_expired` deletes expired documents on a timer, as MongoDB's monitor does."""

    def load(self, doc: Doc) -> None:
        """Put a stored document back without marking it changed."""
        key = doc["_id"]
        key = helpers.hashdict(key) if isinstance(key, dict) else key
        self._documents[key] = doc
        self._index(key, doc)


def _accelerate(coll: Any) -> Any:
    """Route one mongomock collection's scans through the in-memory indexes (see above)."""
    scan, uniques = coll._iter_documents, coll._ensure_uniques

    def iter_documents(query: Any) -> Any:
        store = coll._store
        keys = store.candidates(query)
        if keys is None:
            return scan(query)
        store.restrict = keys
        try:
            return scan(query)  # materialises its candidate list before returning
        finally:
            store.restrict = None

    def ensure_uniques(new_data: Doc) -> Any:
        store = coll._store
        keys = store.unique_candidates(new_data)
        if keys is None:
            return uniques(new_data)
        store.restrict = keys
        try:
            return uniques(new_data)
        finally:
            store.restrict = None

    coll._iter_documents = iter_documents
    coll._ensure_uniques = ensure_uniques
    return coll


class _TrackedDatabase(DatabaseStore):
    def __getitem__(self, col_name: str) -> _TrackedCollection:
        col = self._collections.get(col_name)
        if col is None:
            col = self._collections[col_name] = _TrackedCollection(col_name)
        return col

    def tracked(self) -> list[_TrackedCollection]:
        return list(self._collections.values())


class _TrackedServer(ServerStore):
    def __getitem__(self, db_name: str) -> _TrackedDatabase:
        db = self._databases.get(db_name)
        if db is None:
            db = self._databases[db_name] = _TrackedDatabase()
        return db


class _Persistence:
    """Flushes changed documents of one database to the journal (a no-op without one)."""

    def __init__(self, db_name: str, store: _TrackedDatabase, journal: Journal | None) -> None:
        self._db_name = db_name
        self._store = store
        self.journal = journal

    def flush(self) -> None:
        for col in self._store.tracked():
            if col.dropped:
                col.dropped = False
                if self.journal is not None:
                    self.journal.drop(f"{self._db_name}.{col.name}")
            if not col.dirty:
                continue
            keys, col.dirty = col.dirty, set()
            if self.journal is None:
                continue
            docs = col._documents
            upserts = [(k, docs[k]) for k in keys if k in docs]
            deletes = [k for k in keys if k not in docs]
            try:
                self.journal.write(f"{self._db_name}.{col.name}", upserts, deletes)
            except BaseException:
                col.dirty |= keys  # not in the file yet: the next write-through retries them
                raise


class SessionsUnsupported(NotImplementedError):
    """The embedded store has no sessions or transactions: a `session=` would be ignored, and
    code relying on one to make several writes atomic would pass here and race in production."""


def _no_session(kwargs: dict[str, Any]) -> dict[str, Any]:
    if kwargs.get("session") is not None:
        raise SessionsUnsupported(
            "the embedded store does not implement sessions or transactions; "
            "make the write atomic on its own (one update, a unique index) or run on MongoDB"
        )
    kwargs.pop("session", None)
    return kwargs


class EmbeddedCursor:
    """A cursor usable as `async for doc in cursor` and `await cursor.to_list()`."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._iter: Iterator[Doc] | None = None

    def sort(self, key_or_list: Any, direction: int | None = None) -> EmbeddedCursor:
        if direction is None:
            self._source = self._source.sort(key_or_list)
        else:
            self._source = self._source.sort(key_or_list, direction)
        return self

    def limit(self, n: int) -> EmbeddedCursor:
        self._source = self._source.limit(n)
        return self

    def skip(self, n: int) -> EmbeddedCursor:
        self._source = self._source.skip(n)
        return self

    def __aiter__(self) -> EmbeddedCursor:
        return self

    async def __anext__(self) -> Doc:
        if self._iter is None:
            self._iter = iter(self._source)
            await asyncio.sleep(0)  # the query's round trip
        try:
            return next(self._iter)
        except StopIteration:
            raise StopAsyncIteration from None

    async def to_list(self, length: int | None = None) -> list[Doc]:
        if self._iter is None:
            self._iter = iter(self._source)
        out: list[Doc] = []
        for doc in self._iter:
            out.append(doc)
            if length is not None and len(out) >= length:
                break
        await asyncio.sleep(0)
        return out

    async def close(self) -> None:
        self._iter = iter(())


class EmbeddedCollection:
    def __init__(self, inner: Any, persistence: _Persistence) -> None:
        self._c = inner
        self._persistence = persistence
        self.name: str = inner.name

    def find(self, *args: Any, **kwargs: Any) -> EmbeddedCursor:
        return EmbeddedCursor(self._c.find(*args, **_no_session(kwargs)))

    async def aggregate(
        self, pipeline: Sequence[Mapping[str, Any]], **kwargs: Any
    ) -> EmbeddedCursor:
        try:
            try:
                docs = list(self._c.aggregate(list(pipeline), **_no_session(kwargs)))
            finally:
                self._persistence.flush()  # $out / $merge write
        finally:
            await asyncio.sleep(0)  # the round trip, an error reply included
        return EmbeddedCursor(docs)

    async def list_indexes(self) -> EmbeddedCursor:
        info = self._c.index_information()
        await asyncio.sleep(0)
        return EmbeddedCursor([{"name": name, **spec} for name, spec in info.items()])

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._c, name)
        if not callable(method):
            return method
        persistence = self._persistence

        async def call(*args: Any, **kwargs: Any) -> Any:
            # the operation and its write-through run with no await between them (atomic)
            try:
                try:
                    result = method(*args, **_no_session(kwargs))
                finally:
                    persistence.flush()
            finally:
                await asyncio.sleep(0)  # the round trip, an error reply (duplicate key) included
            return result

        call.__name__ = name
        return call


class EmbeddedDatabase:
    def __init__(self, inner: Any, persistence: _Persistence) -> None:
        self._db = inner
        self._persistence = persistence
        self.name: str = inner.name
        self._collections: dict[str, EmbeddedCollection] = {}

    def __getitem__(self, name: str) -> EmbeddedCollection:
        if name not in self._collections:
            inner = _accelerate(self._db[name])
            self._collections[name] = EmbeddedCollection(inner, self._persistence)
        return self._collections[name]

    def __getattr__(self, name: str) -> EmbeddedCollection:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    async def list_collection_names(self) -> list[str]:
        names = list(self._db.list_collection_names())
        await asyncio.sleep(0)
        return names

    async def drop_collection(self, name: str) -> None:
        self._db.drop_collection(name)
        self._persistence.flush()
        self._collections.pop(name, None)
        await asyncio.sleep(0)

    async def command(self, command: str | Mapping[str, Any], **kwargs: Any) -> Doc:
        _no_session(kwargs)
        name = command if isinstance(command, str) else next(iter(command))
        await asyncio.sleep(0)
        if name == "ping":
            return {"ok": 1.0}
        raise NotImplementedError(f"embedded store does not run the {name!r} command")

    async def sweep_expired(self, now: datetime | None = None) -> int:
        """Delete documents whose TTL field has passed, for every TTL index (expireAfterSeconds)."""
        now = now or datetime.now(UTC)
        removed = 0
        for coll_name in self._db.list_collection_names():
            coll = self._db[coll_name]
            for spec in coll.index_information().values():
                if "expireAfterSeconds" not in spec:
                    continue
                field = spec["key"][0][0]
                cutoff = now.timestamp() - float(spec["expireAfterSeconds"])
                cutoff_dt = datetime.fromtimestamp(cutoff, UTC)
                removed += coll.delete_many({field: {"$lte": cutoff_dt}}).deleted_count
        self._persistence.flush()
        await asyncio.sleep(0)
        return removed


class EmbeddedClient:
    """Stands in for `AsyncMongoClient` in embedded mode.

    `data_dir=None`: process memory only, gone on exit. With a directory: takes its lock (raises
    `StoreInUse` if another process holds it), loads the stored documents, and writes every
    change through to the file.
    """

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir
        self.lock: StoreLock | None = None
        self.journal: Journal | None = None
        self._server = _TrackedServer()
        self._client: Any = mongomock_ng.MongoClient(tz_aware=True, _store=self._server)
        self._persistence: dict[str, _Persistence] = {}
        self.loaded = 0
        if data_dir is None:
            return
        self.lock = StoreLock.acquire(data_dir)
        try:
            self.journal = Journal(data_dir)
            self.loaded = self._load(self.journal)
        except BaseException:
            self.lock.release()
            raise

    @property
    def mode(self) -> str:
        return "memory" if self.data_dir is None else "file"

    def _load(self, journal: Journal) -> int:
        """Every stored document back into memory (`db.collection` names in the file)."""
        count = 0
        for name, doc in journal.load():
            db_name, _, coll = name.partition(".")
            self._server[db_name][coll].load(doc)
            count += 1
        return count

    def __getitem__(self, name: str) -> EmbeddedDatabase:
        if name not in self._persistence:
            self._persistence[name] = _Persistence(name, self._server[name], self.journal)
        return EmbeddedDatabase(self._client[name], self._persistence[name])

    def get_database(self, name: str) -> EmbeddedDatabase:
        return self[name]

    def owner(self) -> dict[str, Any]:
        """Which process owns this store (for /readyz)."""
        return dict(self.lock.owner) if self.lock else {}

    async def close(self) -> None:
        self._client.close()
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        if self.lock is not None:
            self.lock.release()
