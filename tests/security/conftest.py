"""Fixtures for the security suite: one seeded app shared by a module, and small fresh apps."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # browser_helpers, like tests/

from tests.apihelp import Api, running_app
from tuning import TUNING, Tuning

# Generous limits so tests that are not about rate limiting never trip them.
ROOMY: Tuning = TUNING.without_rate_limits()


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(tuning=ROOMY) as api:
        yield api
