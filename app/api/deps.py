"""FastAPI dependencies as Annotated aliases: services, the verified session, the admin token."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.errors import Unauthenticated
from app.identity import Principal, verify_session
from app.services import Services

_bearer = HTTPBearer(auto_error=False)


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail=detail, headers={"WWW-Authenticate": "Bearer"})


async def get_principal(services: ServicesDep, creds: Credentials) -> Principal:
    """The caller, from our signed session token only; a signed-out session is refused."""
    if creds is None:
        raise _unauthorized("missing session token: POST /v1/sessions first")
    try:
        principal = verify_session(
            creds.credentials, services.settings.session_secret.get_secret_value()
        )
    except Unauthenticated as exc:
        raise _unauthorized(str(exc)) from exc
    if await services.store.revoked_sessions.is_revoked(principal.session_id):
        raise _unauthorized("session has been signed out; start a new one")
    return principal


def require_admin(services: ServicesDep, creds: Credentials) -> str:
    expected = services.settings.admin_token.get_secret_value()
    if creds is None or not hmac.compare_digest(creds.credentials.encode(), expected.encode()):
        raise _unauthorized("admin token required")
    return "admin"


PrincipalDep = Annotated[Principal, Depends(get_principal)]
AdminDep = Annotated[str, Depends(require_admin)]
