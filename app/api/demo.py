"""Demo-only helpers for /demo: identity tokens minted the way a host site's backend would.

This router is mounted only when `DEMO=1`, answers loopback clients only, and only over the
embedded store: minting a token for any customer is exactly what a host site must never expose.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException

from app.api.deps import ServicesDep
from app.api.schemas import DemoCustomers
from app.api.security import require_loopback
from app.api.views import error_responses
from app.identity import mint_identity

router = APIRouter(
    prefix="/v1/demo",
    tags=["demo"],
    responses=error_responses(404),
    dependencies=[Depends(require_loopback)],
)


@router.get("/customers", response_model=DemoCustomers)
async def demo_customers(services: ServicesDep) -> dict[str, Any]:
    """Seeded customers with short-lived identity tokens (embedded demo mode only)."""
    if not services.settings.demo or not services.store.embedded:
        raise HTTPException(404, detail="the demo customer switcher exists only in embedded mode")
    secret = services.settings.identity_secret.get_secret_value()
    customers = await services.store.customers.list()
    return {
        "customers": [
            {
                "id": c.id,
                "name": c.name,
                "plan": c.plan,
                "locale": c.locale,
                "identityToken": mint_identity(c.id, secret, minutes=60),
            }
            for c in customers
        ]
    }
