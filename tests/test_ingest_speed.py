"""Loading speed: chunks of many articles share embedding calls; progress says the time left."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from app.ingest import ingest_corpus
from app.ingest.progress import Eta, clock, time_left
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store
from scripts.benchmarks import ingest_speed


class CountingEmbedder(FakeEmbedder):
    """Records the size of every embedding call."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.sizes.append(len(texts))
        return await super().embed_documents(texts)


def _folder(root: Path, pages: int) -> Path:
    for n in range(pages):
        sections = "\n\n".join(
            f"## Step {k}\n\nDo thing {k} of page {n} carefully." for k in range(3)
        )
        (root / f"page-{n}.md").write_text(f"# Page {n}\n\n{sections}\n", encoding="utf-8")
    return root


async def test_chunks_of_many_articles_share_embedding_calls(store: Store, tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    seen: list[tuple[int, int]] = []
    report = await ingest_corpus(
        store,
        embedder,
        _folder(tmp_path, 40),
        default_audience="all",
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(report.ingested) == 40
    assert sum(embedder.sizes) == report.chunks_written > 40
    assert len(embedder.sizes) < 40 / 4  # one call per article would be 40
    assert seen[0] == (0, 40) and seen[-1] == (40, 40)
    stored = await store.chunks.for_article("page-7")
    assert [len(c.embedding) for c in stored] == [embedder.dimensions] * len(stored)
    assert all("page 7" in c.text for c in stored)  # vectors went back to their own article


def test_time_left_is_the_rate_so_far() -> None:
    assert time_left(10.0, 0, 100) is None
    assert time_left(10.0, 25, 100) == pytest.approx(30.0)
    assert time_left(10.0, 100, 100) == 0.0
    assert clock(42) == "42 s" and clock(200) == "3 min 20 s" and clock(3720) == "1 h 02 min"
    eta = Eta(start=100.0)
    assert eta.line(100.0, 0, 50) == "0/50 articles, estimating the time left"
    assert eta.line(120.0, 10, 50) == "10/50 articles, about 1 min 20 s left"
    assert eta.line(150.0, 50, 50) == "50/50 articles, done in 50 s"


@pytest.mark.slow
async def test_bench_section_measures_ingest_and_bare_encoding(tmp_path: Path) -> None:
    result = await ingest_speed.run(_folder(tmp_path, 3))
    assert result["chunks"] >= 3
    assert result["ingest_s"] > 0 and result["bare_encode_s"] > 0
    # the seconds are reported rounded to 0.01 s, the ratio from the unrounded times
    low = (result["ingest_s"] - 0.005) / (result["bare_encode_s"] + 0.005)
    high = (result["ingest_s"] + 0.005) / max(result["bare_encode_s"] - 0.005, 1e-9)
    assert low - 0.01 <= result["ingest_over_bare"] <= high + 0.01
    assert "ingest / bare" in "\n".join(ingest_speed.render(result))
