"""Help-article and ticket ingestion: loaders, a structure-aware chunker, and the pipeline."""

from app.ingest.chunker import ChunkDraft, chunk_article
from app.ingest.loaders import LOADERS, LoadError, content_hash, load_corpus, load_file
from app.ingest.pipeline import IngestReport, ingest_articles, ingest_corpus, ingest_tickets
from app.ingest.review import PROMPT_INJECTION, injection_phrases, review_flags

__all__ = [
    "LOADERS",
    "PROMPT_INJECTION",
    "ChunkDraft",
    "IngestReport",
    "LoadError",
    "chunk_article",
    "content_hash",
    "ingest_articles",
    "ingest_corpus",
    "ingest_tickets",
    "injection_phrases",
    "load_corpus",
    "load_file",
    "review_flags",
]
