"""Naive baselines computed in the same run, on the same cases (DESIGN 11).

Every retrieval number is read against what a textbook retriever gets with no product work:

- `naive_dense`: all-MiniLM-L6-v2 (the configured embedder) over plain fixed windows of every
  admissible document — 512 characters with 128 characters of overlap, no headings, no
  breadcrumbs, no structure — queried with the customer's last message as written, cosine top-k.
- `naive_bm25`: `bm25s` (its own default tokenizer and English stop words, Lucene BM25) over
  the same windows, with the same query.
- `first_sentences`: the answer "the first two sentences of the naive dense top window", scored
  with the same token F1 as our answers.

Windows are cut from an article's body and a ticket's embedded text (subject, symptom,
resolution); the customer's entitlement filter (audience rung, status, locale) is applied before
ranking, as our own rankers do, so both sides rank the same admissible documents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import numpy.typing as npt

from app.providers.embeddings.base import Embedder
from app.store.models import Article, Ticket

WINDOW_CHARS = 512
WINDOW_OVERLAP = 128
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def windows(text: str, size: int = WINDOW_CHARS, overlap: int = WINDOW_OVERLAP) -> list[str]:
    """Plain character windows of `size` starting every `size - overlap` characters."""
    if size <= overlap:
        raise ValueError("window size must exceed the overlap")
    text = text.strip()
    if not text:
        return []
    step = size - overlap
    out = []
    for start in range(0, len(text), step):
        out.append(text[start : start + size])
        if start + size >= len(text):
            break
    return out


def first_sentences(text: str, n: int = 2) -> str:
    """The first `n` sentences of a window (split after . ! ? followed by whitespace)."""
    parts = [p.strip() for p in _SENTENCE.split(" ".join(text.split())) if p.strip()]
    return " ".join(parts[:n])


@dataclass(frozen=True)
class _Window:
    doc_id: str
    text: str
    audience: str
    status: str
    locale: str


@dataclass(frozen=True)
class NaiveResult:
    dense: list[str]  # doc ids, rank order (one per window)
    bm25: list[str]
    first_sentences: str  # of the top dense window ("" when nothing is admissible)
    top_window: str = ""  # the top dense window whole


class NaiveBaseline:
    """The two naive rankers over one corpus; build once, query per case."""

    def __init__(self, windows_: Sequence[_Window], vectors: npt.NDArray[np.float32]) -> None:
        self._windows = list(windows_)
        self._vectors = vectors
        self._bm25: bm25s.BM25 | None = None
        if self._windows:
            self._bm25 = bm25s.BM25()
            tokens = bm25s.tokenize([w.text for w in self._windows], show_progress=False)
            self._bm25.index(tokens, show_progress=False)

    @classmethod
    async def build(
        cls, articles: Sequence[Article], tickets: Sequence[Ticket], embedder: Embedder
    ) -> NaiveBaseline:
        items: list[_Window] = []
        for a in articles:
            items += [_Window(a.id, w, a.audience, a.status, a.locale) for w in windows(a.body)]
        for t in tickets:
            text = "\n\n".join(p.strip() for p in (t.subject, t.symptom, t.resolution) if p)
            items += [_Window(t.id, w, t.audience, t.status, t.locale) for w in windows(text)]
        vectors = np.zeros((len(items), embedder.dimensions), dtype=np.float32)
        batch = 64
        for i in range(0, len(items), batch):
            got = await embedder.embed_documents([w.text for w in items[i : i + batch]])
            vectors[i : i + len(got)] = np.asarray(got, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1.0, norms)
        return cls(items, vectors)

    def _admitted(
        self, audiences: Sequence[str], locale: str | None, statuses: Sequence[str]
    ) -> npt.NDArray[np.bool_]:
        return np.asarray(
            [
                w.audience in audiences
                and w.status in statuses
                and (locale is None or w.locale == locale)
                for w in self._windows
            ],
            dtype=bool,
        )

    async def query(
        self,
        message: str,
        embedder: Embedder,
        audiences: Sequence[str],
        locale: str | None,
        statuses: Sequence[str] = ("published", "resolved"),
        k: int = 50,
    ) -> NaiveResult:
        if not self._windows or not message.strip():
            return NaiveResult([], [], "")
        mask = self._admitted(audiences, locale, statuses)
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return NaiveResult([], [], "")
        q = np.asarray(await embedder.embed_query(message), dtype=np.float32)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        sims = self._vectors[rows] @ q
        dense_rows = rows[np.argsort(-sims, kind="stable")[:k]]
        dense = [self._windows[r].doc_id for r in dense_rows]
        bm25: list[str] = []
        if self._bm25 is not None:
            tokens = bm25s.tokenize([message], show_progress=False, return_ids=False)[0]
            scores = np.asarray(self._bm25.get_scores(list(tokens)), dtype=np.float32)
            kept = rows[scores[rows] > 0]
            bm25_rows = kept[np.argsort(-scores[kept], kind="stable")[:k]]
            bm25 = [self._windows[r].doc_id for r in bm25_rows]
        top = self._windows[dense_rows[0]].text
        return NaiveResult(dense, bm25, first_sentences(top), top)
