"""Who is talking: identity from a verified token only, never from a request body or the model.

A host site's backend signs a short-lived HS256 JWT (`sub` = customer id, `exp`) with
IDENTITY_SECRET; the widget exchanges it for our own session token (signed with SESSION_SECRET).
An unsigned, forged or expired identity is rejected: there is no fall-back to the claimed id.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    epoch: str | None = None  # the customer's session epoch when it was minted
    locale: str | None = None  # an anonymous visitor's language, chosen when the session began

    @property
    def anonymous(self) -> bool:
        return self.customer_id is None


@dataclass(frozen=True)
class IdentityClaims:
    """What a verified host identity token says about its customer (optional fields None)."""

    sub: str
    name: str | None = None
    email: str | None = None
    plan: str | None = None
    locale: str | None = None


@dataclass(frozen=True)
class IdentityKeys:
    """How host tokens are checked: the default secret, extra secrets by `kid` (rotation),
    and the `iss` / `aud` a token must carry when configured (ignored when not)."""

    secret: str
    by_kid: Mapping[str, str] = field(default_factory=dict)
    issuer: str | None = None
    audience: str | None = None


def _secret_for(token: str, keys: IdentityKeys) -> str:
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(f"identity token is invalid: {exc}") from exc
    if kid is None:
        return keys.secret
    if not isinstance(kid, str) or kid not in keys.by_kid:
        raise Unauthenticated("identity token names an unknown signing key (kid)")
    return keys.by_kid[kid]


def _subject(value: object) -> str:
    """`sub` as a string: host ids are often numbers; booleans, floats and blanks are not ids."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise Unauthenticated("identity token's sub must be a string or an integer customer id")
    sub = str(value).strip()
    if not sub or len(sub) > 200:
        raise Unauthenticated("identity token's sub must be 1-200 characters")
    return sub


def _text(claims: dict[str, object], key: str, limit: int) -> str | None:
    value = claims.get(key)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:limit]


def verify_identity_claims(
    token: str, keys: IdentityKeys, now: datetime | None = None
) -> IdentityClaims:
    """The claims of a host-signed identity JWT; raises Unauthenticated otherwise.

    Required: `sub` (string or integer), `exp`. Honoured: `iat` (lifetime ≤ 24 h), `kid`,
    `iss` and `aud` (checked when IDENTITY_ISSUER / IDENTITY_AUDIENCE are set). Optional
    profile claims: `name`, `email`, `plan`, `locale` (used to create or update the customer).
    """
    secret = _secret_for(token, keys)
    require = ["sub", "exp"] + (["iss"] if keys.issuer else []) + (["aud"] if keys.audience else [])
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[_ALG],
            options={
                "require": require,
                "verify_aud": keys.audience is not None,
                "verify_sub": False,  # checked by _subject: integer ids are ids too
            },
            audience=keys.audience,
            issuer=keys.issuer,
            leeway=30,
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthenticated("identity token has expired") from exc
    except jwt.InvalidAudienceError as exc:
        expected = f"expected aud {keys.audience!r}"
        raise Unauthenticated(f"identity token is for another audience ({expected})") from exc
    except jwt.InvalidIssuerError as exc:
        expected = f"expected iss {keys.issuer!r}"
        raise Unauthenticated(f"identity token has the wrong issuer ({expected})") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthenticated(f"identity token is invalid: {exc}") from exc
    sub = _subject(claims.get("sub"))
    # Lifetime is judged from `exp` against the time of use, so leaving out `iat` gains nothing.
    now = now or datetime.now(UTC)
    remaining = datetime.fromtimestamp(float(claims["exp"]), UTC) - now
    if remaining > IDENTITY_MAX_LIFETIME + timedelta(seconds=30):
        raise Unauthenticated("identity token lifetime is too long (max 24h)")
    iat = claims.get("iat")
    if isinstance(iat, int | float):
        lifetime = datetime.fromtimestamp(float(claims["exp"]), UTC) - datetime.fromtimestamp(
            float(iat), UTC
        )
        if lifetime > IDENTITY_MAX_LIFETIME:
            raise Unauthenticated("identity token lifetime is too long (max 24h)")
    email = _text(claims, "email", 320)
    return IdentityClaims(
        sub=sub,
        name=_text(claims, "name", 200),
        email=email if email and "@" in email else None,
        plan=_text(claims, "plan", 40),
        locale=_text(claims, "locale", 35),
    )


def verify_identity(token: str, secret: str, now: datetime | None = None) -> str:
    """The customer id from a host-signed identity JWT; raises Unauthenticated otherwise."""
    return verify_identity_claims(token, IdentityKeys(secret=secret), now).sub


def mint_identity(customer_id: str, secret: str, minutes: int = 60) -> str:
    """What a host site's backend does (used by the demo page and tests)."""
    now = datetime.now(UTC)
    claims = {"sub": customer_id, "iat": now, "exp": now + timedelta(minutes=minutes)}
    return jwt.encode(claims, secret, algorithm=_ALG)


def mint_session(
    customer_id: str | None, secret: str, locale: str | None = None, epoch: str | None = None
) -> tuple[str, datetime]:
    """A session token; a customer's carries their session epoch (checked on every use)."""
    now = datetime.now(UTC)
    exp = now + timedelta(hours=SESSION_HOURS)
    claims: dict[str, object] = {"sid": secrets.token_hex(12), "iat": now, "exp": exp}
    if customer_id:
        claims["cid"] = customer_id
        claims["ep"] = epoch or ""
    else:
        claims["aid"] = secrets.token_hex(16)
        if locale:
            claims["loc"] = locale
    return jwt.encode(claims, secret, algorithm=_ALG), exp


def verify_session(token: str, secret: str) -> Principal:
    try:
        claims = jwt.decode(token, secret, algorithms=[_ALG], options={"require": ["exp", "sid"]})
        if claims.get("typ") == VIEW_TYP:
            raise jwt.InvalidTokenError("a view token is not a session")
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
        epoch=str(claims.get("ep", "")) if cid else None,
        locale=str(claims["loc"]) if not cid and isinstance(claims.get("loc"), str) else None,
    )


VIEW_TYP = "article-view"
VIEW_TOKEN_MINUTES = 60  # a citation is clicked during the chat, not a week later


def view_key(session_secret: str, view_secret: str | None = None) -> str:
    """The key for article view tokens: VIEW_SECRET, or one derived from SESSION_SECRET for this
    purpose only (so a view token can never pass as a session, nor the reverse)."""
    if view_secret:
        return view_secret
    return hmac.new(
        session_secret.encode(), b"concierge/article-view/v1", hashlib.sha256
    ).hexdigest()


def article_view_token(slug: str, plan: str, key: str, minutes: int = VIEW_TOKEN_MINUTES) -> str:
    """A link token for a restricted article: exactly this page, for a viewer on `plan`."""
    exp = datetime.now(UTC) + timedelta(minutes=minutes)
    claims = {"slug": slug, "plan": plan, "exp": exp, "typ": VIEW_TYP}
    return jwt.encode(claims, key, algorithm=_ALG)


def article_view_plan(token: str | None, slug: str, key: str) -> str | None:
    """The plan a valid view token for `slug` was issued to, or None."""
    try:
        claims = jwt.decode(token or "", key, algorithms=[_ALG], options={"require": ["exp"]})
    except jwt.InvalidTokenError:
        return None
    if claims.get("typ") != VIEW_TYP or claims.get("slug") != slug:
        return None
    plan = claims.get("plan")
    return plan if isinstance(plan, str) else None
