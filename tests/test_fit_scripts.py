"""The fitting scripts write what tuning.py reads (no eval data needed: synthetic inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.turn.confidence import FEATURES
from scripts import fit
from scripts.evaluation import fit_confidence
from scripts.evaluation.fit_confidence import weak_at, write_bands
from tuning import TUNING


def test_the_weak_cut_is_the_committed_models_probability_at_its_sentence_cut() -> None:
    model = TUNING.confidence["offline"].model
    assert model is not None
    weights = np.array([model.weights["sentence"]])
    assert weak_at("sentence=0.639", ("sentence",), model.intercept, weights) == 0.4
    assert weak_at("sentence=0.9", ("sentence",), model.intercept, weights) > 0.4


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


def _synthetic_dump(path: Path) -> None:
    """Cases whose `sentence` separates the labels, noisily, in two domains; the rest noise."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(160):
        answerable = i % 2 == 0
        sentence = float(np.clip(rng.normal(0.85 if answerable else 0.65, 0.08), 0, 1))
        others = {f: float(rng.uniform(0, 1)) for f in FEATURES}
        rows.append(
            {
                "features": {**others, "top": 0.9, "sentence": sentence},
                "answerable": answerable,
                "split": "tune" if i % 4 < 2 else "report",
                "domain": "a" if i < 80 else "b",
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_make_fits_confidence_options_run_and_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every option `make fit` passes exists, and the written record says which were used."""
    dump, fitted = tmp_path / "dump.jsonl", tmp_path / "confidence.json"
    _synthetic_dump(dump)
    fitted.write_text(json.dumps({"bands": {}}), encoding="utf-8")
    monkeypatch.setattr(fit_confidence, "CONFIDENCE_FILE", fitted)
    options = [arg for k, v in fit.CONFIDENCE_OPTIONS.items() for arg in (f"--{k}", v)]
    assert fit_confidence.main([str(dump), *options, "--write"]) == 0
    band = json.loads(fitted.read_text(encoding="utf-8"))["bands"]["offline"]
    assert band["model"]["version"] == fit.CONFIDENCE_OPTIONS["version"]
    assert list(band["model"]["weights"]) == fit.CONFIDENCE_OPTIONS["use"].split(",")
    if "sentence" in band["model"]["weights"]:  # higher sentence match, more answerable
        assert band["model"]["weights"]["sentence"] > 0
    assert band["weak"] < band["strong"]
    assert band["fit"]["options"]["weak_at"] == fit.CONFIDENCE_OPTIONS.get("weak-at")


def test_the_committed_fits_were_written_by_make_fit_with_its_options() -> None:
    """No fitted file is pasted by hand: each carries the record its fitting script writes, and
    the answerability model's record names the options `make fit` passes today."""
    fitted = Path(__file__).resolve().parent.parent / "app" / "fitted"
    router = json.loads((fitted / "router.json").read_text(encoding="utf-8"))
    assert "dev" in router["fit"]
    offline = json.loads((fitted / "confidence.json").read_text(encoding="utf-8"))["bands"]
    record = offline["offline"]["fit"]["options"]
    options = fit.CONFIDENCE_OPTIONS
    assert record["use"] == options["use"] and record["fit_on"] == options["fit-on"]
    assert record["weak_at"] == options.get("weak-at")
    assert record["max_unanswerable_strong"] == float(options["max-unanswerable-strong"])
    assert offline["offline"]["passage_floor"] == float(options["passage-floor"])
    assert offline["offline"]["model"]["version"] == options["version"]
