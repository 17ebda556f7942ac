"""Fitted values come from the data files `make fit` writes, and equal what was fitted."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tuning import FITTED_DIR, FITTED_FILES, TUNING, Tuning

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str) -> dict:
    return json.loads((FITTED_DIR / name).read_text(encoding="utf-8"))


def test_the_loaded_confidence_bands_are_the_fitted_file() -> None:
    stored = _load("confidence.json")["bands"]["offline"]
    bands = TUNING.confidence["offline"]
    assert (bands.strong, bands.weak, bands.passage_floor) == (
        stored["strong"],
        stored["weak"],
        stored["passage_floor"],
    )
    assert bands.model is not None
    assert bands.model.version == stored["model"]["version"]
    assert bands.model.intercept == stored["model"]["intercept"]
    assert dict(bands.model.weights) == stored["model"]["weights"]


def test_the_committed_fit_is_the_one_reviewed() -> None:
    """Pinned: a refit changes what customers see, so it is a reviewed change of this test too
    (`make fit` on main 2026-12-07; the seed eval before and after in the commit that set it)."""
    bands = TUNING.confidence["offline"]
    assert (bands.strong, bands.weak, bands.passage_floor) == (0.64, 0.4, 0.55)
    assert bands.model is not None
    assert (bands.model.version, bands.model.intercept) == ("offline-3", -2.941)
    assert dict(bands.model.weights) == {"sentence": 3.989}
    assert TUNING.escalation_min_probability == 0.575
    assert TUNING.gap_cluster_threshold == 0.40


def test_the_router_threshold_is_the_fitted_file() -> None:
    assert TUNING.escalation_min_probability == _load("router.json")["escalation_min_probability"]


def test_the_gap_threshold_is_the_fitted_file() -> None:
    assert TUNING.gap_cluster_threshold == _load("gaps.json")["gap_cluster_threshold"]


def test_every_fitted_file_exists_and_names_real_fields() -> None:
    names = {f.name for f in dataclasses.fields(Tuning)}
    for rel, fields in FITTED_FILES.items():
        assert (ROOT / rel).is_file(), rel
        assert set(fields) <= names, rel


def test_a_test_can_still_replace_a_fitted_value() -> None:
    changed = dataclasses.replace(TUNING, escalation_min_probability=0.9)
    assert changed.escalation_min_probability == 0.9
    assert TUNING.escalation_min_probability != 0.9
