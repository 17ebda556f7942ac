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

from app.language.analyzer import ANALYZER_VERSION
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


# --- checking what the cluster has against what we define ------------------------------------

# `$listSearchIndexes` statuses (Atlas docs): BUILDING, DOES_NOT_EXIST, DELETING, FAILED, PENDING,
# READY, STALE. A STALE index is queryable but lagging; FAILED never becomes queryable by waiting.
FAILED_STATUSES = frozenset({"FAILED", "DOES_NOT_EXIST", "DELETING"})


def _field_key(item: Any) -> Any:
    """How a vector index's `fields` entry is identified: by (type, path), not by position."""
    if isinstance(item, dict) and "path" in item:
        return (item.get("type"), str(item["path"]))
    return None


def definition_mismatches(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Where the cluster's definition differs from ours, on the keys *we* set.

    Keys the cluster adds (defaults such as `dynamic` on nested documents, or `similarity`
    defaults on filter fields) are ignored, so an index is not rebuilt on every run just because
    Atlas echoes it back fuller than we wrote it. A `fields` list is matched by (type, path).
    """
    label = where or "definition"
    if isinstance(ours, dict):
        if not isinstance(theirs, dict):
            return [f"{label}: ours is a document, the cluster has {theirs!r}"]
        out: list[str] = []
        for key, value in ours.items():
            sub = f"{where}.{key}" if where else key
            if key not in theirs:
                out.append(f"{sub}: missing on the cluster (ours {value!r})")
            else:
                out.extend(definition_mismatches(value, theirs[key], sub))
        return out
    if isinstance(ours, list) and all(_field_key(x) is not None for x in ours) and ours:
        if not isinstance(theirs, list):
            return [f"{label}: ours is a list, the cluster has {theirs!r}"]
        by_key = {_field_key(x): x for x in theirs}
        out = []
        for item in ours:
            key = _field_key(item)
            sub = f"{label}[{key[0]} {key[1]}]"
            if key not in by_key:
                out.append(f"{sub}: missing on the cluster")
            else:
                out.extend(definition_mismatches(item, by_key[key], sub))
        return out
    if ours != theirs:
        return [f"{label}: ours {ours!r}, the cluster has {theirs!r}"]
    return []


def _vector_dimensions(definition: Any) -> list[tuple[str, Any]]:
    fields = definition.get("fields", []) if isinstance(definition, dict) else []
    return [
        (str(f.get("path")), f.get("numDimensions"))
        for f in fields
        if isinstance(f, dict) and f.get("type") == "vector"
    ]


def _version(listed: Any) -> int | None:
    if not isinstance(listed, dict):
        return None
    version = (listed.get("latestDefinitionVersion") or {}).get("version")
    return int(version) if isinstance(version, int) else None


@dataclass(frozen=True)
class IndexCheck:
    """One search index as the cluster lists it, judged against our definition."""

    name: str
    collection: str
    status: str | None
    queryable: bool
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "collection": self.collection,
            "ok": self.ok,
            "status": self.status,
            "queryable": self.queryable,
            "problems": list(self.problems),
        }


def assess_search_index(
    expected: SearchIndexDef, listed: Any, dimensions: int | None = None
) -> IndexCheck:
    """Judge one `$listSearchIndexes` entry (or None: not listed) against our definition.

    Problems, each a sentence an operator can act on: missing, failed (with Atlas's message),
    not queryable, our keys differing from `latestDefinition`, and a vector field whose
    `numDimensions` is not the embedder's width (queries would fail or return nothing).
    """
    if not isinstance(listed, dict):
        return IndexCheck(
            expected.name,
            expected.collection,
            None,
            False,
            (f"missing: no search index named {expected.name!r} on {expected.collection}",),
        )
    status = listed.get("status")
    queryable = bool(listed.get("queryable"))
    problems: list[str] = []
    if status in FAILED_STATUSES:
        message = listed.get("message") or ""
        problems.append(f"status {status}" + (f": {message}" if message else ""))
    if not queryable:
        problems.append(f"not queryable (status {status})")
    if listed.get("type") not in (None, expected.type):
        problems.append(f"type {listed.get('type')!r}, ours {expected.type!r}")
    latest = listed.get("latestDefinition")
    if latest is None:
        problems.append("the cluster reports no latestDefinition")
    else:
        if dimensions is not None:
            for path, dims in _vector_dimensions(latest):
                if dims != dimensions:
                    problems.append(
                        f"numDimensions of {path} is {dims}, the embedder produces {dimensions}"
                    )
        problems.extend(
            m
            for m in definition_mismatches(expected.definition, latest)
            if dimensions is None or "numDimensions" not in m
        )
    return IndexCheck(expected.name, expected.collection, status, queryable, tuple(problems))


async def _listed(db: Any, collection: str, name: str) -> dict[str, Any] | None:
    async for ix in await db[collection].list_search_indexes(name):
        if ix.get("name") == name:
            return dict(ix)
    return None


async def check_search_indexes(
    db: Any, dimensions: int, index_dir: Path = INDEX_DIR
) -> list[IndexCheck]:
    """Each of our search indexes as the cluster lists it (a listing error is a problem)."""
    out = []
    for d in load_search(index_dir, dimensions):
        try:
            listed = await _listed(db, d.collection, d.name)
        except Exception as exc:  # e.g. a server without mongot: say so in readiness
            out.append(
                IndexCheck(
                    d.name, d.collection, None, False, (f"cannot list search indexes: {exc}",)
                )
            )
            continue
        out.append(assess_search_index(d, listed, dimensions))
    return out


async def stale_analyzed_articles(db: Any) -> int:
    """Published articles whose stored `searchTerms` are missing or from another analyzer
    version: `kb_articles_search` indexes only those fields, so on Atlas such an article is
    invisible to the lexical ranker until ingestion rewrites it (LocalSearch recomputes)."""
    query = {"status": "published", "searchTerms.version": {"$ne": ANALYZER_VERSION}}
    return int(await db["kb_articles"].count_documents(query))


async def search_index_readiness(store: Any, dimensions: int) -> dict[str, Any]:
    """The search-index part of /readyz: LocalSearch in embedded mode, else each index's state
    and whether every published article carries the analysed fields the text index reads."""
    if store.embedded:
        return {
            "backend": "local",
            "ok": True,
            "detail": "embedded store: LocalSearch (in-process) serves search; no Atlas indexes",
        }
    checks = await check_search_indexes(store.db, dimensions)
    try:
        stale: int | None = await stale_analyzed_articles(store.db)
    except Exception as exc:
        stale, problem = None, f"cannot count articles without current searchTerms: {exc}"
    else:
        problem = (
            ""
            if stale == 0
            else f"{stale} published articles have no searchTerms of analyzer version "
            f"{ANALYZER_VERSION}: BM25 cannot find them; re-run ingestion (make ingest / make seed)"
        )
    return {
        "backend": "atlas",
        "ok": all(c.ok for c in checks) and stale == 0,
        "indexes": [c.view() for c in checks],
        "analyzedArticles": {"ok": stale == 0, "stale": stale, "problem": problem},
    }


# --- creating and updating --------------------------------------------------------------------


class SearchIndexFailed(RuntimeError):
    """The cluster reports FAILED (or the index vanished) while we wait for it."""


async def ensure_search_indexes(
    db: Any,
    dimensions: int,
    *,
    progress: Callable[[str], None] = print,
    timeout_s: float = 600.0,
    poll_s: float = 5.0,
    index_dir: Path = INDEX_DIR,
) -> list[IndexCheck]:
    """Create or update each search index on a real cluster, then wait until each serves *our*
    definition: queryable, and (after an update) at a definition version newer than before.

    After `update_search_index` the old index keeps serving and stays queryable, so waiting for
    `queryable` alone would accept the old definition (e.g. the old `numDimensions`). FAILED
    stops the wait at once with Atlas's message instead of running out the timeout.
    """
    defs = load_search(index_dir, dimensions)
    min_version: dict[str, int] = {}  # index name -> first definition version that is ours
    for d in defs:
        coll = db[d.collection]
        if d.collection not in await db.list_collection_names():
            await db.create_collection(d.collection)
        listed = await _listed(db, d.collection, d.name)
        if listed is not None:
            if definition_mismatches(d.definition, listed.get("latestDefinition") or {}):
                progress(f"updating search index {d.name}")
                before = _version(listed)
                await coll.update_search_index(d.name, d.definition)
                min_version[d.name] = (before if before is not None else -1) + 1
            else:
                progress(f"search index {d.name} is up to date")
        else:
            progress(f"creating search index {d.name}")
            model = SearchIndexModel(definition=d.definition, name=d.name, type=d.type)
            await coll.create_search_index(model)
    deadline = time.monotonic() + timeout_s
    pending = {d.name: d for d in defs}
    done: dict[str, IndexCheck] = {}
    while pending:
        for name, d in list(pending.items()):
            listed = await _listed(db, d.collection, name)
            status = listed.get("status") if listed else None
            if listed is not None and status == "FAILED":
                raise SearchIndexFailed(
                    f"search index {name} FAILED: {listed.get('message') or 'no message'}"
                )
            version = _version(listed)
            new_enough = name not in min_version or (
                version is not None and version >= min_version[name]
            )
            check = assess_search_index(d, listed, dimensions)
            if new_enough and check.ok and status in ("READY", "STALE", None):
                stale = " (STALE: serving, but behind the collection)" if status == "STALE" else ""
                progress(f"search index {name} is queryable{stale}")
                done[name] = check
                pending.pop(name)
        if pending:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"search indexes not serving our definition after {timeout_s}s: "
                    f"{sorted(pending)}"
                )
            progress(f"waiting for {', '.join(sorted(pending))} ...")
            await asyncio.sleep(poll_s)
    return [done[d.name] for d in defs]
