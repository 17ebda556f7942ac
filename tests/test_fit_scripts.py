"""The fitting scripts write what tuning.py reads (no eval data needed: synthetic inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scripts import fit
from scripts.evaluation.fit_confidence import weak_at, write_bands
from tuning import TUNING


def test_the_weak_cut_is_the_committed_models_probability_at_its_sentence_cut() -> None:
    model = TUNING.confidence["offline"].model
    assert model is not None
    weights = np.array([model.weights["sentence"]])
    assert weak_at("sentence=0.639", ("sentence",), model.intercept, weights) == 0.38
    assert weak_at("sentence=0.9", ("sentence",), model.intercept, weights) > 0.38


def test_weak_at_refuses_a_model_with_other_features() -> None:
    with pytest.raises(SystemExit):
        weak_at("sentence=0.6", ("sentence", "top"), 0.0, np.array([1.0, 1.0]))


def test_writing_one_rerankers_bands_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "confidence.json"
    path.write_text(json.dumps({"bands": {"voyage": {"strong": 0.9}}}), encoding="utf-8")
    write_bands("offline", {"strong": 0.6, "weak": 0.3}, path)
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["bands"] == {"voyage": {"strong": 0.9}, "offline": {"strong": 0.6, "weak": 0.3}}


def test_make_fit_refuses_an_unknown_step() -> None:
    with pytest.raises(SystemExit):
        fit.main(["--only", "router,nonsense"])
