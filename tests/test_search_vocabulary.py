"""The corpus words typo repair aims at (app/search/vocabulary.py): per entitlement rung. Pure."""

from __future__ import annotations

from datetime import UTC, datetime

from app.search.filters import SearchFilter
from app.search.vocabulary import CorpusVocabulary, vocabulary_of
from app.store.models import Article, Ticket

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _article(slug: str, body: str, **kw: object) -> Article:
    return Article.model_validate(
        {"_id": slug, "slug": slug, "title": slug.title(), "body": body, "updatedAt": NOW, **kw}
    )


def _ticket(tid: str, resolution: str, **kw: object) -> Ticket:
    return Ticket.model_validate(
        {
            "_id": tid,
            "subject": "s",
            "symptom": "x",
            "resolution": resolution,
            "product": "p",
            "status": "resolved",
            **kw,
        }
    )


def test_words_follow_the_filter_rungs_and_locale() -> None:
    vocab = vocabulary_of(
        [
            _article("intro", "Password reset steps"),
            _article("scim", "Provisioning with SCIM", audience="enterprise"),
            _article("draft", "Unreleased holograms", status="draft"),
            _article("de", "Passwort zurücksetzen", locale="de"),
        ],
        [
            _ticket("T1", "Rebooted the gateway"),
            _ticket("T2", "Guesswork", quality=0.2),
            _ticket("T3", "Still broken", status="open"),
        ],
        min_quality=0.7,
    )
    free = vocab.words(SearchFilter(("all",), "en"))
    enterprise = vocab.words(SearchFilter(("all", "pro", "enterprise"), "en"))
    assert free["password"] == 1 and "gateway" in free
    assert "provisioning" not in free and "provisioning" in enterprise  # never above the rung
    assert "holograms" not in enterprise  # a draft is not searchable, so no repair target
    assert "guesswork" not in enterprise and "broken" not in enterprise  # as the rankers admit
    assert "passwort" not in enterprise
    assert "passwort" in vocab.words(SearchFilter(("all",), "de"))
    assert "passwort" in vocab.words(SearchFilter(("all",), None))  # no locale condition
    assert vocab.words(SearchFilter(("all",), "en")) is free  # merged once per filter


def test_identity_not_content_decides_equality() -> None:
    a = CorpusVocabulary.from_texts([("all", "en", "same words")])
    b = CorpusVocabulary.from_texts([("all", "en", "same words")])
    assert a != b and a == a and len(a) == 2
