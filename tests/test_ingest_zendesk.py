"""A Zendesk Help Center articles export: segments mapped to audiences through the table beside
it (unmapped ones rejected), drafts kept unpublished, translations as their own locale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.ingest import ingest_corpus
from app.ingest.loaders import load_corpus
from app.providers.embeddings.fake import FakeEmbedder
from app.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "bring" / "zendesk"
MAX = 10_000_000


def test_articles_segments_drafts_and_translations() -> None:
    corpus = load_corpus(FIXTURE, MAX)
    got = {
        a.id: (a.title, a.audience, a.status, a.locale, a.category, a.tags) for a in corpus.articles
    }
    assert got == {
        "zd-360001000001": (
            "Reset your hub password",
            "all",  # user_segment_id null: everyone
            "published",
            "en",
            "getting-started",  # the sideloaded section's name
            ["password", "account"],
        ),
        "zd-360001000001-de": (
            "Hub-Passwort zurücksetzen",
            "all",
            "published",
            "de",
            "getting-started",
            ["passwort"],
        ),
        "zd-360001000002": (
            "Configure single sign-on",
            "enterprise",  # segment 9001 through zendesk-segments.yaml
            "published",
            "en",
            "administration",
            ["sso", "saml"],
        ),
        "zd-360001000003": ("Scenes (coming soon)", "all", "draft", "en", "getting-started", []),
    }
    (bad,) = corpus.errors
    assert bad.path.endswith("articles.json#360001000004")
    assert "user_segment_id 9999 is not in zendesk-segments.yaml" in bad.reason
    reset = next(a for a in corpus.articles if a.id == "zd-360001000001")
    assert "## Steps" in reset.body and "1. Open **Settings**" in reset.body  # HTML → markdown


def test_without_the_segments_table_restricted_articles_are_rejected(tmp_path: Path) -> None:
    shutil.copy(FIXTURE / "articles.json", tmp_path / "articles.json")
    corpus = load_corpus(tmp_path, MAX)
    assert sorted(e.path.rsplit("#", 1)[1] for e in corpus.errors) == [
        "360001000002",
        "360001000004",
    ]
    assert {a.audience for a in corpus.articles} == {"all"}


def test_sections_in_their_own_file_and_other_json_is_skipped(tmp_path: Path) -> None:
    data = json.loads((FIXTURE / "articles.json").read_text(encoding="utf-8"))
    sections = {"sections": data.pop("sections")}
    data.pop("categories")
    data["articles"] = data["articles"][:1]
    (tmp_path / "page-1.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "sections.json").write_text(json.dumps(sections), encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "docs-site"}', encoding="utf-8")
    corpus = load_corpus(tmp_path, MAX)
    assert [(a.id, a.category) for a in corpus.articles] == [("zd-360001000001", "getting-started")]
    assert {Path(e.path).name: e.reason for e in corpus.skipped} == {
        "package.json": 'not a Zendesk Help Center export (no "articles" list)',
        "sections.json": "Zendesk sections: read with the articles export beside it",
    }
    assert not corpus.errors


async def test_reimporting_the_export_changes_nothing(store: Store) -> None:
    first = await ingest_corpus(store, FakeEmbedder(), FIXTURE)
    assert sorted(first.added) == [
        "zd-360001000001",
        "zd-360001000001-de",
        "zd-360001000002",
        "zd-360001000003",
    ]
    chunks = await store.chunks.for_article("zd-360001000002")
    assert {c.audience for c in chunks} == {"enterprise"}  # copied to chunks: index pre-filter
    again = await ingest_corpus(store, FakeEmbedder(), FIXTURE)
    assert (again.ingested, again.changed, len(again.unchanged)) == ([], 0, 4)
