"""Driver connection failures become our `StoreUnavailable` at the store's edge.

`guard(db)` wraps a database handle (PyMongo async or the embedded facade) so that every call
made through it — collection methods, awaited results, cursors and their iteration — raises
`StoreUnavailable` where the driver would raise `ConnectionFailure` (which covers
`AutoReconnect`, `NetworkTimeout` and `ServerSelectionTimeoutError`). Nothing outside
`app/store/` needs to know which driver is underneath.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from pymongo.errors import ConnectionFailure

from app.errors import StoreUnavailable


def guard(handle: Any) -> Any:
    """`handle` wrapped, unless it is already guarded or a plain value."""
    if isinstance(handle, _Guarded):
        return handle
    return _Guarded(handle)


def _wrap(value: Any) -> Any:
    if inspect.isawaitable(value):
        return _await(value)
    if hasattr(value, "__aiter__") or hasattr(value, "find_one"):  # a cursor or a collection
        return _Guarded(value)
    return value


async def _await(awaitable: Awaitable[Any]) -> Any:
    try:
        value = await awaitable
    except ConnectionFailure as exc:
        raise StoreUnavailable(str(exc)) from exc
    return _wrap(value)


def _call(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            value = fn(*args, **kwargs)
        except ConnectionFailure as exc:
            raise StoreUnavailable(str(exc)) from exc
        return _wrap(value)

    call.__name__ = getattr(fn, "__name__", "call")
    return call


class _Guarded:
    __slots__ = ("_iterator", "_target")

    def __init__(self, target: Any) -> None:
        self._target = target
        self._iterator: Any = None

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if inspect.ismethod(value) or inspect.isfunction(value):
            return _call(value)
        return _wrap(value)

    def __getitem__(self, name: str) -> Any:
        return _wrap(self._target[name])

    def __aiter__(self) -> _Guarded:
        self._iterator = self._target.__aiter__()
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._iterator.__anext__()
        except ConnectionFailure as exc:
            raise StoreUnavailable(str(exc)) from exc

    def __repr__(self) -> str:
        return f"guard({self._target!r})"
