"""Who is talking: identity from a verified token only, never from a request body or the model.

A host site's backend signs a short-lived HS256 JWT (`sub` = customer id, `exp`) with
IDENTITY_SECRET; the widget exchanges it for our own session token (signed with SESSION_SECRET).
An unsigned, forged or expired identity is rejected: there is no fall-back to the claimed id.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import jwt

from app.errors import Unauthenticated

SESSION_HOURS = 12
IDENTITY_MAX_LIFETIME = timedelta(hours=24)  # a longer-lived identity token is not "short-lived"
_ALG = "HS256"


@dataclass(frozen=True)
class Principal:
    """The verified caller of a customer endpoint."""

    session_id: str
    customer_id: str | None
    anonymous_id: str | None

    @property
    def anonymous(self) -> bool:
        return self.customer_id is None


def verify_identity(token: str, secret: str, now: datetime | None = None) -> str:
    """The customer id from a host-signed identity JWT; raises Unauthenticated otherwise."""
    try:
        claims = jwt.decode(
            token, secret, algorithms=[_ALG], options={"require": ["sub", "exp"]}, leeway=30
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("identity token has expired") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(f"identity token is invalid: {exc}") from exc
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise Unauthenticated("identity token has no subject")
    iat = claims.get("iat")
    if isinstance(iat, int | float):
        lifetime = datetime.fromtimestamp(float(claims["exp"]), UTC) - datetime.fromtimestamp(
            float(iat), UTC
        )
        if lifetime > IDENTITY_MAX_LIFETIME:
            raise Unauthenticated("identity token lifetime is too long (max 24h)")
    return sub


def mint_identity(customer_id: str, secret: str, minutes: int = 60) -> str:
    """What a host site's backend does (used by the demo page and tests)."""
    now = datetime.now(UTC)
    claims = {"sub": customer_id, "iat": now, "exp": now + timedelta(minutes=minutes)}
    return jwt.encode(claims, secret, algorithm=_ALG)


def mint_session(customer_id: str | None, secret: str) -> tuple[str, datetime]:
    now = datetime.now(UTC)
    exp = now + timedelta(hours=SESSION_HOURS)
    claims: dict[str, object] = {"sid": secrets.token_hex(12), "iat": now, "exp": exp}
    if customer_id:
        claims["cid"] = customer_id
    else:
        claims["aid"] = secrets.token_hex(16)
    return jwt.encode(claims, secret, algorithm=_ALG), exp


def verify_session(token: str, secret: str) -> Principal:
    try:
        claims = jwt.decode(token, secret, algorithms=[_ALG], options={"require": ["exp", "sid"]})
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("session has expired; start a new one") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated("session token is invalid") from exc
    cid, aid = claims.get("cid"), claims.get("aid")
    if not (isinstance(cid, str) and cid) and not (isinstance(aid, str) and aid):
        raise Unauthenticated("session token has no principal")
    return Principal(
        session_id=str(claims["sid"]),
        customer_id=cid if isinstance(cid, str) and cid else None,
        anonymous_id=None if cid else str(aid),
    )


def article_view_token(slug: str, secret: str, days: int = 7) -> str:
    """A link token for a restricted article: lets a citation open exactly that page."""
    exp = datetime.now(UTC) + timedelta(days=days)
    return jwt.encode({"slug": slug, "exp": exp, "typ": "article"}, secret, algorithm=_ALG)


def article_view_allowed(token: str | None, slug: str, secret: str) -> bool:
    try:
        claims = jwt.decode(token or "", secret, algorithms=[_ALG])
    except jwt.InvalidTokenError:
        return False
    return claims.get("slug") == slug and claims.get("typ") == "article"
