"""The embedded store: mongomock-ng behind the awaitable surface of `pymongo.AsyncMongoClient`.

Only the subset our repositories use is exposed. Calls run synchronously on the event loop (the
store is in memory and every call is short), which also keeps mongomock on one thread.
The embedded store has no TTL monitor: `sweep_expired` stands in for it, driven by a timer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import mongomock_ng

Doc = dict[str, Any]


def _drop_session(kwargs: dict[str, Any]) -> dict[str, Any]:
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
        try:
            return next(self._iter)
        except StopIteration:
            raise StopAsyncIteration from None

    async def to_list(self, length: int | None = None) -> list[Doc]:
        out: list[Doc] = []
        async for doc in self:
            out.append(doc)
            if length is not None and len(out) >= length:
                break
        return out

    async def close(self) -> None:
        self._iter = iter(())


class EmbeddedCollection:
    def __init__(self, inner: Any) -> None:
        self._c = inner
        self.name: str = inner.name

    def find(self, *args: Any, **kwargs: Any) -> EmbeddedCursor:
        return EmbeddedCursor(self._c.find(*args, **_drop_session(kwargs)))

    async def aggregate(
        self, pipeline: Sequence[Mapping[str, Any]], **kwargs: Any
    ) -> EmbeddedCursor:
        return EmbeddedCursor(list(self._c.aggregate(list(pipeline), **_drop_session(kwargs))))

    async def list_indexes(self) -> EmbeddedCursor:
        info = self._c.index_information()
        return EmbeddedCursor([{"name": name, **spec} for name, spec in info.items()])

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._c, name)
        if not callable(method):
            return method

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **_drop_session(kwargs))

        call.__name__ = name
        return call


class EmbeddedDatabase:
    def __init__(self, inner: Any) -> None:
        self._db = inner
        self.name: str = inner.name
        self._collections: dict[str, EmbeddedCollection] = {}

    def __getitem__(self, name: str) -> EmbeddedCollection:
        if name not in self._collections:
            self._collections[name] = EmbeddedCollection(self._db[name])
        return self._collections[name]

    def __getattr__(self, name: str) -> EmbeddedCollection:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    async def list_collection_names(self) -> list[str]:
        return list(self._db.list_collection_names())

    async def drop_collection(self, name: str) -> None:
        self._db.drop_collection(name)
        self._collections.pop(name, None)

    async def command(self, command: str | Mapping[str, Any], **_: Any) -> Doc:
        name = command if isinstance(command, str) else next(iter(command))
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
        return removed


class EmbeddedClient:
    """Stands in for `AsyncMongoClient` in embedded mode (process memory, lost on exit)."""

    def __init__(self) -> None:
        self._client: Any = mongomock_ng.MongoClient(tz_aware=True)

    def __getitem__(self, name: str) -> EmbeddedDatabase:
        return EmbeddedDatabase(self._client[name])

    def get_database(self, name: str) -> EmbeddedDatabase:
        return self[name]

    async def close(self) -> None:
        self._client.close()
