"""The docs-zoo harness: question sets well formed, scoring rules, crawl parsing, site list."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.zoo.crawl import _internal, parse
from scripts.zoo.fetch import load_sites
from scripts.zoo.score import (
    check_questions,
    load_questions,
    markers_in,
    normalise,
    score_reply,
)

QUESTIONS = Path(__file__).resolve().parents[1] / "scripts" / "zoo" / "questions"
SITES = load_sites()


def test_sites_pin_commits_and_cover_generators() -> None:
    assert len(SITES) >= 4
    assert all(len(s.commit) == 40 for s in SITES)
    generators = [s.generator.split()[0] for s in SITES]
    assert len(set(generators)) >= 8  # eight generators; Docusaurus twice (an app, a SaaS)
    assert all(generators.count(g) <= 2 for g in generators)
    assert any(s.language in ("de", "fr") and s.generator.startswith("Hugo") for s in SITES)


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.name)
def test_each_site_has_a_well_formed_question_set(site) -> None:
    cases = load_questions(QUESTIONS / f"{site.name}.jsonl")
    assert check_questions(cases) == []
    kinds = {c["kind"] for c in cases}
    assert {"howto", "limit", "setting", "symptom", "comparison"} <= kinds


def test_check_questions_reports_missing_mix_and_facts(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Backups run every **30 minutes**.", encoding="utf-8")
    case = {
        "id": "x1",
        "kind": "limit",
        "message": "How often?",
        "reference": "Every 30 minutes.",
        "expect": {"answerable": True, "page": ["a.md"], "facts": ["30 minutes", "daily"]},
    }
    problems = check_questions([case], tmp_path)
    assert any("at least 15" in p for p in problems)
    assert any("'daily'" in p for p in problems)
    assert not any("'30 minutes'" in p for p in problems)


def test_normalise_folds_case_space_quotes_and_bold() -> None:
    folded = normalise("Doesn\u2019t  currently\nsupport **IPv6**")
    assert folded == "doesn't currently support ipv6"


def test_answerable_needs_every_fact_and_a_band() -> None:
    case = {"expect": {"answerable": True, "facts": ["Open Backup", "File menu"]}}
    reply = "Choose **Open backup** from the file  menu [1]."
    good = score_reply(case, reply, {"confidence": "weak"})
    assert good["correct"]
    partial = score_reply(case, "Click Open Backup.", {"confidence": "strong"})
    assert not partial["correct"] and partial["missing_facts"] == ["File menu"]
    none = score_reply(case, "Open Backup in the File menu", {"confidence": "none"})
    assert not none["correct"]


def test_unanswerable_is_honest_only_when_none_or_handed_over() -> None:
    case = {"expect": {"answerable": False, "facts": []}}
    assert score_reply(case, "I don't have that.", {"confidence": "none"})["correct"]
    assert score_reply(case, "A colleague will reply.", {"confidence": "weak", "escalated": True})[
        "correct"
    ]
    assert not score_reply(case, "Anki syncs with AnkiWeb [1].", {"confidence": "weak"})["correct"]


def test_markers_are_counted() -> None:
    text = "{% include x.md %} and {{ site.baseurl }} then ::: note and /a%7B%7Bb"
    assert markers_in(text) == {"{%": 1, "{{": 1, ":::": 1, "%7B%7B": 1}
    assert markers_in("plain text") == {}
    rst = "See :ref:`Limits <limits>` and :py:func:`x`.\n.. note::\n   Text.\nA time: 10:30."
    assert markers_in(rst) == {":role:`": 2, ".. name::": 1}


def test_crawl_parse_separates_code_and_collects_links_and_anchors() -> None:
    page = parse(
        '<html><head><title>{{x}}</title></head><body><h2 id="setup">Setup</h2>'
        '<p>See <a href="/help/other#top">other</a>.</p><pre><code>{{ states() }}</code></pre>'
        '<a href="https://example.com/">ext</a><a href="/help/%7B%7Bsite%7D%7D/x">bad</a></body>'
    )
    assert "setup" in page.ids
    assert markers_in("\n".join(page.text)) == {"%7B%7B": 1}
    assert markers_in("\n".join(page.code)) == {"{{": 1}
    base = "http://127.0.0.1:9"
    assert _internal(base, base + "/help/a", "/help/other#top") == base + "/help/other#top"
    assert _internal(base, base + "/help/a", "https://example.com/") is None
    assert _internal(base, base + "/help/a", "mailto:x@y") is None


def test_a_percent_encoded_anchor_matches_its_heading_id() -> None:
    from scripts.zoo.crawl import Crawler

    class Client:
        def get(self, url: str, follow_redirects: bool = True):
            import httpx

            body = '<h2 id="th\u00e8me">Th\u00e8me</h2>'
            return httpx.Response(200, text=body, headers={"content-type": "text/html"})

    crawler = Crawler(Client(), "http://127.0.0.1:9")  # type: ignore[arg-type]
    assert crawler._link_problem("http://127.0.0.1:9/help/p#th%C3%A8me") is None
    assert crawler._link_problem("http://127.0.0.1:9/help/p#other") == "no anchor #other"
