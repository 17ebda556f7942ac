"""The eval harness end to end on a tiny corpus (fake embedder), and its readers' leniency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts import eval as eval_cli
from scripts.evaluation.data import (
    EvalDataError,
    corpus_record,
    load_cases,
    parse_case,
    split_of,
)

STAGES = ("dense_chunks", "bm25_articles", "dense_tickets", "fused", "fused_rerank")
LATENCY = (
    "embed",
    "dense_chunks",
    "bm25_articles",
    "dense_tickets",
    "fuse",
    "rerank",
    "condense",
    "generate",
    "total",
)

CORPUS = [
    {
        "id": "kettle-descaling",
        "title": "Descaling the Brewmaster kettle",
        "body": "## Descaling\nFill the kettle with equal parts water and white vinegar, boil once "
        "and rinse twice. Error code KT_301 means scale is blocking the heating plate.",
        "tags": ["kt_301", "kettle"],
        "category": "hardware",
    },
    {
        "id": "kettle-warranty",
        "title": "Brewmaster kettle warranty",
        "body": "Every Brewmaster kettle has a two year warranty covering the heating plate and "
        "the lid hinge. Keep your receipt to claim it.",
    },
    {
        "id": "fleet-dashboard",
        "kind": "article",
        "audience": "enterprise",
        "title": "Fleet dashboard for office kettles",
        "body": "The fleet dashboard shows the descaling state of every kettle in your offices and "
        "alerts facilities when one reports KT_301.",
    },
    {
        "id": "tck-1",
        "kind": "ticket",
        "title": "Kettle clicks off after ten seconds",
        "body": "Customer's kettle switched itself off before boiling.\nResolution: the lid sensor "
        "was dirty; wiping it with a dry cloth fixed the early shut-off.",
        "quality": 0.9,
        "resolvedAt": "2025-01-10",
    },
    {"id": "broken-record", "title": "No body here"},
]

CASES: list[Any] = [
    {
        "id": "c1",
        "customer": {"plan": "pro", "locale": "en"},
        "history": [],
        "message": "what does KT_301 mean on my kettle",
        "expect": {
            "relevant": ["kettle-descaling"],
            "answerable": True,
            "intent": "troubleshooting",
            "escalate": False,
            "forbidden": ["fleet-dashboard"],
            "reference": "KT_301 means scale is blocking the heating plate.",
        },
    },
    {
        "id": "c2",
        "history": [
            {"role": "user", "content": "How do I descale the Brewmaster kettle?"},
            {"role": "assistant", "content": "Fill it with water and vinegar, then boil once."},
        ],
        "message": "and how long is its warranty?",
        "expect": {
            "relevant": ["kettle-warranty"],
            "answerable": True,
            "rewrite": "How long is the Brewmaster kettle warranty?",
        },
    },
    {
        "id": "c3",
        "customer": {"plan": "free"},
        "message": "Do you sell moon rockets?",
        "expect": {"answerable": False},
    },
    {
        "id": "c4",
        "customer": {"plan": "enterprise", "locale": "en"},
        "message": "I want a refund for my kettle, now",
        "expect": {"escalate": True, "intent": "refund_request"},
    },
    {"id": "c5", "message": "thanks!"},  # no expectations at all
    {"id": "c6", "message": "   "},  # the API would refuse it
    {"id": "c7", "history": "not a list", "expect": "nope"},  # no message: skipped
]


def _write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_harness_end_to_end_writes_every_contract_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EMBEDDER", "fake")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", CORPUS)
    cases = _write_jsonl(tmp_path / "cases.jsonl", CASES)
    out = tmp_path / "out" / "report.json"

    code = eval_cli.main(["--corpus", str(corpus), "--cases", str(cases), "--out", str(out)])

    assert code == 0
    printed = capsys.readouterr().out
    assert "fused_rerank" in printed and "entitlement.leaks" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    for form in ("original", "condensed"):
        for stage in STAGES:
            assert set(report["retrieval"][form][stage]) == {"recall@5", "mrr@10"}
    assert set(report["confidence"]) >= {
        "strong_precision",
        "strong_rate_answerable",
        "strong_rate_unanswerable",
        "none_rate_unanswerable",
        "band_counts",
    }
    assert set(report["confidence"]["band_counts"]) == {"strong", "weak", "none"}
    assert set(report["intent"]) >= {"accuracy", "macro_f1"}
    assert set(report["escalation"]) >= {"precision", "recall"}
    assert "mean_cosine" in report["rewrite"]
    assert "leaks" in report["entitlement"]
    assert "invalid" in report["citations"]
    for stage in LATENCY:
        assert set(report["latency_ms"][stage]) == {"p50", "p95"}

    counts = report["cases"]
    assert counts["total"] == 7 and counts["skipped"] == 1 and counts["rejected"] == 1
    assert counts["pipeline"] == 5 and counts["pipeline_errors"] == 0
    assert counts["retrieval"] == 2 and counts["rewrite"] == 1 and counts["intent"] == 2
    assert counts["escalation"] == 2 and counts["unanswerable"] == 1
    assert sum(report["confidence"]["band_counts"].values()) == 5
    # the enterprise-only article never reaches the pro customer, nor the anonymous visitor
    assert report["entitlement"]["leaks"] == 0
    assert report["citations"]["invalid"] == 0
    assert report["escalation"]["recall"] == 1.0  # the refund request went to a person
    assert report["run"]["counts"] == {"articles": 3, "chunks": 3, "tickets": 1}
    assert report["run"]["skipped_documents"] == 1
    assert report["latency_ms"]["total"]["p50"] is not None
    for naive in ("naive_dense", "naive_bm25"):
        assert set(report["baseline"][naive]) == {"recall@5", "mrr@10"}
        assert report["baseline"][naive]["recall@5"] is not None
    assert counts["baseline"] == 2 and counts["answer"] == 1
    assert 0.0 <= report["answer"]["token_f1"] <= 1.0
    assert 0.0 <= report["baseline"]["first_sentences"]["token_f1"] <= 1.0
    # BM25 over plain windows finds the verbatim code in the descaling article's window
    assert report["baseline"]["naive_bm25"]["mrr@10"] > 0


def test_split_groups_a_conversation_and_partitions_the_cases(tmp_path: Path) -> None:
    opening = [{"role": "user", "content": "How do I descale the kettle?"}]
    rows = [{"id": f"a{i}", "history": opening, "message": f"and step {i}?"} for i in range(4)] + [
        {"id": f"b{i}", "message": f"question number {i} about kettles"} for i in range(40)
    ]
    path = _write_jsonl(tmp_path / "cases.jsonl", rows)
    tune = load_cases([path], split="tune").cases
    report = load_cases([path], split="report").cases
    assert len(tune) + len(report) == 44 and tune and report
    assert not {c.id for c in tune} & {c.id for c in report}
    # the four turns of one conversation land on the same side
    sides = {split_of(c) for c in load_cases([path]).cases if c.id.startswith("a")}
    assert len(sides) == 1
    with pytest.raises(EvalDataError):
        load_cases([path], split="everything")


def test_limit_keeps_the_first_cases(tmp_path: Path) -> None:
    a = _write_jsonl(tmp_path / "a.jsonl", CASES[:2])
    b = _write_jsonl(tmp_path / "b.jsonl", CASES[2:4])
    assert [c.id for c in load_cases([a, b]).cases] == ["c1", "c2", "c3", "c4"]
    assert [c.id for c in load_cases([a, b], limit=3).cases] == ["c1", "c2", "c3"]


def test_a_line_that_is_not_json_stops_the_run_with_its_location(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok", "message": "hi"}\n{not json\n', encoding="utf-8")
    with pytest.raises(EvalDataError, match=r"cases.jsonl:2"):
        load_cases([path])
    assert eval_cli.main(["--cases", str(path), "--out", str(tmp_path / "r.json")]) == 2


def test_cases_lacking_fields_are_read_leniently() -> None:
    case = parse_case(
        {
            "message": "hello",
            "customer": {"locale": "de"},
            "history": [
                {"role": "system", "content": "x"},
                {"role": "user"},
                {"role": "user", "content": "earlier"},
            ],
            "expect": {"relevant": "doc-1", "answerable": "yes"},
        },
        "f:1",
    )
    assert case.id == "f:1" and case.signed_in and case.plan is None and case.locale == "de"
    assert case.history == (("user", "earlier"),)
    assert case.relevant == ("doc-1",) and case.answerable is None
    anonymous = parse_case({"id": "x", "message": "hi", "customer": None}, "f:2")
    assert not anonymous.signed_in and anonymous.relevant is None and anonymous.intent is None
    with pytest.raises(ValueError, match="no message"):
        parse_case({"id": "y"}, "f:3")


def test_corpus_records_become_articles_and_tickets() -> None:
    from datetime import UTC, datetime

    now = datetime(2025, 6, 1, tzinfo=UTC)
    article = corpus_record({"id": "a", "title": "T", "body": "B"}, "c:1", now)
    assert (article.id, article.audience, article.locale, article.status) == (
        "a",
        "all",
        "en",
        "published",
    )
    ticket = corpus_record(CORPUS[3], "c:4", now)
    assert ticket.status == "resolved" and ticket.quality == 0.9  # type: ignore[union-attr]
    assert ticket.resolution.startswith("the lid sensor")  # type: ignore[union-attr]
    assert ticket.resolved_at == datetime(2025, 1, 10, tzinfo=UTC)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="no body"):
        corpus_record(CORPUS[4], "c:5", now)
    with pytest.raises(ValueError, match="audience"):
        corpus_record({"id": "z", "body": "b", "audience": "vip"}, "c:6", now)


async def test_embedding_cache_flag_writes_the_cache_it_was_given(tmp_path: Path) -> None:
    from app.providers.embeddings.cache import CachedEmbedder
    from app.providers.embeddings.fake import FakeEmbedder
    from app.providers.embeddings.memo import TurnMemo

    path = tmp_path / "eval-cache" / "vectors.npz"
    embedder = TurnMemo(CachedEmbedder(FakeEmbedder(), path))
    await embedder.embed_documents(["a passage", "another passage"])
    assert not path.exists()  # nothing is written until the harness asks
    eval_cli.save_embedding_cache(embedder)
    assert path.exists()
    again = CachedEmbedder(FakeEmbedder(), path)
    await again.embed_documents(["a passage"])
    assert (again.hits, again.misses) == (1, 0)
    args = eval_cli.parse_args(["--embedding-cache", str(tmp_path / "c")])
    assert args.embedding_cache == tmp_path / "c"
