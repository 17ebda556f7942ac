"""The long-lived objects one process holds, built explicitly from settings (never at import)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from app.providers.chat import build_chat_model, build_fallback_chat_model
from app.providers.chat.base import ChatModel
from app.providers.embeddings import build_embedder
from app.providers.embeddings.base import Embedder
from app.providers.rerank import build_reranker
from app.providers.rerank.base import Reranker
from app.settings import Settings
from app.store import Store, open_store
from app.store.indexes import ensure_regular_indexes
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
    chat_model: ChatModel
    fallback_model: ChatModel
    search: Any = None  # a SearchBackend once the corpus is indexed
    corpus_ready: bool = False
    startup_error: str | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _background: set[asyncio.Task[Any]] = field(default_factory=set)

    async def readiness(self) -> dict[str, Any]:
        """What /readyz reports: the store answers and the corpus is searchable."""
        store_ok = await self.store.ping()
        checks: dict[str, Any] = {"store": store_ok, "corpus": self.corpus_ready}
        if self.startup_error:
            checks["error"] = self.startup_error
        checks["ready"] = bool(store_ok and self.corpus_ready)
        return checks

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
        await self.store.close()


async def build_services(
    settings: Settings,
    tuning: Tuning = TUNING,
    *,
    embedder: Embedder | None = None,
    store: Store | None = None,
) -> Services:
    store = store or open_store(settings)
    await ensure_regular_indexes(store.db)
    embedder = embedder or build_embedder(settings, tuning)
    return Services(
        settings=settings,
        tuning=tuning,
        store=store,
        embedder=embedder,
        reranker=build_reranker(settings, embedder),
        router=Router(embedder),
        chat_model=build_chat_model(settings),
        fallback_model=build_fallback_chat_model(),
    )


async def prepare_corpus(services: Services) -> None:
    """Seed (embedded mode) and build the search backend; marks the corpus ready."""
    from app.seed import seed_store

    try:
        s = services.settings
        if services.store.embedded and s.seed_on_start:
            report = await seed_store(services.store, services.embedder, s.seed_dir)
            log.info("seed complete", extra={"report": report.summary()})
        await services.router.warm()
        save = getattr(services.embedder, "save", None)
        if callable(save):
            await asyncio.to_thread(save)
        services.search = await build_search(services)
        articles = await services.store.articles.count({"status": "published"})
        services.corpus_ready = articles > 0
        if not services.corpus_ready:
            services.startup_error = "no published articles: run `make seed` / `make ingest`"
    except Exception as exc:  # the service stays up and says why it is not ready
        log.exception("corpus preparation failed")
        services.startup_error = f"corpus preparation failed: {exc}"


async def build_search(services: Services) -> Any:
    """LocalSearch over the embedded store, AtlasSearch against a real cluster."""
    from app.search import open_search

    return await open_search(services.store, services.tuning)


async def ttl_sweeper(services: Services) -> None:
    """Embedded mode only: the in-process store has no TTL monitor, so sweep on a timer."""
    while True:
        await asyncio.sleep(services.settings.ttl_sweep_seconds)
        try:
            removed = await services.store.db.sweep_expired()
            if removed:
                log.info("ttl sweep", extra={"removed": removed})
        except Exception:
            log.exception("ttl sweep failed")


def start_background(services: Services) -> None:
    services._tasks.append(asyncio.create_task(prepare_corpus(services)))
    if services.store.embedded:
        services._tasks.append(asyncio.create_task(ttl_sweeper(services)))
