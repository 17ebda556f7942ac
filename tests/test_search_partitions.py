"""Partitioned dense search reads only admitted partitions and ranks exactly like brute force."""

from __future__ import annotations

import numpy as np
import pytest

from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from scripts.benchmarks.synthetic import make_corpus


@pytest.fixture(scope="module")
def search_and_queries() -> tuple[LocalSearch, list[list[float]]]:
    corpus = make_corpus(800, 12, seed=3)
    search = LocalSearch(corpus.articles, corpus.chunks, corpus.tickets)
    return search, [list(q.vector) for q in corpus.queries]


@pytest.mark.parametrize(
    "filt",
    [
        SearchFilter(audiences=("all",), locale="en"),
        SearchFilter(audiences=("all", "pro"), locale="en"),
        SearchFilter(audiences=("all", "pro", "enterprise"), locale="de"),
        SearchFilter(audiences=("all", "pro", "enterprise"), locale=None),
    ],
)
async def test_partitioned_dense_search_equals_brute_force(
    search_and_queries: tuple[LocalSearch, list[list[float]]], filt: SearchFilter
) -> None:
    search, queries = search_and_queries
    chunks = search._snap.chunks
    matrix = np.array([c.embedding for c in chunks], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    admitted = np.array(
        [filt.allows_doc(c.audience, c.locale, c.status) for c in chunks], dtype=bool
    )
    plan = search._dense_plan(filt)
    covered = sum(end - start for start, end in plan.spans)
    assert covered == admitted.sum() < len(chunks)  # the filter shrinks what is multiplied
    for vector in queries:
        q = np.asarray(vector, dtype=np.float32)
        q /= np.linalg.norm(q)
        sims = matrix @ q
        rows = np.flatnonzero(admitted)
        want = [chunks[int(r)].id for r in rows[np.argsort(-sims[rows], kind="stable")][:40]]
        got = await search.dense_chunks(vector, filt, limit=40, num_candidates=200)
        assert [h.passage_id for h in got] == want
        for hit in got:  # every hit's vector is its own (the reranker reuses it)
            row = next(i for i, c in enumerate(chunks) if c.id == hit.passage_id)
            assert hit.vector is not None
            np.testing.assert_allclose(hit.vector, matrix[row], atol=1e-6)
