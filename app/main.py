"""The FastAPI app factory: `uvicorn app.main:create_app --factory`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from fastapi.staticfiles import StaticFiles

from app.api import admin, assist, conversations, demo, docs, health, knowledge, web
from app.api.middleware import BodySizeLimit, install_error_handlers
from app.api.security import SecurityHeaders
from app.errors import Misconfigured
from app.logs import configure_logging
from app.services import Services, build_services, start_background
from app.settings import Settings
from app.store import Store, StoreInUse, open_store
from tuning import TUNING, Tuning

STARTUP_FAILURE = 3  # uvicorn's exit code for "failed before serving": its supervisor stops too


def create_app(
    settings: Settings | None = None,
    tuning: Tuning = TUNING,
    services: Services | None = None,
) -> FastAPI:
    """Build the app. Tests may pass prepared `services`; otherwise they are built at start-up."""
    settings = settings or (services.settings if services else Settings())
    configure_logging(settings.log_level)
    insecure = settings.insecure_defaults()
    if insecure and not settings.demo:
        raise Misconfigured(
            f"refusing to start: {', '.join(insecure)} still have the published default values "
            f"(or are under 16 characters). Set them in the environment or .env, or run the "
            f"local demo with DEMO=1 (`make run` does)."
        )
    if problems := settings.llm_problems():
        raise Misconfigured(f"refusing to start: {'; '.join(problems)}.")
    store = None if services else _claim_store(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = services is None
        svc = services or await build_services(settings, tuning, store=store)
        app.state.services = svc
        if owned:
            start_background(svc)
        try:
            yield
        finally:
            if owned:
                await svc.close()

    app = FastAPI(
        title="Concierge",
        version="0.1.0",
        summary="Conversational customer support on MongoDB.",
        lifespan=lifespan,
        docs_url=None,  # served by app.api.docs from local assets, not a CDN
        redoc_url=None,
    )
    app.router.redirect_slashes = False  # a redirect would be built from the Host header
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=tuning.max_body_bytes)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,  # empty: same origin only
        allow_methods=["GET", "POST", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "Accept"],
        expose_headers=["Retry-After"],
        max_age=600,
    )
    app.add_middleware(SecurityHeaders)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts or ["*"])
    app.include_router(health.router)
    app.include_router(conversations.router)
    app.include_router(admin.router)
    app.include_router(assist.router)
    app.include_router(knowledge.router)
    if settings.demo:
        app.include_router(demo.router)
    app.include_router(web.router)
    app.include_router(docs.router)
    app.mount("/static", StaticFiles(directory=web.WEB, check_dir=False), name="static")
    return app


def _claim_store(settings: Settings) -> Store:
    """Open the store while the process starts, so a second process (or uvicorn worker) on the
    same embedded store refuses to start with one line instead of serving half the data."""
    try:
        return open_store(settings)
    except StoreInUse as exc:
        print(f"concierge: refusing to start: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_FAILURE) from None
