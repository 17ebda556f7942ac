"""What one turn writes, measured: real turns through `run_turn` on the durable embedded store.

The conversation of `conversation.KINDS` (turns 5 and 200 carry identical content) is replayed
through the real engine (offline provider, fake embedder so it needs no model) against the
embedded store in a temporary directory. The store writes every document a call changed through
to SQLite as a whole BSON document, which is what a document database stores on update
(WiredTiger writes a new version of the whole document), so the journal's byte counter is the
"document bytes rewritten" of each turn, attributed to collections. Background work a turn starts
(the summary every few turns) is awaited and counted with that turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from app.identity import Principal
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.rerank.fake import FakeReranker
from app.services import Services, build_services, prepare_corpus
from app.settings import Settings
from app.turn.engine import run_turn
from scripts.benchmarks.conversation import CUSTOMER_ID, _fill, kind_of
from tuning import TUNING, Tuning


def _snapshot(services: Services) -> dict[str, Any]:
    journal = services.store.client.journal
    stats = journal.stats
    return {
        "bytes": stats.bytes,
        "documents": stats.documents,
        "commits": stats.commits,
        "by_collection": dict(stats.by_collection),
    }


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    by = {
        name: after["by_collection"].get(name, 0) - before["by_collection"].get(name, 0)
        for name in after["by_collection"]
    }
    return {
        "bytes": after["bytes"] - before["bytes"],
        "documents": after["documents"] - before["documents"],
        "commits": after["commits"] - before["commits"],
        "by_collection": {k.split(".", 1)[-1]: v for k, v in sorted(by.items()) if v},
    }


async def _drain(services: Services) -> None:
    while services._background:
        await asyncio.gather(*list(services._background), return_exceptions=True)


async def measure(turns: tuple[int, ...] = (5, 200), tuning: Tuning = TUNING) -> dict[str, Any]:
    last = max(turns)
    with tempfile.TemporaryDirectory(prefix="concierge-writes-") as tmp:
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            mongodb_uri=None,
            embedded_store="file",
            data_dir=Path(tmp),
            embedder="fake",
            embedding_cache_dir=None,
            log_level="WARNING",
        )
        # A conversation that is answered every turn (an escalated one goes quiet and would
        # measure nothing): strong rerank scores, no policy or streak escalation.
        tuning = dataclasses.replace(
            tuning, max_failed_turns=10**6, always_escalate_intents=frozenset()
        )
        services = await build_services(settings, tuning, embedder=FakeEmbedder())
        services.reranker = FakeReranker(scores={"": 0.95}, calibration="offline")
        try:
            await prepare_corpus(services)
            store = services.store
            conv = await store.conversations.create(
                customer_id=CUSTOMER_ID,
                anonymous_id=None,
                anonymous_ttl_days=tuning.anonymous_session_ttl_days,
            )
            principal = Principal(session_id="bench", customer_id=CUSTOMER_ID, anonymous_id=None)
            measured: dict[int, dict[str, Any]] = {}
            sizes: dict[int, dict[str, int]] = {}
            escalated = 0
            for n in range(1, last + 1):
                before = _snapshot(services)
                result = await run_turn(services, principal, conv, _fill(kind_of(n).user, n))
                await _drain(services)
                escalated += result.reply is None or bool(result.case_ref)
                if n in turns:
                    measured[n] = _delta(before, _snapshot(services))
                    sizes[n] = await _document_sizes(services, conv.id)
        finally:
            with contextlib.suppress(Exception):
                await services.close()
    return {"turns": measured, "conversation_documents": sizes, "unanswered_turns": escalated}


async def _document_sizes(services: Services, conversation_id: str) -> dict[str, int]:
    """Stored size of the documents about this conversation that are not append-only."""
    import bson

    db = services.store.db
    out: dict[str, int] = {}
    doc = await db["conversations"].find_one({"_id": conversation_id})
    if doc:
        out["conversations"] = len(bson.encode(doc))
    return out


def run(turns: tuple[int, int] = (5, 200)) -> dict[str, Any]:
    return asyncio.run(measure(turns))


if __name__ == "__main__":  # pragma: no cover - manual use
    import json

    print(json.dumps(run(), indent=2))
