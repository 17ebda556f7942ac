"""FastAPI dependencies as Annotated aliases: services, the verified session, the admin token."""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.api.security import client_address
from app.errors import RateLimited, Unauthenticated
from app.identity import Principal, verify_session
from app.ratelimit import admin_locked_out, check_write_limit, note_admin_failure
from app.services import Services

_bearer = HTTPBearer(auto_error=False)


async def get_services(request: Request) -> Services:
    """The app's services (async: FastAPI would run a plain `def` in a worker thread)."""
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail=detail, headers={"WWW-Authenticate": "Bearer"})


async def get_principal(services: ServicesDep, creds: Credentials) -> Principal:
    """The caller, from our signed session token only. A signed-out session is refused, and a
    customer's session ends when the customer is deleted or their sessions are revoked (the epoch
    it carries no longer matches the customer's)."""
    if creds is None:
        raise _unauthorized("missing session token: POST /v1/sessions first")
    try:
        principal = verify_session(
            creds.credentials, services.settings.session_secret.get_secret_value()
        )
    except Unauthenticated as exc:
        raise _unauthorized(str(exc)) from exc
    ended = await session_ended(services, principal)
    if ended:
        raise _unauthorized(ended)
    return principal


async def session_ended(services: Services, principal: Principal) -> str | None:
    """Why a verified session no longer counts (signed out, customer deleted or revoked), else
    None. Read from the store, so an open stream on any worker can ask it again."""
    if await services.store.revoked_sessions.is_revoked(principal.session_id):
        return "session has been signed out; start a new one"
    if principal.customer_id is not None:
        customer = await services.store.customers.get(principal.customer_id)
        if customer is None or not hmac.compare_digest(
            customer.session_epoch.encode(), (principal.epoch or "").encode()
        ):
            return "session has been revoked; start a new one"
    return None


async def require_admin(services: ServicesDep, creds: Credentials, request: Request) -> str:
    """The admin bearer token; an address that keeps guessing is locked out for a minute."""
    address = client_address(request)
    limit = services.tuning.rate_limit_admin_failures_per_minute
    wait = await admin_locked_out(services.store, address, limit)
    if wait:
        raise RateLimited(wait, "admin token failures per address")
    expected = services.settings.admin_token.get_secret_value()
    if creds is None or not hmac.compare_digest(creds.credentials.encode(), expected.encode()):
        await note_admin_failure(services.store, address)
        raise _unauthorized("admin token required")
    return "admin"


def write_limit(scope: str, field: str) -> Any:
    """A dependency counting one `scope` write per real client address against tuning.`field`."""

    async def limited(services: ServicesDep, request: Request) -> None:
        limit = int(getattr(services.tuning, field))
        await check_write_limit(services.store, scope, client_address(request), limit)

    return Depends(limited)


PrincipalDep = Annotated[Principal, Depends(get_principal)]
AdminDep = Annotated[str, Depends(require_admin)]
