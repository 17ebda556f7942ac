"""The long-lived objects one process holds, built explicitly from settings (never at import)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import Request

from app.errors import RateLimited
from app.identity import Principal, article_view_token
from app.providers.chat import build_chat_model, build_fallback_chat_model
from app.providers.chat.base import ChatMessage, ChatModel, Usage
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

    async def chat_model_for_turn(self) -> tuple[ChatModel, bool]:
        """The configured model, or the offline one once today's spend reached the cap."""
        if self.chat_model.name == "offline":
            return self.chat_model, False
        if await self.store.spend.today() >= self.tuning.daily_spend_cap_usd:
            await self.store.spend.note_fallback()
            return self.fallback_model, True
        return self.chat_model, False

    def condense_model(self, model: ChatModel) -> Any:
        """Adapts a provider to the condenser's `complete_json(system, [dict], schema) -> dict`."""
        return _CondenseAdapter(self, model)

    async def record_spend(self, answer: Any) -> None:
        usage = getattr(answer, "usage", None)
        model = str(getattr(answer, "model", ""))
        if isinstance(usage, Usage) and model.startswith("anthropic"):
            await self.add_usage(usage)

    async def add_usage(self, usage: Usage) -> None:
        s = self.settings
        # Cache reads bill at ~0.1x the input price and cache writes at ~1.25x (Anthropic pricing).
        usd = (
            usage.input * s.llm_price_input_per_mtok_usd
            + usage.cache_read * s.llm_price_input_per_mtok_usd * 0.1
            + usage.cache_write * s.llm_price_input_per_mtok_usd * 1.25
            + usage.output * s.llm_price_output_per_mtok_usd
        ) / 1_000_000
        await self.store.spend.add(usd, usage.input, usage.output)

    def article_url(self, slug: str, audience: str) -> str:
        """Where a citation links: the help page, with a view token for restricted articles."""
        if audience == "all":
            return f"/help/{slug}"
        token = article_view_token(slug, self.settings.session_secret.get_secret_value())
        return f"/help/{slug}?v={token}"

    def spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run work that must finish even if the request that started it goes away."""
        task: asyncio.Task[T] = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def check_rate_limits(self, principal: Principal, request: Request) -> None:
        """Per session and per client address, counted in MongoDB so every worker agrees."""
        address = request.client.host if request.client else "unknown"
        limits = (
            ("session", principal.session_id, self.tuning.rate_limit_session_per_minute),
            ("address", address, self.tuning.rate_limit_address_per_minute),
        )
        for scope, key, limit in limits:
            count, retry = await self.store.rate_limits.hit(scope, key, window_s=60)
            if count > limit:
                raise RateLimited(retry, scope)

    async def spend_status(self) -> dict[str, Any]:
        usd = await self.store.spend.today()
        cap = self.tuning.daily_spend_cap_usd
        return {
            "usd": round(usd, 4),
            "capUsd": cap,
            "capReached": usd >= cap,
            "fallbackTurnsToday": await self.store.spend.fallbacks_today(),
        }

    async def delete_customer(self, customer_id: str) -> dict[str, int]:
        return await self.store.delete_customer(customer_id)

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
            report = await seed_store(
                services.store, services.embedder, s.seed_dir, quarantine=s.quarantine_flagged
            )
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


class _CondenseAdapter:
    def __init__(self, services: Services, model: ChatModel) -> None:
        self._services = services
        self._model = model
        self.name = model.name

    async def complete_json(
        self, system: str, messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> dict[str, Any]:
        msgs = [ChatMessage(m["role"], m["content"]) for m in messages]  # type: ignore[arg-type]
        timeout = self._services.settings.anthropic_timeout_seconds
        reply = await asyncio.wait_for(self._model.complete_json(system, msgs, schema), timeout)
        await self._services.add_usage(reply.usage)
        return dict(reply.data)


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
