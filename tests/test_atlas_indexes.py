"""The index definitions in atlas_indexes/ agree with the settings and the querying code."""

from __future__ import annotations

import json

import pytest

from app.search import atlas
from app.settings import Settings
from app.store.indexes import INDEX_DIR, SEARCH_INDEX_FILES, load_regular, load_search


def definitions() -> dict[str, dict[str, object]]:
    return {
        json.loads((INDEX_DIR / f).read_text())["name"]: json.loads((INDEX_DIR / f).read_text())
        for f in SEARCH_INDEX_FILES
    }


def test_names_and_collections() -> None:
    defs = definitions()
    assert set(defs) == {"kb_chunks_vector", "kb_articles_search", "tickets_vector"}
    assert defs["kb_chunks_vector"]["collection"] == "kb_chunks"
    assert defs["tickets_vector"]["collection"] == "tickets"
    assert defs["kb_articles_search"]["collection"] == "kb_articles"


@pytest.mark.parametrize("embedder", ["local", "voyage"])
def test_vector_width_follows_the_active_embedder(embedder: str) -> None:
    settings = Settings(embedder=embedder, _env_file=None)  # type: ignore[call-arg]
    for d in load_search(dimensions=settings.embedding_dimensions):
        for field in d.definition.get("fields", []):
            if field["type"] == "vector":
                assert field["path"] == "embedding"
                assert field["numDimensions"] == settings.embedding_dimensions
                assert field["similarity"] == "cosine"
    # the file itself carries the default (local MiniLM) width
    raw = definitions()["kb_chunks_vector"]["definition"]
    assert raw["fields"][0]["numDimensions"] == Settings(_env_file=None).embedding_dimensions  # type: ignore[call-arg,index]


def test_filter_fields_cover_every_prefilter_the_queries_use() -> None:
    defs = definitions()
    chunk_filters = {
        f["path"]
        for f in defs["kb_chunks_vector"]["definition"]["fields"]  # type: ignore[index]
        if f["type"] == "filter"
    }
    ticket_filters = {
        f["path"]
        for f in defs["tickets_vector"]["definition"]["fields"]  # type: ignore[index]
        if f["type"] == "filter"
    }
    assert {"audience", "status", "locale", "category"} <= chunk_filters
    assert {"status", "quality", "locale", "audience"} <= ticket_filters


def test_the_queries_name_the_defined_indexes() -> None:
    assert set(definitions()) == {
        atlas.CHUNKS_VECTOR_INDEX,
        atlas.ARTICLES_SEARCH_INDEX,
        atlas.TICKETS_VECTOR_INDEX,
    }


def test_text_index_maps_filter_fields_as_token() -> None:
    """`in`/`equals` return zero hits, silently, on analysed strings: filters must be token."""
    fields = definitions()["kb_articles_search"]["definition"]["mappings"]["fields"]  # type: ignore[index]
    for name in ("audience", "status", "locale"):
        assert fields[name]["type"] == "token", name


def test_text_index_maps_the_analyzed_fields_with_the_whitespace_analyzer() -> None:
    """Atlas must not analyse the lexical ranker's text itself (issue 12): the stored
    `searchTerms` are our analyzer's tokens, split on whitespace only, at index and query time,
    and the pipeline queries exactly those paths."""
    fields = definitions()["kb_articles_search"]["definition"]["mappings"]["fields"]  # type: ignore[index]
    terms = fields["searchTerms"]
    assert terms["type"] == "document"
    assert set(terms["fields"]) == {"title", "tags", "body"}
    for spec in terms["fields"].values():
        assert spec == {
            "type": "string",
            "analyzer": "lucene.whitespace",
            "searchAnalyzer": "lucene.whitespace",
        }
    compound = atlas.articles_compound("x", atlas.SearchFilter(audiences=("all",)), 1.0, 1.0)
    paths = {c["text"]["path"] for c in compound["should"]}
    assert paths == {f"searchTerms.{name}" for name in terms["fields"]}
    # nothing else is analysed by Atlas: no text field outside searchTerms
    assert all(spec["type"] == "token" for name, spec in fields.items() if name != "searchTerms")


def test_regular_indexes_of_the_design() -> None:
    specs = {(s["collection"], s["options"]["name"]): s for s in load_regular()}
    seq = specs[("messages", "conversation_seq")]
    assert seq["keys"] == [["conversationId", 1], ["seq", -1]] and seq["options"]["unique"]
    assert specs[("messages", "confidence_intent")]["keys"] == [
        ["meta.confidence", 1],
        ["meta.intent", 1],
    ]
    ttl = specs[("conversations", "conversations_ttl_anonymous")]
    assert ttl["keys"] == [["expiresAt", 1]] and ttl["options"]["expireAfterSeconds"] == 0
    assert specs[("messages", "messages_ttl_anonymous")]["options"]["expireAfterSeconds"] == 0
    assert specs[("orders", "customer_order_ref")]["options"]["unique"]
    assert specs[("escalations", "case_ref")]["options"]["unique"]
