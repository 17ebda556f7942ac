"""Search-index readiness and updates against a fake cluster that lists indexes the way Atlas does.

`$listSearchIndexes` / PyMongo `list_search_indexes` entries carry `id`, `name`, `type`, `status`
(BUILDING, DOES_NOT_EXIST, DELETING, FAILED, PENDING, READY, STALE), `queryable`,
`latestDefinitionVersion` {`version`, `createdAt`}, `latestDefinition` (echoed back with the
cluster's defaults filled in) and `statusDetail` per mongot host. The fake keeps those shapes.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import mongomock_ng
import pytest

from app.language.analyzer import ANALYZER_VERSION
from app.store import Store
from app.store.indexes import (
    SearchIndexFailed,
    assess_search_index,
    check_search_indexes,
    definition_mismatches,
    ensure_search_indexes,
    load_search,
    search_index_readiness,
)

DIMS = 64  # the fake embedder's width: not the 384 the JSON files carry


def listed(d: Any, *, status: str = "READY", queryable: bool = True, version: int = 0) -> dict:
    """An entry as Atlas lists it: our definition plus the defaults the cluster adds."""
    definition = copy.deepcopy(d.definition)
    if d.type == "search":
        definition["analyzer"] = "lucene.standard"
        definition["searchAnalyzer"] = "lucene.standard"
        definition["mappings"]["fields"]["searchTerms"]["fields"]["title"]["indexOptions"] = (
            "offsets"
        )
    else:
        for f in definition["fields"]:
            if f["type"] == "vector":
                f["quantization"] = "none"
    return {
        "id": f"id-{d.name}",
        "name": d.name,
        "type": d.type,
        "status": status,
        "queryable": queryable,
        "latestDefinitionVersion": {
            "version": version,
            "createdAt": datetime(2026, 1, 1, tzinfo=UTC),
        },
        "latestDefinition": definition,
        "statusDetail": [{"hostname": "atlas-abc-shard-00-01", "status": status}],
    }


class _Cursor:
    def __init__(self, docs: list[dict]) -> None:
        self._docs = docs

    def __aiter__(self) -> AsyncIterator[dict]:
        async def gen() -> AsyncIterator[dict]:
            for doc in self._docs:
                yield copy.deepcopy(doc)

        return gen()


@dataclass
class FakeCluster:
    """Collections with search indexes; `on_poll` lets a test advance the cluster's state."""

    indexes: dict[str, dict[str, dict]] = field(default_factory=dict)  # coll -> name -> entry
    updates: list[tuple[str, dict]] = field(default_factory=list)
    creates: list[str] = field(default_factory=list)
    lists: int = 0
    fail_listing: Exception | None = None
    on_list: Any = None
    documents: dict[str, list[dict]] = field(default_factory=dict)  # coll -> its documents

    def __getitem__(self, name: str) -> _Coll:
        return _Coll(self, name)

    async def list_collection_names(self) -> list[str]:
        return list(self.indexes)

    async def create_collection(self, name: str) -> None:
        self.indexes.setdefault(name, {})


@dataclass
class _Coll:
    cluster: FakeCluster
    name: str

    async def list_search_indexes(self, name: str | None = None) -> _Cursor:
        c = self.cluster
        if c.fail_listing is not None:
            raise c.fail_listing
        c.lists += 1
        if c.on_list is not None:
            c.on_list(c)
        entries = c.indexes.get(self.name, {})
        return _Cursor([e for n, e in entries.items() if name in (None, n)])

    async def count_documents(self, query: dict) -> int:
        """A query language we did not write: mongomock evaluates the filter."""
        coll = mongomock_ng.MongoClient()["fake"][self.name]
        docs = self.cluster.documents.get(self.name, [])
        if docs:
            coll.insert_many(copy.deepcopy(docs))
        return int(coll.count_documents(query))

    async def update_search_index(self, name: str, definition: dict) -> None:
        self.cluster.updates.append((name, definition))

    async def create_search_index(self, model: Any) -> None:
        self.cluster.creates.append(model.document["name"])


def healthy_cluster(dims: int = DIMS) -> FakeCluster:
    cluster = FakeCluster()
    for d in load_search(dimensions=dims):
        cluster.indexes.setdefault(d.collection, {})[d.name] = listed(d)
    return cluster


def by_name(checks: list[Any]) -> dict[str, Any]:
    return {c.name: c for c in checks}


# --- definition comparison (a table) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ({"a": 1}, {"a": 1, "added": True}, []),  # keys the cluster adds are not a difference
        ({"a": 1}, {"a": 2}, ["a: ours 1, the cluster has 2"]),
        ({"a": {"b": "x"}}, {"a": {}}, ["a.b: missing on the cluster (ours 'x')"]),
        (
            {"fields": [{"type": "vector", "path": "e", "numDimensions": 64}]},
            {
                "fields": [
                    {"type": "filter", "path": "s"},
                    {"type": "vector", "path": "e", "numDimensions": 64},
                ]
            },
            [],  # matched by (type, path), not by position
        ),
        (
            {"fields": [{"type": "filter", "path": "locale"}]},
            {"fields": [{"type": "filter", "path": "status"}]},
            ["fields[filter locale]: missing on the cluster"],
        ),
    ],
)
def test_definition_mismatches(ours: dict, theirs: dict, expected: list[str]) -> None:
    assert definition_mismatches(ours, theirs) == expected


# --- one index judged ---------------------------------------------------------------------------


def _defs() -> dict[str, Any]:
    return {d.name: d for d in load_search(dimensions=DIMS)}


def test_an_index_listed_with_cluster_defaults_is_ok() -> None:
    for d in _defs().values():
        check = assess_search_index(d, listed(d), DIMS)
        assert check.ok, check.problems


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda e: None, "missing: no search index named"),
        (lambda e: e.update(status="BUILDING", queryable=False), "not queryable (status BUILDING)"),
        (
            lambda e: e.update(status="FAILED", queryable=False, message="bad mapping"),
            "status FAILED: bad mapping",
        ),
        (
            lambda e: e["latestDefinition"]["fields"][0].update(numDimensions=384),
            "numDimensions of embedding is 384, the embedder produces 64",
        ),
        (
            lambda e: e["latestDefinition"]["fields"][0].update(similarity="euclidean"),
            "similarity: ours 'cosine', the cluster has 'euclidean'",
        ),
        (lambda e: e.update(type="search"), "type 'search', ours 'vectorSearch'"),
    ],
)
def test_each_wrong_state_is_named(mutate: Any, needle: str) -> None:
    d = _defs()["kb_chunks_vector"]
    entry = listed(d)
    result = mutate(entry)
    check = assess_search_index(d, None if needle.startswith("missing") else entry, DIMS)
    del result
    assert not check.ok
    assert any(needle in p for p in check.problems), check.problems


def test_a_wrong_analyzer_on_the_analyzed_tags_is_named() -> None:
    d = _defs()["kb_articles_search"]
    entry = listed(d)
    tags = entry["latestDefinition"]["mappings"]["fields"]["searchTerms"]["fields"]["tags"]
    tags["analyzer"] = "lucene.standard"
    check = assess_search_index(d, entry, DIMS)
    assert check.problems == (
        "mappings.fields.searchTerms.fields.tags.analyzer: ours 'lucene.whitespace', "
        "the cluster has 'lucene.standard'",
    )


# --- the whole check and /readyz ------------------------------------------------------------


async def test_check_names_the_missing_the_unqueryable_and_the_wrong_width() -> None:
    cluster = healthy_cluster()
    del cluster.indexes["tickets"]["tickets_vector"]
    cluster.indexes["kb_articles"]["kb_articles_search"].update(status="PENDING", queryable=False)
    cluster.indexes["kb_chunks"]["kb_chunks_vector"]["latestDefinition"]["fields"][0][
        "numDimensions"
    ] = 384
    checks = by_name(await check_search_indexes(cluster, DIMS))
    assert checks["tickets_vector"].problems[0].startswith("missing")
    assert checks["kb_articles_search"].problems == ("not queryable (status PENDING)",)
    assert checks["kb_chunks_vector"].problems == (
        "numDimensions of embedding is 384, the embedder produces 64",
    )


async def test_check_reports_a_listing_error_instead_of_raising() -> None:
    cluster = healthy_cluster()
    cluster.fail_listing = RuntimeError("$listSearchIndexes is not supported")
    checks = await check_search_indexes(cluster, DIMS)
    assert len(checks) == 3
    assert all("cannot list search indexes" in c.problems[0] for c in checks)


@dataclass
class _Store:
    db: Any
    embedded: bool


async def test_readiness_section_atlas_and_embedded() -> None:
    good = await search_index_readiness(_Store(healthy_cluster(), embedded=False), DIMS)
    assert good["backend"] == "atlas" and good["ok"] is True
    assert [i["name"] for i in good["indexes"]] == [
        "kb_chunks_vector",
        "kb_articles_search",
        "tickets_vector",
    ]
    wrong_width = await search_index_readiness(_Store(healthy_cluster(384), embedded=False), DIMS)
    assert wrong_width["ok"] is False
    assert all(not i["ok"] for i in wrong_width["indexes"] if i["name"] != "kb_articles_search")
    local = await search_index_readiness(_Store(None, embedded=True), DIMS)
    assert local["backend"] == "local" and "LocalSearch" in local["detail"]


async def test_readiness_names_published_articles_without_current_search_terms() -> None:
    """`kb_articles_search` indexes only `searchTerms`: an article stored before the analyzer
    (or by an older one) is invisible to BM25 on Atlas, so readiness says so."""
    cluster = healthy_cluster()
    current = {"version": ANALYZER_VERSION, "title": "t", "tags": "", "body": "b"}
    cluster.documents["kb_articles"] = [
        {"_id": "fresh", "status": "published", "searchTerms": current},
        {"_id": "draft-old", "status": "draft"},  # not searchable anyway
    ]
    store = _Store(cluster, embedded=False)
    ready = await search_index_readiness(store, DIMS)
    assert ready["ok"] is True and ready["analyzedArticles"]["stale"] == 0
    cluster.documents["kb_articles"] += [
        {"_id": "never-analysed", "status": "published"},
        {"_id": "older", "status": "published", "searchTerms": {**current, "version": "0"}},
    ]
    ready = await search_index_readiness(store, DIMS)
    assert ready["ok"] is False
    assert all(i["ok"] for i in ready["indexes"])  # the indexes themselves are fine
    assert ready["analyzedArticles"]["stale"] == 2
    assert "re-run ingestion" in ready["analyzedArticles"]["problem"]


async def test_readyz_is_not_ready_while_an_index_is_missing() -> None:
    from app.services import Services

    cluster = healthy_cluster()
    del cluster.indexes["kb_chunks"]["kb_chunks_vector"]

    class Store:
        embedded = False
        db = cluster

        async def ping(self) -> bool:
            return True

        def describe(self) -> dict[str, str]:
            return {"mode": "atlas"}

    class Embedder:
        dimensions = DIMS

    services = Services.__new__(Services)
    services.store = Store()  # type: ignore[assignment]
    services.embedder = Embedder()  # type: ignore[assignment]
    services.corpus_ready = True
    services.startup_error = None
    services.chat_model = services.reranker = None  # type: ignore[assignment]
    checks = await services.readiness()
    assert checks["ready"] is False
    missing = [i for i in checks["searchIndexes"]["indexes"] if not i["ok"]]
    assert [i["name"] for i in missing] == ["kb_chunks_vector"]
    del cluster.indexes["kb_chunks"]  # and back: recreate it healthy
    cluster.indexes["kb_chunks"] = healthy_cluster().indexes["kb_chunks"]
    assert (await services.readiness())["ready"] is True


# --- create / update / wait ------------------------------------------------------------------


async def test_an_echoed_definition_with_defaults_is_not_rebuilt() -> None:
    cluster = healthy_cluster()
    checks = await ensure_search_indexes(cluster, DIMS, progress=lambda _: None, poll_s=0)
    assert cluster.updates == [] and cluster.creates == []
    assert all(c.ok for c in checks)


async def test_an_update_waits_for_the_new_definition_version() -> None:
    """The old index keeps serving (READY, queryable) after an update: that must not be accepted."""
    cluster = healthy_cluster(384)  # built for MiniLM; now the fake 64-d embedder is active
    seen: dict[str, int] = {}  # updated index -> listings since its update

    def advance(c: FakeCluster) -> None:
        for name, definition in c.updates:
            seen[name] = seen.get(name, 0) + 1
            if seen[name] < 4:  # a few polls serve the old definition, still READY + queryable
                continue
            for entries in c.indexes.values():
                if name in entries and entries[name]["latestDefinitionVersion"]["version"] == 0:
                    d = next(x for x in load_search(dimensions=DIMS) if x.name == name)
                    assert definition == d.definition
                    entries[name] = listed(d, version=1)

    cluster.on_list = advance
    lines: list[str] = []
    checks = await ensure_search_indexes(cluster, DIMS, progress=lines.append, poll_s=0)
    assert sorted(n for n, _ in cluster.updates) == ["kb_chunks_vector", "tickets_vector"]
    assert any(line.startswith("waiting for kb_chunks_vector") for line in lines)
    for entries in cluster.indexes.values():  # every accepted index is the new definition
        for entry in entries.values():
            for f in entry["latestDefinition"].get("fields", []):
                if f["type"] == "vector":
                    assert f["numDimensions"] == DIMS
    assert all(c.ok for c in checks)


async def test_failed_stops_the_wait_at_once() -> None:
    cluster = healthy_cluster()
    del cluster.indexes["tickets"]["tickets_vector"]

    def fail(c: FakeCluster) -> None:
        if "tickets_vector" in c.creates:
            d = next(x for x in load_search(dimensions=DIMS) if x.name == "tickets_vector")
            entry = listed(d, status="FAILED", queryable=False)
            entry["message"] = "numDimensions exceeds limit"
            c.indexes["tickets"]["tickets_vector"] = entry

    cluster.on_list = fail
    with pytest.raises(SearchIndexFailed, match="tickets_vector FAILED: numDimensions exceeds"):
        await ensure_search_indexes(
            cluster, DIMS, progress=lambda _: None, poll_s=0, timeout_s=3600
        )
    assert cluster.lists < 10  # it did not poll until the timeout


async def test_a_stale_index_is_accepted_with_a_warning_not_waited_on() -> None:
    cluster = healthy_cluster()
    cluster.indexes["tickets"]["tickets_vector"]["status"] = "STALE"  # queryable, lagging
    lines: list[str] = []
    await ensure_search_indexes(cluster, DIMS, progress=lines.append, poll_s=0, timeout_s=0)
    assert (
        "search index tickets_vector is queryable (STALE: serving, but behind the collection)"
        in (lines)
    )


# --- a real cluster (MONGODB_URI): skipped here, run by `make test-atlas` ---------------------


@pytest.mark.atlas
@pytest.mark.asyncio(loop_scope="session")
async def test_live_indexes_are_created_and_pass_the_readiness_check(
    atlas_search_store: Store | None,
) -> None:
    """On the run's shared indexes (`atlas_search_store`, built by `ensure_search_indexes`)."""
    store = atlas_search_store
    assert store is not None
    checks = await check_search_indexes(store.db, DIMS)
    assert all(c.ok for c in checks), [c.problems for c in checks]
    ready = await search_index_readiness(store, DIMS)
    assert ready["backend"] == "atlas" and ready["ok"] is True
    wrong = by_name(await check_search_indexes(store.db, DIMS * 2))  # another embedder
    for vector_index in ("kb_chunks_vector", "tickets_vector"):
        assert any("numDimensions" in p for p in wrong[vector_index].problems)
    assert wrong["kb_articles_search"].ok
    # a second run finds them in place: nothing rebuilt, nothing waited for
    again = await ensure_search_indexes(store.db, DIMS, progress=lambda _: None, timeout_s=5)
    assert all(c.ok for c in again)
