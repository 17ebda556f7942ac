"""Retrieval for one turn (DESIGN 5): embed → three pre-filtered rankers → fuse → rerank → band.

`retrieve()` never raises for bad input or a failing provider: it returns a result with
confidence `none`, empty passages and a `reason`, and logs the reason (never the query text,
which may hold personal data). Without a query vector (the embedder failed or ran out of the
stage's budget) the lexical ranker still runs. A ranker that fails while others succeed is
recorded in `errors` and the turn continues on the rest; a failing reranker leaves the fused
order with no rerank scores and confidence `none` (an unscored passage is not evidence).

Every intermediate ranked list and per-stage latency is kept on the result, so the eval harness
measures exactly what a turn does.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
import unicodedata
import weakref
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from app.language.detect import detect_language
from app.language.spelling import Speller
from app.language.synonyms import EMPTY, SynonymTable, expand_query
from app.language.text import answer_sentences, term_set
from app.providers import budget
from app.providers.dictionary import LANGUAGES as DICTIONARY_LANGUAGES
from app.providers.dictionary import known_words
from app.providers.embeddings.base import Embedder
from app.providers.errors import ProviderError
from app.providers.rerank.base import Reranker
from app.providers.rerank.offline import OfflineReranker
from app.search.answer_types import named_terms
from app.search.base import Hit, SearchBackend
from app.search.filters import DEFAULT_LOCALE, SearchFilter
from app.search.vocabulary import CorpusVocabulary
from app.turn.confidence import (
    Band,
    Confidence,
    Scored,
    Sentence,
    citation_floor,
    context_query,
    decide,
    sentence_match,
)
from app.turn.entitlement import filter_for_customer
from app.turn.fuse import RANKERS, FusedCandidate, fuse
from app.turn.rerank import (
    RankedPassage,
    passage_text,
    rerank_candidates,
    rerank_query,
    unranked,
)
from tuning import Tuning

log = logging.getLogger(__name__)

T = TypeVar("T")

LATENCY_STAGES: tuple[str, ...] = (
    "embed",
    "dense_chunks",
    "bm25_articles",
    "dense_tickets",
    "fuse",
    "rerank",
    "confidence",
    "total",
)
RANKED_STAGES: tuple[str, ...] = (
    "dense_chunks",
    "bm25_articles",
    "dense_tickets",
    "fused",
    "fused_rerank",
)


@dataclass(frozen=True)
class RetrievalResult:
    """Everything retrieval saw and decided for one query."""

    query: str  # the cleaned standalone question: what the answer and its band read
    rerank_query: str  # the cleaned text passages were reranked against
    filter: SearchFilter
    reranker: str
    dense_chunks: tuple[Hit, ...] = ()
    bm25_articles: tuple[Hit, ...] = ()
    dense_tickets: tuple[Hit, ...] = ()
    fused: tuple[FusedCandidate, ...] = ()
    reranked: tuple[RankedPassage, ...] = ()  # the whole reranked shortlist, best first
    passages: tuple[RankedPassage, ...] = ()  # the top `tuning.top_passages` of `reranked`
    confidence: Band = "none"
    top_rerank_score: float | None = None
    answerability: float | None = None  # the calibrated model's probability (confidence.py)
    confidence_reason: str = "nothing retrieved"
    confidence_features: Mapping[str, float] = field(default_factory=dict)
    latency_ms: Mapping[str, float] = field(default_factory=dict)
    reason: str | None = None  # why nothing was retrieved
    errors: tuple[str, ...] = ()  # partial failures that did not empty the result
    truncated: bool = False  # the query was cut to tuning.max_message_chars
    original: str = field(default="", repr=False)  # the cleaned message as written
    # what the rankers searched: `query`, or for a follow-up the condenser left as written, the
    # customer's previous message read before it (`_with_context`)
    searched: str = ""
    # what the lexical (BM25) ranker searched: `searched` plus the tenant's synonyms of the terms
    # it names (app/language/synonyms.py); equal to `searched` when no group matched
    lexical_query: str = ""
    synonyms_added: tuple[str, ...] = ()  # the group members `lexical_query` added
    # the tenant's synonym groups, for the lexical parts of the answerability check
    synonyms: SynonymTable = field(default=EMPTY, repr=False, compare=False)
    # misspelt words of the customer's message or question and the corpus words they were
    # searched as (`repair_spelling`); empty when nothing was repaired
    repairs: Mapping[str, str] = field(default_factory=dict)
    # the embedded `query` (None when embedding failed): the answerability check reuses it
    query_vector: tuple[float, ...] | None = field(default=None, repr=False, compare=False)

    def ranked_hits(self, stage: str) -> list[Hit]:
        """The ranked list of one stage of `RANKED_STAGES`, as hits.

        `fused_rerank` is the reranked shortlist followed by the fused candidates beyond it.
        """
        if stage == "dense_chunks":
            return list(self.dense_chunks)
        if stage == "bm25_articles":
            return list(self.bm25_articles)
        if stage == "dense_tickets":
            return list(self.dense_tickets)
        if stage == "fused":
            return [c.hit for c in self.fused]
        if stage == "fused_rerank":
            head = [p.hit for p in self.reranked]
            seen = {h.passage_id for h in head}
            return head + [c.hit for c in self.fused if c.hit.passage_id not in seen]
        raise ValueError(f"unknown stage {stage!r}; expected one of {RANKED_STAGES}")

    def ranked_doc_ids(self, stage: str) -> list[str]:
        """Source document ids (article slug or ticket id) of a stage, in rank order."""
        return [h.doc_id for h in self.ranked_hits(stage)]


_DROP_CATEGORIES = frozenset({"Cf", "Cs", "Co"})  # format (zero-width, bidi), surrogates, private
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # terminal colour codes in pasted logs
_SPACE = re.compile(r"\s+")


def clean_query(text: str | None, max_chars: int) -> tuple[str, bool]:
    """ANSI escapes and format characters removed, other control characters made spaces,
    whitespace collapsed, cut to `max_chars` (on a word boundary when one is near).

    Returns (text, truncated).
    """
    if not text:
        return "", False
    kept = []
    for ch in _ANSI.sub(" ", text):
        category = unicodedata.category(ch)
        if category in _DROP_CATEGORIES:
            continue
        kept.append(" " if category == "Cc" else ch)
    cleaned = _SPACE.sub(" ", "".join(kept)).strip()
    if len(cleaned) <= max_chars:
        return cleaned, False
    cut = cleaned[:max_chars]
    space = cut.rfind(" ", max(0, max_chars - 40))
    return (cut[:space] if space > 0 else cut).rstrip(), True


async def _timed(
    awaitable: Awaitable[T], seconds: float | None = None
) -> tuple[T | BaseException, float]:
    """The result (or the exception), and how long it took; bounded by `seconds` and by the
    stage's remaining budget, whichever ends first. Outside any budget (the eval harness, the
    benchmarks) nothing is bounded, so offline measurements never depend on machine load."""
    start = time.perf_counter()
    try:
        with budget.deadline(seconds if budget.remaining() is not None else None):
            async with budget.guard():
                result: T | BaseException = await awaitable
    except TimeoutError:
        result = ProviderError("the retrieval budget ran out", "timeout")
    except Exception as exc:
        result = exc
    return result, (time.perf_counter() - start) * 1000.0


class _Skipped(Exception):
    """A dense ranker not run because there is no query vector (already recorded in errors)."""


async def _skipped() -> list[Hit]:
    raise _Skipped


def _valid_vector(vector: Sequence[float]) -> bool:
    return bool(vector) and all(math.isfinite(x) for x in vector) and any(x != 0 for x in vector)


async def retrieve(
    query_original: str,
    query_condensed: str,
    customer_plan: str | None,
    customer_locale: str | None,
    *,
    backend: SearchBackend,
    embedder: Embedder,
    reranker: Reranker,
    tuning: Tuning,
    now: datetime | None = None,
    previous_message: str = "",
    synonyms: SynonymTable = EMPTY,
) -> RetrievalResult:
    """Retrieve, fuse, rerank and band passages for one customer message.

    Searches with the condensed question (the original when it is blank); reranks against the
    original message (the condensed question when the original is blank). `customer_plan`
    and `customer_locale` are None for an anonymous visitor (free rung, "en").
    `previous_message` is the customer's message before this one, if any: a follow-up the
    condenser left as written is searched read after it (`_with_context`).

    `synonyms` (the tenant's groups) expands the lexical query only, here, for whichever
    backend runs it: the dense query stays the customer's words (`app.language.synonyms`).
    """
    started = time.perf_counter()
    filt = filter_for_customer(customer_plan, customer_locale, tuning)
    original, cut_o = clean_query(query_original, tuning.max_message_chars)
    condensed, cut_c = clean_query(query_condensed, tuning.max_message_chars)
    repairs: dict[str, str] = {}
    if tuning.repair_query_spelling:
        corpus_language = filt.locale or DEFAULT_LOCALE
        # the dictionary must be the language the customer wrote in, and the corpus's
        language = detect_language(condensed or original) or corpus_language
        speller = await _speller(backend, filt, language) if language == corpus_language else None
        if speller is not None:
            original, condensed, repairs = repair_spelling(original, condensed, speller)
    search_text = condensed or original
    searched = _with_context(search_text, original, previous_message, tuning)
    base = RetrievalResult(
        query=search_text,
        searched=searched,
        lexical_query=expand_query(searched, synonyms),
        synonyms_added=tuple(synonyms.additions(searched)),
        synonyms=synonyms,
        rerank_query=rerank_query(
            original,
            condensed if searched == search_text else searched,
            tuning.rerank_with_condensed,
        ),
        filter=filt,
        reranker=reranker.name,
        truncated=cut_o or cut_c,
        original=original,
        repairs=repairs,
    )
    try:
        result = await _retrieve(base, backend, embedder, reranker, tuning, now)
    except Exception as exc:  # the contract: never an exception to the caller
        log.exception("retrieval failed unexpectedly")
        result = _empty(base, {}, f"internal error: {type(exc).__name__}")
    latency = dict(result.latency_ms)
    latency["total"] = (time.perf_counter() - started) * 1000.0
    return replace(result, latency_ms={k: round(latency.get(k, 0.0), 3) for k in LATENCY_STAGES})


_spellers: weakref.WeakKeyDictionary[CorpusVocabulary, dict[tuple[SearchFilter, str], Speller]] = (
    weakref.WeakKeyDictionary()
)


async def _speller(backend: SearchBackend, filt: SearchFilter, language: str) -> Speller | None:
    """The speller onto the words `filt` may retrieve, knowing `language`'s general words (and
    English's, for another language); built
    once per corpus, filter and language. None when the corpus words cannot be read or the
    language has no word list (no repair is better than a wrong one, or than no answer)."""
    if language not in DICTIONARY_LANGUAGES:
        return None
    try:
        vocabulary = await backend.vocabulary()
    except Exception as exc:
        log.warning("no corpus words for typo repair: %s", exc)
        return None
    per_filter = _spellers.setdefault(vocabulary, {})
    speller = per_filter.get((filt, language))
    if speller is None:
        words = vocabulary.words(filt)
        known = await asyncio.to_thread(known_words, language)
        if language != "en":
            # German and French support messages are full of English product and software
            # words ("Combien coûte un desk tag ?"): an English word is no typo there, and
            # "desk" must not become the French corpus's "des"
            known = known | await asyncio.to_thread(known_words, "en")
        speller = per_filter[(filt, language)] = await asyncio.to_thread(
            Speller.from_counts, words, known
        )
    return speller


def repair_spelling(
    original: str, condensed: str, speller: Speller
) -> tuple[str, str, dict[str, str]]:
    """The message and the standalone question with each misspelt word replaced by the corpus
    word it most likely meant ("pasword" → "password"), and the repairs made. Pure.

    A word is repaired only when neither the corpus nor the language's dictionary knows it, and
    only onto a corpus word one edit away (two for words of seven letters or more) with the same
    first letter, the unique best match (`app.language.spelling.Speller`, targets-only mode).
    Capitalised words inside a sentence and words in capitals are names, never repaired.
    """
    repairs: dict[str, str] = {}
    out = []
    for text in (original, condensed):
        found = speller.repairs(text) if text else {}
        if found:
            repairs.update(found)
            text = speller.repair(text)
        out.append(text)
    return out[0], out[1], repairs


def with_repairs(text: str, repairs: Mapping[str, str]) -> str:
    """`text` with each whole word that `repairs` names replaced (a retrieval's repairs applied
    to the standalone question the answer and the trace read)."""
    if not repairs:
        return text
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, repairs)) + r")(?!\w)")
    return pattern.sub(lambda m: repairs[m.group(1)], text)


def _with_context(question: str, original: str, previous: str, tuning: Tuning) -> str:
    """What the rankers search for `question`: itself, or, when the condenser left a follow-up as
    the customer wrote it, the customer's previous message (its last
    `search_context_words` words) read before it (`confidence.context_query`). A
    follow-up left short ("and for teams?") names nothing the previous question did not; a
    topic change still has its own words in the query. The answer and its band still read the
    standalone question alone. Off at `tuning.search_context_words` 0."""
    words = tuning.search_context_words
    return context_query(question, original, previous, words) or question


def _empty(base: RetrievalResult, latency: Mapping[str, float], reason: str) -> RetrievalResult:
    log.info("retrieval returned nothing: %s", reason)
    return replace(base, latency_ms=dict(latency), reason=reason, confidence="none")


async def _retrieve(
    base: RetrievalResult,
    backend: SearchBackend,
    embedder: Embedder,
    reranker: Reranker,
    tuning: Tuning,
    now: datetime | None,
) -> RetrievalResult:
    latency: dict[str, float] = {}
    if not base.query:
        return _empty(base, latency, "empty query")

    errors: list[str] = []
    # the query embedding gets a slice of the stage, so the lexical ranker still has time after it
    embedded, latency["embed"] = await _timed(
        embedder.embed_query(base.searched or base.query), tuning.embed_budget_seconds
    )
    vector: list[float] | None = None
    if isinstance(embedded, BaseException):
        # no query vector (provider down or out of time): the lexical ranker still runs
        errors.append(f"embed: {type(embedded).__name__}: {embedded}")
        log.warning("query embedding failed, searching lexically only: %s", embedded)
    elif not _valid_vector(embedded):
        errors.append("embed: empty or non-finite vector")
    else:
        vector = list(embedded)

    filt = base.filter
    outcomes = await asyncio.gather(
        _timed(
            backend.dense_chunks(vector, filt, tuning.vector_limit, tuning.vector_num_candidates)
            if vector is not None
            else _skipped()
        ),
        _timed(backend.bm25_articles(base.lexical_query, filt, tuning.keyword_limit)),
        _timed(
            backend.dense_tickets(
                vector,
                filt,
                tuning.ticket_limit,
                tuning.ticket_min_quality,
                tuning.vector_num_candidates,
            )
            if vector is not None
            else _skipped()
        ),
    )
    lists: dict[str, list[Hit]] = {}
    for name, (outcome, ms) in zip(RANKERS, outcomes, strict=True):
        latency[name] = ms
        if isinstance(outcome, _Skipped):
            lists[name] = []
        elif isinstance(outcome, BaseException):
            errors.append(f"{name}: {type(outcome).__name__}: {outcome}")
            log.warning("ranker %s failed: %s", name, outcome)
            lists[name] = []
        else:
            lists[name] = list(outcome)
    staged = replace(
        base,
        # the answerability check embeds the standalone question itself when another text was
        # searched
        query_vector=tuple(vector) if vector is not None and base.searched == base.query else None,
        dense_chunks=tuple(lists["dense_chunks"]),
        bm25_articles=tuple(lists["bm25_articles"]),
        dense_tickets=tuple(lists["dense_tickets"]),
        errors=tuple(errors),
    )
    ran = [o for o, _ in outcomes if not isinstance(o, _Skipped)]
    if all(isinstance(o, BaseException) for o in ran):
        return _empty(staged, latency, "search failed: " + "; ".join(errors))

    start = time.perf_counter()
    fused = fuse(lists["dense_chunks"], lists["bm25_articles"], lists["dense_tickets"], tuning, now)
    latency["fuse"] = (time.perf_counter() - start) * 1000.0
    staged = replace(staged, fused=tuple(fused))
    if not fused:
        return _empty(staged, latency, "no matches")

    ranked, latency["rerank"] = await _timed(
        rerank_candidates(
            base.rerank_query,
            fused,
            reranker,
            tuning.rerank_shortlist,
            tuning.rerank_reserved_per_ranker,
        ),
        tuning.rerank_budget_seconds,
    )
    if isinstance(ranked, BaseException):
        errors.append(f"rerank: {type(ranked).__name__}: {ranked}")
        log.warning("reranker %s failed: %s", reranker.name, ranked)
        ranked = unranked(fused[: tuning.rerank_shortlist])
    passages = ranked[: tuning.top_passages]
    top = passages[0].rerank_score if passages else None
    staged = replace(staged, reranked=tuple(ranked), passages=tuple(passages), top_rerank_score=top)
    start = time.perf_counter()
    conf = await _confidence(staged, reranker, embedder, tuning)
    latency["confidence"] = (time.perf_counter() - start) * 1000.0
    if conf.band == "strong":
        # a confident answer never leans on a passage the reranker itself scored below the floor
        bands = tuning.confidence.get(reranker.calibration or "") or tuning.confidence.get(
            tuning.confidence_fallback
        )
        floor = citation_floor(bands) if bands else 0.0
        passages = [p for p in passages if (p.rerank_score or 0.0) >= floor]
    elif conf.band == "weak":
        # a hedged answer says what the passages cover: not a passage the reranker all but
        # discarded (a webhooks sentence under an order question at 0.05); the best one stays
        low = tuning.weak_passage_floor
        passages = [p for i, p in enumerate(passages) if i == 0 or (p.rerank_score or 0.0) >= low]
    return replace(
        staged,
        passages=tuple(passages),
        confidence=conf.band,
        answerability=conf.answerability,
        confidence_reason=conf.reason,
        confidence_features=dict(conf.features),
        latency_ms=latency,
        errors=tuple(errors),
    )


def _scored(
    result: RetrievalResult, ranked: Sequence[RankedPassage], sentence: float = 0.0, top: int = 5
) -> Scored | None:
    scores = [p.rerank_score for p in ranked]
    if not ranked or any(s is None for s in scores):
        return None
    best = ranked[0].hit
    return Scored(
        rerank_scores=[float(s or 0.0) for s in scores],
        best_text=passage_text(best),
        best_doc=best.doc_id,
        dense_docs=list(dict.fromkeys(h.doc_id for h in result.dense_chunks)),
        bm25_docs=list(dict.fromkeys(h.doc_id for h in result.bm25_articles)),
        best_kind=best.kind,
        ticket_docs=list(dict.fromkeys(h.doc_id for h in result.dense_tickets)),
        sentence=sentence,
        synonyms=result.synonyms,
        texts=[passage_text(p.hit) for p in ranked[:top]],
    )


async def _sentence_feature(
    result: RetrievalResult,
    ranked: Sequence[RankedPassage],
    judge: OfflineReranker,
    embedder: Embedder,
    tuning: Tuning,
) -> float:
    """`confidence.sentence_match` over the sentences of the top `answer_sentence_passages`
    passages of `ranked`, and over each passage's `compared_statements` read as one; 0 when they
    cannot be embedded (the band then leans on the rest)."""
    hits = [p.hit for p in ranked[: tuning.answer_sentence_passages]]
    head = [(h.breadcrumb or h.title, answer_sentences(h.text)) for h in hits]
    units = [(s, heading) for heading, said in head for s in said]
    units += [
        (" ".join(both), heading)
        for heading, said in head
        if (both := compared_statements(result.query, said))
    ]
    if not units:
        return 0.0
    try:
        question_vector = result.query_vector or await embedder.embed_query(result.query)
        vectors = await judge.embed_texts([s for s, _ in units])
    except Exception as exc:  # best effort: without it the band is only more cautious
        log.warning("sentence evidence could not be embedded: %s", exc)
        return 0.0
    candidates = [
        Sentence(text=s, heading=heading, vector=v)
        for (s, heading), v in zip(units, vectors, strict=True)
    ]
    return sentence_match(
        result.query,
        question_vector,
        candidates,
        tuning.answer_sentence_coverage,
        synonyms=result.synonyms,
        language=result.filter.locale or DEFAULT_LOCALE,
    )


async def _confidence(
    result: RetrievalResult, reranker: Reranker, embedder: Embedder, tuning: Tuning
) -> Confidence:
    """The band, read against the active reranker's thresholds; a reranker without thresholds
    of its own has the top passages re-scored by the calibrated fallback (offline) reranker,
    and the band's reason says so."""
    question = result.query  # the standalone question: what the answer must cover
    calibration = reranker.calibration
    judge = (
        reranker
        if isinstance(reranker, OfflineReranker)
        else OfflineReranker(embedder, synonyms=result.synonyms)
    )
    if calibration in tuning.confidence or result.top_rerank_score is None:
        sentence = await _sentence_feature(result, result.reranked, judge, embedder, tuning)
        scored = _scored(result, result.reranked, sentence, tuning.top_passages)
        return decide(question, scored, calibration, tuning)
    fallback = tuning.confidence_fallback
    try:
        head = list(result.reranked[: tuning.top_passages])
        scores = await judge.rerank_with_vectors(
            result.rerank_query, [passage_text(p.hit) for p in head], [p.hit.vector for p in head]
        )
    except Exception as exc:  # the fallback is best effort: without it, no confidence
        log.warning("fallback confidence scoring failed: %s", exc)
        return decide(question, None, calibration, tuning)
    rescored = sorted(
        (replace(p, rerank_score=float(s)) for p, s in zip(head, scores, strict=True)),
        key=lambda p: -(p.rerank_score or 0.0),
    )
    sentence = await _sentence_feature(result, rescored, judge, embedder, tuning)
    return decide(
        question,
        _scored(result, rescored, sentence, tuning.top_passages),
        fallback,
        tuning,
        scored_by=reranker.name,
    )


def compared_statements(question: str, sentences: Sequence[str]) -> list[str]:
    """The statements of one passage that together name what a question naming two or more
    things asks about, when no single statement names them all: a comparison ("a Writer and a
    Reader") is answered by one statement on each (two items of the same list), and
    read one at a time neither looks like the answer. The first statement naming each name, in
    the passage's order; [] when the question names fewer than two things, one statement names
    them all, or one is named nowhere in the passage."""
    names = named_terms(question)
    if len(names) < 2:
        return []
    said = [term_set(s) for s in sentences]
    if any(all(n in terms for n in names) for terms in said):
        return []
    first = [next((i for i, terms in enumerate(said) if n in terms), None) for n in names]
    if None in first:
        return []
    return [sentences[i] for i in sorted({i for i in first if i is not None})]
