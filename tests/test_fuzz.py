"""Schema-driven fuzzing of the HTTP API: no 5xx, responses match the OpenAPI schema.

Bounded here (FUZZ_EXAMPLES, default 8 per operation); `make fuzz` runs a longer campaign.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from tests.apihelp import ADMIN, Api, running_app
from tuning import TUNING

pytestmark = pytest.mark.integration

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))
_state: dict[str, Any] = {}


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    unlimited = TUNING.without_rate_limits()
    with running_app(tuning=unlimited) as api:
        _state["api"] = api
        yield api


def _schema() -> Any:
    from app.main import create_app
    from tests.apihelp import make_settings

    # The schema only: the real calls go through the running app of the `api` fixture.
    return schemathesis.openapi.from_dict(create_app(make_settings()).openapi())


schema = _schema()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
def test_api_never_fails_and_matches_its_schema(case: Any, api: Api) -> None:
    path = case.operation.path
    headers = dict(ADMIN) if path.startswith("/v1/admin") else dict(api.session("cus_castellan"))
    if "{conversation_id}" in path and case.path_parameters:
        case.path_parameters["conversation_id"] = _conversation(api, headers)
    kw = case.as_transport_kwargs(base_url="http://testserver", headers=headers)
    response = api.client.request(
        kw["method"],
        kw["url"],
        headers=kw.get("headers"),
        params=kw.get("params"),
        content=kw.get("content") or kw.get("data"),
        json=kw.get("json"),
    )
    case.validate_response(
        response,
        checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
    )


def _conversation(api: Api, headers: dict[str, str]) -> str:
    """Half the time a real conversation of this session, so deeper code runs too."""
    return api.conversation(headers)
