"""The eval harness with `--llm openai` against the fake Chat Completions server on 127.0.0.1:
condensation and answers come from the server, and the report says which model ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import eval as eval_cli
from tests.fake_openai_server import API_KEY, MODEL, FakeOpenAI
from tests.test_eval_harness import CASES, CORPUS, _write_jsonl


@pytest.mark.integration  # the whole pipeline on a small corpus (~20 s here): not in make smoke
def test_the_eval_harness_runs_with_the_openai_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real MiniLM: the answerability check reads sentence similarity, which the hashed
    # bag-of-words fake cannot give, so with it every case ends in "none" and no answer is asked.
    monkeypatch.setenv("EMBEDDER", "local")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", CORPUS)
    cases = _write_jsonl(tmp_path / "cases.jsonl", CASES)
    out = tmp_path / "report.json"
    with FakeOpenAI().running() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_MODEL", MODEL)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        code = eval_cli.main(
            ["--corpus", str(corpus), "--cases", str(cases), "--out", str(out), "--llm", "openai"]
        )
        bodies = fake.bodies
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["run"]["llm"] == f"openai:{MODEL}"
    assert "--llm openai" in report["run"]["command"]
    condensations = [b for b in bodies if "response_format" in b]
    answers = [b for b in bodies if b.get("stream")]
    assert len(condensations) >= 4  # one per case that reached the turn (c1-c5)
    assert answers  # at least the answerable cases were written by the server
    # the fake condenser reads "refund" as a refund request: the policy escalated it
    assert report["escalation"]["recall"] == 1.0
    assert report["cases"]["pipeline"] == 5 and report["cases"]["pipeline_errors"] == 0
    capsys.readouterr()
