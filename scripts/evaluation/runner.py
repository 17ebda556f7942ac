"""Run labelled cases through the real pipeline and record what each one produced.

Per case:
1. The customer: a stored `Customer` with the case's plan and locale (one per distinct pair), or
   an anonymous visitor.
2. A fresh conversation holding the case history as stored messages, exactly as the service
   would have left it: user turns card-masked, and every assistant turn carrying in its `meta`
   the `condensedQuestion` the offline condenser produces for the user turn before it (replayed
   in order), because that is where `run_turn` looks for the previous standalone question.
3. The full turn through `run_turn` (condense → policy → retrieve → tools → escalate → generate)
   on services built by `build_services` (offline LLM unless `--llm` names another); its stored
   assistant `meta` gives intent, escalation, confidence band, top passage, citations and
   per-stage latency.
4. Retrieval with both query forms through `retrieve()`: `original` searches and reranks with
   the message as written, alone; `condensed` searches with the turn's condensed question (read
   back from the stored meta; a follow-up it left as written is read after the customer's
   previous message) and reranks against the message, as the turn does. Every stage's ranked
   list is kept, and every passage of every stage is checked against the entitlement rules.

A message the API would refuse (blank, too long) is counted as rejected and measured no further.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.errors import InvalidInput
from app.identity import Principal
from app.ingest.pipeline import ingest_articles, ingest_tickets
from app.search import open_search
from app.services import Services, build_services
from app.settings import Settings
from app.store.models import Customer
from app.turn.condense import condense
from app.turn.engine import clean_message, run_turn
from app.turn.entitlement import audience_ladder, filter_for_customer
from app.turn.pii import mask_card_numbers
from app.turn.retrieve import RANKED_STAGES, RetrievalResult, retrieve
from scripts.evaluation.baseline import NaiveBaseline, NaiveResult
from scripts.evaluation.data import EvalCase, load_corpus
from scripts.evaluation.metrics import cosine
from tuning import Tuning

FORMS: tuple[str, ...] = ("original", "condensed")
RETRIEVAL_LATENCY_STAGES: tuple[str, ...] = (
    "embed",
    "dense_chunks",
    "bm25_articles",
    "dense_tickets",
    "fuse",
    "rerank",
)
PIPELINE_LATENCY_STAGES: tuple[str, ...] = ("condense", "generate", "total")
MAX_LEAK_EXAMPLES = 20


@dataclass
class Observation:
    """What one case produced; `None` where the pipeline did not get that far."""

    case: EvalCase
    rejected: str | None = None  # why the API would refuse the message
    error: str | None = None  # the turn failed (the stored reply is the error reply)
    condensed: str | None = None
    ranked: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # form → stage → ids
    leaks: list[str] = field(default_factory=list)
    intent: str | None = None
    escalated: bool | None = None
    escalation_reason: str | None = None
    confidence: str | None = None
    top_score: float | None = None
    top_doc: str | None = None
    citations: int = 0
    invalid_citations: int = 0
    latency: dict[str, float] = field(default_factory=dict)
    rewrite_cosine: float | None = None
    rewrite_baseline: float | None = None  # the message as written vs the human rewrite
    answer: str | None = None  # the stored reply text
    naive: NaiveResult | None = None  # the naive baselines on the same message
    # the condensed-form retrieval's answerability features and probability (per-case output)
    features: dict[str, float] = field(default_factory=dict)
    answerability: float | None = None

    @property
    def ran(self) -> bool:
        return self.rejected is None and self.intent is not None


@dataclass
class Prepared:
    services: Services
    corpus: str  # "seed" or the corpus path
    counts: dict[str, int]
    skipped_documents: list[str]
    ingest_seconds: float
    ingest_cpu_seconds: float  # this process's CPU time: comparable on a shared, busy machine
    embedding_cache: dict[str, int] | None = None  # disk-cache hits/misses while preparing
    baseline: NaiveBaseline | None = None


def eval_settings(reranker: str | None = None, llm: str = "offline") -> Settings:
    """Settings from the environment, forced to a fresh embedded store and to `llm` (offline
    unless the caller names another provider, which then reads its own settings)."""
    overrides: dict[str, Any] = {
        "mongodb_uri": None,
        "embedded_store": "memory",
        "llm": llm,
        "seed_on_start": False,
    }
    if reranker:
        overrides["reranker"] = reranker
    return Settings(**overrides)


async def prepare(settings: Settings, tuning: Tuning, corpus_path: Path | None) -> Prepared:
    """Services over a fresh embedded store holding the seed corpus or the given corpus.

    The configured embedder is used as is, including its disk cache of document vectors when
    EMBEDDING_CACHE_DIR is set (the vectors are the same, only faster); the harness never writes
    that cache, so an eval corpus does not end up in the service's cache file. Cache hits are
    reported with the ingest time, which is only a cold-start time when there were none.
    """
    services = await build_services(settings, tuning)
    store, embedder = services.store, services.embedder
    started, cpu_started = time.perf_counter(), time.process_time()
    skipped: list[str] = []
    if corpus_path is None:
        from app.seed import seed_store

        report = await seed_store(store, embedder, settings.seed_dir, tuning=tuning)
        skipped = list(report.errors)
        corpus = "seed"
    else:
        loaded = load_corpus(corpus_path)
        skipped = list(loaded.skipped)
        articles = await ingest_articles(store, embedder, loaded.articles, tuning)
        skipped += [f"{e.path}: {e.reason}" for e in articles.bad]
        tickets = await ingest_tickets(store, embedder, loaded.tickets, tuning)
        skipped += [f"{e.path}: {e.reason}" for e in tickets.bad]
        corpus = str(corpus_path)
    services.search = await open_search(store, tuning)
    services.corpus_ready = True
    baseline = await NaiveBaseline.build(
        await store.articles.list(), await store.tickets.all(), embedder
    )
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    # What the service does at start-up (and a warm cache would otherwise defer to the first
    # case): load the model and embed the router's exemplars, so case latencies are steady-state.
    await services.router.warm()
    await embedder.embed_query("warm-up")
    counts = {
        "articles": await store.articles.count({}),
        "chunks": await store.chunks.count({}),
        "tickets": await store.tickets.count({}),
    }
    cache = None
    if hasattr(embedder, "hits") and hasattr(embedder, "misses"):  # the disk-cached embedder
        cache = {"hits": int(embedder.hits), "misses": int(embedder.misses)}
    return Prepared(services, corpus, counts, skipped, seconds, cpu, cache, baseline)


class CaseRunner:
    """Runs cases one at a time against prepared services."""

    def __init__(self, services: Services, baseline: NaiveBaseline | None = None) -> None:
        self.services = services
        self.baseline = baseline
        self._customers: dict[tuple[str, str], Customer] = {}
        self._anonymous = 0

    async def _principal(self, case: EvalCase) -> tuple[Principal, Customer | None]:
        if not case.signed_in:
            self._anonymous += 1
            anon = f"eval-anonymous-{self._anonymous}"
            return Principal(session_id=anon, customer_id=None, anonymous_id=anon), None
        key = (case.plan or "", case.locale or "en")
        customer = self._customers.get(key)
        if customer is None:
            customer = Customer(
                id=f"eval-{key[0] or 'noplan'}-{key[1]}",
                name="Eval Customer",
                email="eval-customer@example.com",
                plan=key[0],
                locale=key[1],
                created_at=datetime.now(UTC),
            )
            await self.services.store.customers.upsert(customer)
            self._customers[key] = customer
        return Principal(
            session_id=f"eval-{customer.id}", customer_id=customer.id, anonymous_id=None
        ), customer

    async def _conversation(self, case: EvalCase, principal: Principal) -> Any:
        """A fresh conversation with the case history stored as the service would store it."""
        services = self.services
        store, tuning = services.store, services.tuning
        conv = await store.conversations.create(
            customer_id=principal.customer_id,
            anonymous_id=principal.anonymous_id,
            anonymous_ttl_days=tuning.anonymous_session_ttl_days,
        )
        stored: list[tuple[str, str]] = []
        previous: str | None = None  # what run_turn would read from the last assistant meta
        pending: Any = None  # the condensation of the latest user turn
        window = (tuning.verbatim_turns + 1) * 4  # as run_turn reads history
        for role, content in case.history:
            text = mask_card_numbers(content) if role == "user" else content
            meta: dict[str, Any] = {}
            if role == "assistant" and pending is not None:
                meta = {
                    "condensedQuestion": pending.standalone_question,
                    "intent": pending.intent,
                    "replayed": True,
                }
                previous = pending.standalone_question
                pending = None
            seq = await store.conversations.allocate_seq(conv.id)
            await store.messages.append(conv, seq=seq, role=role, content=text, meta=meta)
            if role == "user" and text.strip():
                pending = await condense(
                    text,
                    stored[-window:],
                    chat_model=None,
                    router=services.router,
                    prev_standalone=previous,
                )
            stored.append((role, text))
        return await store.conversations.get(conv.id) or conv

    async def run(self, case: EvalCase) -> Observation:
        services, tuning = self.services, self.services.tuning
        obs = Observation(case=case)
        try:
            content = clean_message(case.message, tuning)
        except InvalidInput as exc:
            obs.rejected = str(exc)
            return obs
        principal, customer = await self._principal(case)
        conv = await self._conversation(case, principal)

        result = await run_turn(services, principal, conv, content)
        meta: dict[str, Any] = dict(result.reply.meta) if result.reply else {}
        obs.answer = result.reply.content if result.reply else None
        obs.error = meta.get("error")
        obs.intent = meta.get("intent") or ("error" if obs.error else None)
        obs.escalated = bool(meta.get("escalated"))
        obs.escalation_reason = meta.get("escalationReason")
        obs.confidence = meta.get("confidence") or "none"
        score = meta.get("topRerankScore")
        obs.top_score = float(score) if isinstance(score, int | float) else None
        passages = meta.get("passages") or []
        obs.top_doc = passages[0].get("docId") if passages else None
        passage_ids = {p.get("id") for p in passages}
        citations = meta.get("citations") or []
        obs.citations = len(citations)
        obs.invalid_citations = int(meta.get("invalidCitations") or 0) + sum(
            1 for c in citations if c.get("passageId") not in passage_ids
        )
        latency = meta.get("latencyMs") or {}
        obs.latency = {k: float(latency[k]) for k in PIPELINE_LATENCY_STAGES if k in latency}

        condensed = meta.get("condensedQuestion")
        if not isinstance(condensed, str):  # the turn failed before condensing: do it here
            history = [
                (m.role, m.content)
                for m in await services.store.messages.last(conv.id, 64)
                if m.seq < result.user_message.seq
            ]
            cond = await condense(
                content, history, chat_model=None, router=services.router, prev_standalone=None
            )
            condensed = cond.standalone_question
        obs.condensed = condensed

        forbidden = set(case.forbidden or ())
        for doc in [p.get("docId") for p in passages] + [c.get("docId") for c in citations]:
            if doc in forbidden:
                obs.leaks.append(f"{case.id}: pipeline passage/citation {doc} is forbidden")

        plan = customer.plan if customer else None
        locale = customer.locale if customer else None
        ladder = set(audience_ladder(plan, tuning))
        if self.baseline is not None:
            filt = filter_for_customer(plan, locale, tuning)
            obs.naive = await self.baseline.query(
                content,
                services.embedder,
                sorted(filt.audiences),
                filt.locale,
                (filt.status, filt.ticket_status),
            )
        for form, query in (("original", content), ("condensed", condensed)):
            res = await retrieve(
                content,
                query,
                plan,
                locale,
                backend=services.search,
                embedder=services.embedder,
                reranker=services.reranker,
                tuning=tuning,
                # the message as written reads nothing before it; the condensed form, as the
                # turn does, reads the previous message (the answerability check, and the search
                # of a follow-up the condenser left as written)
                previous_message=(
                    mask_card_numbers(case.previous_message) if form == "condensed" else ""
                ),
                synonyms=services.tenant.synonym_table,
            )
            obs.ranked[form] = {s: res.ranked_doc_ids(s) for s in RANKED_STAGES}
            obs.leaks += _leaks(case, form, res, forbidden, ladder)
            if form == "condensed":
                obs.latency.update(_retrieval_latency(res))
                obs.features = {k: round(float(v), 5) for k, v in res.confidence_features.items()}
                obs.answerability = res.answerability
        return obs


def _leaks(
    case: EvalCase, form: str, res: RetrievalResult, forbidden: set[str], ladder: set[str]
) -> list[str]:
    out = []
    for stage in RANKED_STAGES:
        for hit in res.ranked_hits(stage):
            if hit.doc_id in forbidden:
                out.append(f"{case.id}: {form}/{stage} {hit.doc_id} is forbidden")
            elif hit.audience not in ladder:
                out.append(f"{case.id}: {form}/{stage} {hit.doc_id} has audience {hit.audience}")
    return out


def _retrieval_latency(res: RetrievalResult) -> dict[str, float]:
    """Stage latencies of a retrieval that ran every stage, plus its end-to-end time."""
    out = {"retrieve": float(res.latency_ms.get("total", 0.0))}
    if res.reason is None:
        out.update({k: float(res.latency_ms.get(k, 0.0)) for k in RETRIEVAL_LATENCY_STAGES})
    return out


async def score_rewrites(services: Services, observations: Sequence[Observation]) -> None:
    """Cosine (active embedder: MiniLM by default) between condensed question and the human
    rewrite, and the same for the message as written (the baseline), on cases carrying one."""
    todo = [o for o in observations if o.case.rewrite and o.condensed is not None]
    if not todo:
        return
    texts = [t for o in todo for t in (o.condensed or "", o.case.message, o.case.rewrite or "")]
    vectors = await services.embedder.embed_documents(texts)
    for i, obs in enumerate(todo):
        ours, message, gold = vectors[3 * i : 3 * i + 3]
        obs.rewrite_cosine = cosine(ours, gold)
        obs.rewrite_baseline = cosine(message, gold)


async def run_cases(
    services: Services,
    cases: Sequence[EvalCase],
    progress: Callable[[int, int, float], None] | None = None,
    baseline: NaiveBaseline | None = None,
) -> list[Observation]:
    runner = CaseRunner(services, baseline)
    out: list[Observation] = []
    started = time.perf_counter()
    for i, case in enumerate(cases, start=1):
        out.append(await runner.run(case))
        if progress is not None:
            progress(i, len(cases), time.perf_counter() - started)
    await score_rewrites(services, out)
    return out


def stderr_progress(every: int = 50) -> Callable[[int, int, float], None]:
    def report(done: int, total: int, seconds: float) -> None:
        if done % every == 0 or done == total:
            print(f"  {done}/{total} cases ({seconds:.0f}s)", file=sys.stderr, flush=True)

    return report
