"""The long-lived objects one process holds, built explicitly from settings (never at import)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from app.providers.chat import build_chat_model, build_fallback_chat_model
from app.providers.chat.base import ChatModel
from app.providers.embeddings import build_embedder
from app.providers.embeddings.base import Embedder
from app.providers.errors import ProviderError
from app.providers.health import ProviderHealth
from app.providers.rerank import build_reranker
from app.providers.rerank.base import Reranker
from app.settings import Settings
from app.store import Store, open_store
from app.store.indexes import ensure_regular_indexes, search_index_readiness
from app.tenant import Tenant, load_tenant
from app.turn.router import Router
from tuning import TUNING, Tuning

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Services:
    settings: Settings
    tuning: Tuning
    store: Store
    embedder: Embedder
    reranker: Reranker
    router: Router
    tenant: Tenant
    chat_model: ChatModel
    fallback_model: ChatModel
    search: Any = None  # a SearchBackend once the corpus is indexed
    corpus_ready: bool = False
    startup_error: str | None = None
    leaks: dict[str, Any] | None = None  # template syntax left in served pages (/readyz)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _background: set[asyncio.Task[Any]] = field(default_factory=set)

    @cached_property
    def prompt_reference(self) -> str:
        """The tenant reference block every model prompt starts with (stable: built once)."""
        from app.turn.reference import tenant_reference

        return tenant_reference(self.tenant, self.tuning)

    async def readiness(self) -> dict[str, Any]:
        """What /readyz reports: the store answers and the corpus is searchable; and each
        provider's state, so a revoked key or unknown model is visible, not just silently
        answered offline. A provider configuration error marks the worker `degraded` but not
        unready: every worker shares the configuration, and offline answers beat none."""
        store_ok = await self.store.ping()
        checks: dict[str, Any] = {
            "store": store_ok,
            "corpus": self.corpus_ready,
            "storage": self.store.describe(),
        }
        if self.startup_error:
            checks["error"] = self.startup_error
        providers = self.provider_status()
        checks["providers"] = providers
        checks["degraded"] = sorted(k for k, v in providers.items() if not v["ok"])
        search_ok = True
        if store_ok:  # Atlas returns no error for a missing index: every turn would escalate
            try:
                indexes = await search_index_readiness(self.store, self.embedder.dimensions)
            except Exception as exc:
                indexes = {"backend": "atlas", "ok": False, "error": f"index check failed: {exc}"}
            checks["searchIndexes"] = indexes
            search_ok = bool(indexes["ok"])
        checks["ready"] = bool(store_ok and self.corpus_ready and search_ok)
        if self.leaks is not None:
            checks["details"] = {"leaks": self.leaks}
        return checks

    def provider_status(self) -> dict[str, dict[str, Any]]:
        """Each network provider's health (configuration errors, failures by kind)."""
        out: dict[str, dict[str, Any]] = {}
        for role, provider in (
            ("chat", self.chat_model),
            ("embeddings", self.embedder),
            ("rerank", self.reranker),
        ):
            health = _health_of(provider)
            if health is not None:
                out[role] = health.view()
        return out

    def spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run work that must finish even if the request that started it goes away."""
        task: asyncio.Task[T] = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def close(self) -> None:
        for task in list(self._background):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), timeout=10)
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for provider in (self.chat_model, self.embedder, self.reranker):  # pooled HTTP clients
            close = _unwrapped_attr(provider, "aclose")
            if callable(close):
                with contextlib.suppress(Exception):
                    await close()
        await self.store.close()


def _unwrapped_attr(provider: object, name: str) -> Any:
    """`name` on a provider or on the provider it wraps (cache and memo layers: `.inner`)."""
    for _ in range(5):
        if provider is None:
            return None
        if name in getattr(provider, "__dict__", {}) or hasattr(type(provider), name):
            return getattr(provider, name)
        provider = getattr(provider, "inner", None)
    return None


def _health_of(provider: object) -> ProviderHealth | None:
    health = _unwrapped_attr(provider, "health")
    return health if isinstance(health, ProviderHealth) else None


async def probe_providers(services: Services) -> None:
    """At start: measure the cacheable prefixes (answer, anonymous and signed in; condensation)
    with the token-counting endpoint (free), which also proves the key and model name work; the
    counts, and whether each reaches the model's cache minimum, are in /readyz. The adapter then
    decides each call's cache breakpoint from these measurements instead of its estimate.
    An adapter without token counting may offer `probe()` instead (e.g. a model list)."""
    measure = getattr(services.chat_model, "measure_prefix", None)
    health = _health_of(services.chat_model)
    probe = getattr(services.chat_model, "probe", None)
    if callable(probe) and health is not None:
        try:
            await probe()
        except ProviderError as exc:  # recorded in the adapter's health (config errors included)
            log.warning("provider probe failed: %s", exc)
    if not callable(measure) or health is None:
        return
    from app.turn.condense import CONDENSE_SCHEMA
    from app.turn.condense import SYSTEM_PROMPT as CONDENSE_PROMPT
    from app.turn.prompt import SYSTEM_PROMPT
    from app.turn.reference import with_reference
    from app.turn.tools import TOOL_SPECS

    system = with_reference(SYSTEM_PROMPT, services.prompt_reference)
    try:
        anonymous = await measure(system, ())
        signed_in = await measure(system, TOOL_SPECS)
        measure_json = getattr(services.chat_model, "measure_json_prefix", None)
        condense = (
            await measure_json(
                with_reference(CONDENSE_PROMPT, services.prompt_reference), CONDENSE_SCHEMA
            )
            if callable(measure_json)
            else None
        )
    except ProviderError as exc:  # recorded in the adapter's health (config errors included)
        log.warning("provider probe failed: %s", exc)
        return
    counts = {"anonymous": anonymous, "signedIn": signed_in, "condense": condense}
    health.facts["prefixTokens"] = counts
    minimum = health.facts.get("cacheMinTokens")
    if isinstance(minimum, int):  # below the model's minimum the API silently caches nothing
        health.facts["prefixCacheable"] = {
            k: v >= minimum for k, v in counts.items() if isinstance(v, int)
        }


async def build_services(
    settings: Settings,
    tuning: Tuning = TUNING,
    *,
    embedder: Embedder | None = None,
    store: Store | None = None,
) -> Services:
    store = store or open_store(settings)
    await ensure_regular_indexes(store.db)
    if store.describe()["mode"] == "embedded-file":  # one owning process: safe to repair
        await store.conversations.reclaim_unused_seqs()
    embedder = embedder or build_embedder(settings, tuning)
    tenant = load_tenant(
        settings.tenant_file or settings.articles_dir or settings.seed_dir,
        docs_only=settings.docs_only,
    )
    return Services(
        settings=settings,
        tuning=tuning,
        store=store,
        embedder=embedder,
        reranker=build_reranker(settings, embedder, tuning, tenant.synonym_table),
        router=Router(embedder, tenant=tenant),
        tenant=tenant,
        chat_model=build_chat_model(settings, tuning),
        fallback_model=build_fallback_chat_model(),
    )


async def prepare_corpus(services: Services) -> None:
    """Seed (embedded mode) and build the search backend; marks the corpus ready."""
    from app.seed import seed_store

    try:
        s = services.settings
        if services.store.embedded and s.seed_on_start and s.articles_dir is not None:
            if s.articles_url:
                await _crawl(services, s.articles_url, s.articles_dir)
            await _ingest_articles_dir(services, s.articles_dir)
        elif services.store.embedded and s.seed_on_start:
            report = await seed_store(
                services.store, services.embedder, s.seed_dir, quarantine=s.quarantine_flagged
            )
            log.info("seed complete", extra={"report": report.summary()})
        await services.router.warm()
        # the typo repair's word list (~0.4 s to read) is loaded now, not on the first turn
        from app.providers.dictionary import known_words

        for locale in services.tenant.locales:
            await asyncio.to_thread(known_words, locale)
        save = getattr(services.embedder, "save", None)
        if callable(save):
            await asyncio.to_thread(save)
        services.search = await build_search(services)
        services.leaks = await _leaks(services)
        articles = await services.store.articles.count({"status": "published"})
        services.corpus_ready = articles > 0
        if not services.corpus_ready and services.startup_error is None:
            services.startup_error = "no published articles: run `make seed` / `make ingest`"
    except Exception as exc:  # the service stays up and says why it is not ready
        log.exception("corpus preparation failed")
        services.startup_error = f"corpus preparation failed: {exc}"


async def _crawl(services: Services, url: str, folder: Path) -> None:
    """ARTICLES_URL: fetch the site's changed pages into its folder (`app.ingest.crawl`)."""
    from app.ingest.crawl import CrawlLimits, crawl_site

    limits = CrawlLimits(allow_private=services.settings.crawl_allow_private)
    report = await crawl_site(url, folder, limits)
    log.info("site crawled", extra={"url": url, "report": report.summary()})


async def _leaks(services: Services) -> dict[str, Any]:
    """Template or dialect markers left in published pages (`app.ingest.leaks`)."""
    from app.ingest.leaks import leak_report

    published = await services.store.articles.list({"status": "published"})
    report = leak_report({a.slug: a.body for a in published})
    if report["markers"]:
        log.warning(
            "template syntax left in help pages",
            extra={"markers": report["markers"], "pages": report["pages"]},
        )
    return report


async def _ingest_articles_dir(services: Services, folder: Path) -> None:
    """ARTICLES_DIR: that folder's docs are the whole corpus (no customers, orders or tickets)."""
    from app.ingest.pipeline import ingest_corpus
    from app.ingest.progress import Eta, time_left

    eta = Eta(time.monotonic())

    def progress(done: int, total: int) -> None:
        left = time_left(time.monotonic() - eta.start, done, total)
        log.info(
            eta.line(time.monotonic(), done, total),
            extra={"folder": str(folder), "done": done, "total": total, "secondsLeft": left},
        )

    report = await ingest_corpus(
        services.store,
        services.embedder,
        folder,
        services.tuning,
        prune=True,  # the folder is the whole corpus: a file deleted since last run goes too
        default_audience=services.settings.audience_default,
        progress=progress,
        quarantine=services.settings.quarantine_flagged,
    )
    log.info("articles ingested", extra={"folder": str(folder), "report": report.counts()})
    await _import_tickets_in(services, folder)
    for problem in report.bad:
        log.warning("article rejected", extra={"path": problem.path, "reason": problem.reason})
    for note in report.warnings:
        log.info("article warning", extra={"path": note.path, "reason": note.reason})
    for path, found in report.leaks.items():
        log.warning(
            "template syntax left in a page",
            extra={"path": path, "leaks": len(found), "first": found[0].excerpt},
        )
    if not report.ingested and not report.unchanged:
        first = f" (first: {report.bad[0].path}: {report.bad[0].reason})" if report.bad else ""
        services.startup_error = (
            f"no articles loaded from ARTICLES_DIR={folder}: {len(report.bad)} files rejected"
            f"{first}; `make ingest SRC={folder} ARGS='--check --default-audience all'` lists "
            "every problem"
        )


async def _import_tickets_in(services: Services, folder: Path) -> None:
    """Ticket exports (CSV/JSONL) in an ARTICLES_DIR folder are imported as resolved tickets."""
    from app.ingest.pipeline import ingest_tickets
    from app.ingest.tickets import load_ticket_files, ticket_files

    exports, _ = ticket_files(folder)
    if not exports:
        return
    loaded = load_ticket_files([(p, p.as_posix()) for p in exports], services.settings.pii_mask)
    report = await ingest_tickets(
        services.store, services.embedder, loaded.tickets, services.tuning
    )
    log.info(
        "tickets imported",
        extra={
            "folder": str(folder),
            "added": len(report.tickets_added),
            "changed": len(report.tickets_changed),
            "unchanged": len(report.tickets_unchanged),
            "skipped": len(loaded.skipped),
            "bad": len(loaded.bad) + len(report.bad),
        },
    )
    for problem in [*loaded.bad, *report.bad]:
        log.warning("ticket rejected", extra={"path": problem.path, "reason": problem.reason})


async def build_search(services: Services) -> Any:
    """LocalSearch over the embedded store, AtlasSearch against a real cluster."""
    from app.search import open_search

    return await open_search(services.store, services.tuning)


async def ttl_sweeper(services: Services) -> None:
    """Embedded mode only: the in-process store has no TTL monitor, so sweep on a timer."""
    while True:  # first sweep at start: a durable store may hold documents that expired offline
        try:
            removed = await services.store.db.sweep_expired()
            if removed:
                log.info("ttl sweep", extra={"removed": removed})
        except Exception:
            log.exception("ttl sweep failed")
        await asyncio.sleep(services.settings.ttl_sweep_seconds)


def start_background(services: Services) -> None:
    services._tasks.append(asyncio.create_task(prepare_corpus(services)))
    services._tasks.append(asyncio.create_task(probe_providers(services)))
    if services.store.embedded:
        services._tasks.append(asyncio.create_task(ttl_sweeper(services)))
