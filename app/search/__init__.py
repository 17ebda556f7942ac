"""The two search backends behind one interface: `LocalSearch` (embedded) and `AtlasSearch`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.search.atlas import AtlasSearch
from app.search.base import Hit, SearchBackend, SearchError
from app.search.local import LocalSearch
from tuning import TUNING, Tuning

if TYPE_CHECKING:
    from app.store import Store


async def open_search(store: Store, tuning: Tuning = TUNING) -> SearchBackend:
    """`LocalSearch` over the embedded store's contents, else `AtlasSearch` on the cluster.

    A `LocalSearch` is a snapshot: call its `refresh()` after (re-)ingesting.
    """
    if store.embedded:
        return await LocalSearch.build(store, tuning)
    return AtlasSearch(store.db, tuning)


__all__ = ["AtlasSearch", "Hit", "LocalSearch", "SearchBackend", "SearchError", "open_search"]
