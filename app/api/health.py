"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import ServicesDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (it may still be loading the corpus)."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None, responses={503: {"description": "Not ready yet"}})
async def readyz(services: ServicesDep) -> JSONResponse | dict[str, Any]:
    """200 when the store answers and the corpus is indexed and searchable; 503 otherwise."""
    checks = await services.readiness()
    if not checks["ready"]:
        return JSONResponse(checks, status_code=503)
    return checks
