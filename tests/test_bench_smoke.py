"""`make bench` in miniature: the model-free sections run and write a well-formed report.

Structure only — keys present, counts and sizes positive. No timing is asserted: a benchmark's
numbers are for reading, and a loaded CI machine must not fail the suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts import bench

pytestmark = pytest.mark.slow  # runs the benchmark sections (model-free, but seconds each)


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    argv = ["--quick", "--sections", "1,3,4", "--sizes", "240,480", "--queries", "4",
            "--out", str(out)]  # fmt: skip
    assert bench.main(argv) == 0
    data: dict[str, Any] = json.loads(Path(out).read_text(encoding="utf-8"))
    return data


def test_report_has_meta_and_only_the_requested_sections(report: dict[str, Any]) -> None:
    meta = report["meta"]
    assert meta["quick"] is True
    assert meta["command"].startswith("python -m scripts.bench --quick")
    assert {"date", "python", "cpus", "wall_s"} <= set(meta)
    assert set(report["sections"]) == {"retrieval_scale", "prompt_size", "write_bytes"}


def test_retrieval_scale_reports_every_stage_at_every_size(report: dict[str, Any]) -> None:
    section = report["sections"]["retrieval_scale"]
    assert list(section["sizes"]) == ["240", "480"]
    for size in section["sizes"].values():
        assert _positive(size["chunks"]) and _positive(size["build_s"])
        assert size["queries"] == 4
        for stage in ("dense_chunks", "bm25_articles", "dense_tickets", "retrieve"):
            latency = size["latency"][stage]
            assert latency["n"] == 4
            assert _positive(latency["p50_ms"]) and _positive(latency["p95_ms"])
            assert latency["p95_ms"] >= latency["p50_ms"]
        assert size["mean_hits"]["dense_chunks"] > 0, "queries must find something"
        assert size["mean_hits"]["retrieve"] > 0
        assert size["embedder_misses"] == 0, "retrieve() must use the precomputed vectors"
    growth = section["growth"]["480/240"]
    assert growth["chunks"] == 2.0
    for stage in ("dense_chunks", "bm25_articles", "dense_tickets", "retrieve"):
        assert _positive(growth[stage]["p50"]) and _positive(growth[stage]["p95"])


def test_prompt_size_compares_both_layouts_at_both_turns(report: dict[str, Any]) -> None:
    section = report["sections"]["prompt_size"]
    for turn in ("turn_8", "turn_60"):
        for layout in ("ours", "raw"):
            sizes = section[turn][layout]
            assert _positive(sizes["prompt_chars"]) and _positive(sizes["prompt_tokens_approx"])
            assert _positive(sizes["context_chars"])
    assert section["turn_60"]["prior_messages"] == 118
    assert section["turn_60"]["ours"]["facts"] > 0, "identifiers must reach the prompt as facts"
    for name in ("ours_60/8", "raw_60/8", "raw/ours_at_60"):
        assert _positive(section["ratios"][name])


def test_write_bytes_measures_real_turns_beside_the_array_model(report: dict[str, Any]) -> None:
    section = report["sections"]["write_bytes"]
    assert section["unanswered_turns"] == 0, "every measured turn must be answered"
    for turn in ("turn_5", "turn_50"):
        measured = section["measured"][turn]
        assert _positive(measured["bytes"]) and _positive(measured["documents"])
        assert measured["by_collection"]["messages"] > 0  # the two messages of the turn
        assert _positive(measured["conversation_doc_bytes"])
        array = section["array_model"][turn]
        assert _positive(array["wire_bytes"]) and _positive(array["stored_bytes"])
        assert array["operations"] == len(array["detail"]) > 0
    # the conversation document does not grow with the conversation
    assert (
        section["measured"]["turn_50"]["conversation_doc_bytes"]
        == section["measured"]["turn_5"]["conversation_doc_bytes"]
    )
    assert _positive(section["array_document_growth_bytes_per_turn"])
    for value in section["ratios"].values():
        assert _positive(value)


def test_report_ends_with_the_goal_figures(report: dict[str, Any]) -> None:
    figures = report["summary"]
    assert list(figures) == [
        "bytes_ratio",
        "prompt_ratio",
        "retrieval_growth",
        "clients8_speedup",
        "p95_32_ms",
        "first_event_p95_ms",
        "ingest_over_bare",
    ]
    for name in ("bytes_ratio", "prompt_ratio", "retrieval_growth"):
        assert _positive(figures[name])
    assert figures["clients8_speedup"] is None  # section 2 did not run
    line = bench.summary_line(figures)
    assert line.startswith("bench: bytes_ratio=") and "clients8_speedup=na" in line
    assert len(line.splitlines()) == 1


def test_cli_rejects_unknown_sections() -> None:
    with pytest.raises(SystemExit):
        bench.parse_args(["--sections", "9"])
