"""Finding 3: an identity token without `iat` skipped the 24-hour lifetime check."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jwt
import pytest

from app.errors import Unauthenticated
from app.identity import verify_identity
from tests.apihelp import Api

SECRET = "test-identity-secret-0123456789abcdef"


def _token(**claims: object) -> str:
    return jwt.encode({"sub": "cus_castellan", **claims}, SECRET, algorithm="HS256")


def test_ten_year_token_without_iat_is_refused(api: Api) -> None:
    now = datetime.now(UTC)
    token = _token(exp=now + timedelta(days=3650))
    r = api.client.post("/v1/sessions", json={"identityToken": token})
    assert r.status_code == 401 and "lifetime" in r.json()["detail"]


@pytest.mark.parametrize(
    ("claims", "ok"),
    [
        ({"exp": timedelta(hours=23)}, True),
        ({"exp": timedelta(hours=25)}, False),
        ({"exp": timedelta(days=3650), "iat": timedelta(days=3649)}, False),  # iat forged late
        ({"exp": timedelta(hours=1), "iat": timedelta(hours=-30)}, False),  # minted too long
        ({"exp": timedelta(minutes=-5)}, False),
    ],
)
def test_lifetime_is_judged_from_exp_at_time_of_use(claims: dict[str, timedelta], ok: bool) -> None:
    now = datetime.now(UTC)
    token = _token(**{k: now + v for k, v in claims.items()})
    if ok:
        assert verify_identity(token, SECRET) == "cus_castellan"
    else:
        with pytest.raises(Unauthenticated):
            verify_identity(token, SECRET)
