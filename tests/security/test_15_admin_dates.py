"""Issue 41, item 7: admin reports answered 500 (OverflowError) for dates at the calendar's end."""

from __future__ import annotations

import pytest

from tests.apihelp import ADMIN, Api


@pytest.mark.parametrize("path", ["/v1/admin/metrics", "/v1/admin/gaps", "/v1/admin/gap-clusters"])
@pytest.mark.parametrize(
    "query",
    [
        {"to": "9999-12-31"},
        {"from": "9999-12-31", "to": "9999-12-31"},
        {"to": "0001-01-05"},
        {"to": "10000-01-01"},
        {"to": "2026-02-30"},
    ],
)
def test_out_of_range_dates_are_a_422(api: Api, path: str, query: dict[str, str]) -> None:
    r = api.client.get(path, headers=ADMIN, params=query)
    assert r.status_code == 422, (path, query, r.status_code, r.text)


def test_the_widest_representable_range_still_answers(api: Api) -> None:
    r = api.client.get(
        "/v1/admin/gaps", headers=ADMIN, params={"from": "0001-01-01", "to": "9999-12-30"}
    )
    assert r.status_code == 200 and "gaps" in r.json()
