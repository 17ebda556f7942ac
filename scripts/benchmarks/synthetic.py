"""A synthetic knowledge base of any size for the retrieval-scale benchmark.

Shaped like the seed corpus (measured on `seed/`: ~8 chunks per article, ~46 words per chunk,
4-word titles, ~6 tags, 3 of 4 articles for every plan, a few drafts, one ticket per ~7 chunks)
but generated, not embedded: chunk texts are drawn from a Zipf-weighted vocabulary of real
support words, error codes and pseudo-words (so BM25 sees a realistic spread of rare and common
terms), and vectors are random unit 384-d rows (MiniLM's width). Queries are a few words of one
admissible chunk plus a vector near that chunk's vector (cosine ≈ 0.8), so every ranker has real
work to do and finds real hits. Everything is seeded: the same size gives the same corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from app.store.models import Article, Chunk, Ticket

DIM = 384
CHUNKS_PER_ARTICLE = 8
CHUNKS_PER_TICKET = 8
_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

DOMAIN_WORDS = (  # noqa: SIM905 - a word list reads better as prose
    "room panel desk tag visitor kiosk booking calendar sync google microsoft outlook teams "
    "slack okta entra saml sso scim login password reset invite user admin owner role seat plan "
    "invoice vat payment card refund order shipping carrier tracking firmware update battery led "
    "status blinking amber green red network wifi poe ethernet mount kit badge print check-in "
    "floor map heatmap analytics export report api key webhook rate limit token certificate "
    "signature clock skew metadata provisioning group attribute email domain audit log "
    "retention gdpr region data residency mobile app notification offline reboot factory "
    "settings screen brightness schedule meeting recurring release cancel hold capacity "
    "building floor zone workspace dashboard permission security two-factor authenticator"
).split()
ERROR_CODES = tuple(
    f"{prefix}_{n}"
    for prefix, base in (("AUTH", 300), ("SCIM", 400), ("RATE", 420), ("SYNC", 500), ("KIOSK", 600))
    for n in range(base, base + 25)
)


@dataclass(frozen=True)
class Query:
    text: str
    vector: list[float]


@dataclass(frozen=True)
class Corpus:
    articles: list[Article]
    chunks: list[Chunk]
    tickets: list[Ticket]
    queries: list[Query]


def _pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct pronounceable non-words of 2-3 consonant-vowel syllables."""
    consonants = np.array(list("bcdfghjklmnprstvz"))
    vowels = np.array(list("aeiou"))
    out: dict[str, None] = {}
    while len(out) < n:
        batch = 2 * (n - len(out)) + 16
        c = consonants[rng.integers(0, len(consonants), size=(batch, 3))]
        v = vowels[rng.integers(0, len(vowels), size=(batch, 3))]
        syllables = rng.integers(2, 4, size=batch)
        for row in range(batch):
            word = "".join(c[row, i] + v[row, i] for i in range(int(syllables[row])))
            out.setdefault(word, None)
            if len(out) >= n:
                break
    return list(out)


def vocabulary(
    rng: np.random.Generator, size: int = 20_000
) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Words and their Zipf sampling weights (domain words most frequent, codes mid, rest tail)."""
    words = list(DOMAIN_WORDS) + list(ERROR_CODES)
    words += _pseudo_words(rng, max(size - len(words), 0))
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    weights = 1.0 / (ranks + 2.7)
    return words, weights / weights.sum()


def unit_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> npt.NDArray[np.float32]:
    m = rng.standard_normal((n, dim), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def near(rng: np.random.Generator, v: npt.NDArray[np.float32], cosine: float = 0.8) -> list[float]:
    """A unit vector at about `cosine` from unit vector `v`."""
    noise = rng.standard_normal(int(v.shape[0]), dtype=np.float32)
    noise -= noise.dot(v) * v
    noise /= np.linalg.norm(noise)
    out = cosine * v + float(np.sqrt(1.0 - cosine**2)) * noise
    return [float(x) for x in out / np.linalg.norm(out)]


def _texts(
    rng: np.random.Generator,
    words: Sequence[str],
    p: npt.NDArray[np.float64],
    lengths: Sequence[int],
) -> list[str]:
    picks = rng.choice(len(words), size=int(sum(lengths)), p=p)
    out, at = [], 0
    for n in lengths:
        out.append(" ".join(words[i] for i in picks[at : at + n]))
        at += n
    return out


def make_corpus(n_chunks: int, n_queries: int, seed: int = 7) -> Corpus:
    """`n_chunks` chunks in `n_chunks / 8` articles, `n_chunks / 8` tickets, `n_queries` queries."""
    rng = np.random.default_rng(seed + n_chunks)
    words, p = vocabulary(rng)
    n_articles = max(1, n_chunks // CHUNKS_PER_ARTICLE)
    n_tickets = max(1, n_chunks // CHUNKS_PER_TICKET)

    audience = rng.choice(["all", "pro", "enterprise"], size=n_articles, p=[0.75, 0.19, 0.06])
    status = rng.choice(["published", "draft"], size=n_articles, p=[0.97, 0.03])
    locale = rng.choice(["en", "de", "fr"], size=n_articles, p=[0.85, 0.1, 0.05])
    titles = _texts(rng, words, p, [4] * n_articles)
    tag_counts = rng.integers(3, 9, size=n_articles)
    tags = _texts(rng, words, p, list(tag_counts))
    lengths = np.clip(rng.normal(46, 18, size=n_chunks), 12, 170).astype(int)
    texts = _texts(rng, words, p, list(lengths))
    vectors = unit_rows(rng, n_chunks)

    articles: list[Article] = []
    chunks: list[Chunk] = []
    for a in range(n_articles):
        slug = f"article-{a:06d}"
        rows = range(a * CHUNKS_PER_ARTICLE, min((a + 1) * CHUNKS_PER_ARTICLE, n_chunks))
        if a == n_articles - 1:
            rows = range(a * CHUNKS_PER_ARTICLE, n_chunks)
        title = titles[a].capitalize()
        tag_list = tags[a].split()
        common: dict[str, Any] = {
            "audience": str(audience[a]),
            "locale": str(locale[a]),
            "status": str(status[a]),
            "category": "general",
            "tags": tag_list,
        }
        articles.append(
            Article.model_validate(
                {
                    "id": slug,
                    "slug": slug,
                    "title": title,
                    "body": "\n\n".join(texts[r] for r in rows),
                    "updated_at": _EPOCH,
                    **common,
                }
            )
        )
        for i, r in enumerate(rows):
            chunks.append(
                Chunk.model_validate(
                    {
                        "id": f"{slug}#{i}",
                        "article_id": slug,
                        "chunk_index": i,
                        "text": texts[r],
                        "breadcrumb": f"{title} › Section {i + 1}",
                        "embedding": vectors[r].tolist(),
                        "title": title,
                        **common,
                    }
                )
            )

    t_vectors = unit_rows(rng, n_tickets)
    t_texts = _texts(rng, words, p, [8, 30, 30] * n_tickets)
    t_status = rng.choice(["resolved", "open", "wont_fix"], size=n_tickets, p=[0.85, 0.08, 0.07])
    t_quality = rng.uniform(0.4, 1.0, size=n_tickets)
    t_age = rng.uniform(0, 720, size=n_tickets)
    tickets = [
        Ticket.model_validate(
            {
                "id": f"TCK-{t:07d}",
                "subject": t_texts[3 * t],
                "symptom": t_texts[3 * t + 1],
                "resolution": t_texts[3 * t + 2],
                "product": "workspace",
                "audience": str(rng.choice(["all", "pro"], p=[0.8, 0.2])),
                "locale": "en",
                "status": str(t_status[t]),
                "quality": float(t_quality[t]),
                "resolved_at": _EPOCH - timedelta(days=float(t_age[t])),
                "embedding": t_vectors[t].tolist(),
            }
        )
        for t in range(n_tickets)
    ]

    # queries about chunks a pro customer in English may see
    admissible = [
        r
        for r, c in enumerate(chunks)
        if c.audience in ("all", "pro") and c.locale == "en" and c.status == "published"
    ]
    queries = []
    for r in rng.choice(admissible, size=n_queries, replace=len(admissible) < n_queries):
        chunk_words = chunks[int(r)].text.split()
        k = min(len(chunk_words), int(rng.integers(3, 8)))
        picked = rng.choice(len(chunk_words), size=k, replace=False)
        text = "how do I " + " ".join(chunk_words[i] for i in sorted(picked))
        queries.append(Query(text=text, vector=near(rng, vectors[int(r)])))
    return Corpus(articles=articles, chunks=chunks, tickets=tickets, queries=queries)


class PrecomputedEmbedder:
    """An `Embedder` that returns the vectors it was given (no model): retrieval without MiniLM.

    Unknown texts get a deterministic random unit vector. An unknown *query* is counted in
    `misses` (retrieve() must reuse the query vector it was given); unknown document texts are
    counted in `document_misses` — the sentences of top passages that the answerability check
    embeds during a turn are expected there.
    """

    name = "precomputed"
    dimensions = DIM

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self._vectors = vectors
        self.misses = 0
        self.document_misses = 0

    def _vector(self, text: str, *, query: bool) -> list[float]:
        known = self._vectors.get(text)
        if known is not None:
            return known
        if query:
            self.misses += 1
        else:
            self.document_misses += 1
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        return [float(x) for x in unit_rows(np.random.default_rng(seed), 1)[0]]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t, query=False) for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        return self._vector(text, query=True)
