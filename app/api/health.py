"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from app.api.deps import ServicesDep
from app.api.schemas import Health, Readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> dict[str, str]:
    """The process is up (it may still be loading the corpus)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=Readiness,
    response_model_exclude_unset=True,
    responses={503: {"model": Readiness, "description": "Not ready yet (see `error`)"}},
)
async def readyz(services: ServicesDep, response: Response) -> dict[str, Any]:
    """200 when the store answers and the corpus is indexed and searchable; 503 otherwise."""
    checks = await services.readiness()
    if not checks["ready"]:
        response.status_code = 503
    return checks
