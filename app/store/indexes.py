"""Create the indexes defined in `atlas_indexes/`, idempotently.

Regular indexes work on both backends. Search indexes exist only on a cluster with `mongot`
(Atlas or MongoDB 8.2+); in embedded mode `LocalSearch` builds its in-process equivalents.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymongo.operations import SearchIndexModel

from app.settings import ROOT

log = logging.getLogger(__name__)
INDEX_DIR = ROOT / "atlas_indexes"
SEARCH_INDEX_FILES = ("kb_chunks_vector.json", "kb_articles_search.json", "tickets_vector.json")


@dataclass(frozen=True)
class SearchIndexDef:
    name: str
    collection: str
    type: str
    definition: dict[str, Any]


def load_regular(index_dir: Path = INDEX_DIR) -> list[dict[str, Any]]:
    data = json.loads((index_dir / "regular.json").read_text())
    return list(data["indexes"])


def load_search(index_dir: Path = INDEX_DIR, dimensions: int | None = None) -> list[SearchIndexDef]:
    """Search index definitions, with `numDimensions` set from the active embedder."""
    out = []
    for name in SEARCH_INDEX_FILES:
        raw = json.loads((index_dir / name).read_text())
        definition = copy.deepcopy(raw["definition"])
        if dimensions is not None:
            for f in definition.get("fields", []):
                if f.get("type") == "vector":
                    f["numDimensions"] = dimensions
        out.append(SearchIndexDef(raw["name"], raw["collection"], raw["type"], definition))
    return out


async def ensure_regular_indexes(db: Any, index_dir: Path = INDEX_DIR) -> int:
    for spec in load_regular(index_dir):
        keys = [(k, d) for k, d in spec["keys"]]
        await db[spec["collection"]].create_index(keys, **spec["options"])
    return len(load_regular(index_dir))


async def ensure_search_indexes(
    db: Any,
    dimensions: int,
    *,
    progress: Callable[[str], None] = print,
    timeout_s: float = 600.0,
    index_dir: Path = INDEX_DIR,
) -> None:
    """Create or update each search index on a real cluster, then wait until all are queryable."""
    defs = load_search(index_dir, dimensions)
    for d in defs:
        coll = db[d.collection]
        if d.collection not in await db.list_collection_names():
            await db.create_collection(d.collection)
        existing = {ix["name"]: ix async for ix in await coll.list_search_indexes()}
        if d.name in existing:
            if existing[d.name].get("latestDefinition") != d.definition:
                progress(f"updating search index {d.name}")
                await coll.update_search_index(d.name, d.definition)
            else:
                progress(f"search index {d.name} is up to date")
        else:
            progress(f"creating search index {d.name}")
            model = SearchIndexModel(definition=d.definition, name=d.name, type=d.type)
            await coll.create_search_index(model)
    deadline = time.monotonic() + timeout_s
    pending = {d.name: d.collection for d in defs}
    while pending:
        for name, coll_name in list(pending.items()):
            async for ix in await db[coll_name].list_search_indexes(name):
                if ix.get("queryable") and ix.get("status") in ("READY", None):
                    progress(f"search index {name} is queryable")
                    pending.pop(name)
        if pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"search indexes not queryable after {timeout_s}s: {pending}")
            progress(f"waiting for {', '.join(sorted(pending))} ...")
            await asyncio.sleep(5)
