"""A host's signed-in customer becomes ours: identity claims create or update the customer.

The host site is the system of record for who its customers are. Its backend signs an
identity token (see `app/identity.py`); a `sub` we have never seen creates the customer (plan
from the `plan` claim, else the free rung), and a known one is updated from whichever of
`name`, `email`, `plan` and `locale` the token carries. Without this, a customer the host
knows but we don't yet would be refused at the door.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.identity import IdentityClaims, IdentityKeys
from app.settings import Settings
from app.store import Store
from app.store.models import Customer
from app.turn.entitlement import FREE_PLAN, normalize_locale


def identity_keys(settings: Settings) -> IdentityKeys:
    """The secrets and expected `iss` / `aud` identity tokens are checked against."""
    return IdentityKeys(
        secret=settings.identity_secret.get_secret_value(),
        by_kid={kid: key.get_secret_value() for kid, key in settings.identity_keys.items()},
        issuer=settings.identity_issuer,
        audience=settings.identity_audience,
    )


def _plan(claim: str | None, known: tuple[str, ...]) -> str | None:
    """A plan claim we recognise, lower-cased; anything else is ignored (the free rung)."""
    value = (claim or "").strip().lower()
    return value if value in known else None


async def provision_customer(
    store: Store, claims: IdentityClaims, plans: tuple[str, ...], now: datetime | None = None
) -> Customer:
    """The customer named by verified claims, created or updated from them."""
    existing = await store.customers.get(claims.sub)
    plan = _plan(claims.plan, plans)
    locale = normalize_locale(claims.locale) if claims.locale else None
    if existing is None:
        customer = Customer.model_validate(
            {
                "_id": claims.sub,
                "name": claims.name or "",
                "email": claims.email or "",
                "plan": plan or FREE_PLAN,
                "locale": locale or "en",
                "created_at": now or datetime.now(UTC),
            }
        )
        await store.customers.upsert(customer)
        return customer
    changes = {
        key: value
        for key, value in (
            ("name", claims.name),
            ("email", claims.email),
            ("plan", plan),
            ("locale", locale),
        )
        if value is not None and getattr(existing, key) != value
    }
    if not changes:
        return existing
    updated = existing.model_copy(update=changes)
    await store.customers.upsert(updated)
    return updated
