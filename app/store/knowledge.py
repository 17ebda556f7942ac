"""Help articles, their chunks, and the resolved-ticket corpus."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import DeleteMany, ReplaceOne, ReturnDocument

from app.language.analyzer import search_term_fields
from app.store.models import Article, Chunk, Draft, SearchTerms, Ticket


def with_search_terms(article: Article) -> Article:
    """The article with `searchTerms` computed from its title, tags and body (never stale)."""
    terms = search_term_fields(article.title, article.tags, article.body)
    return article.model_copy(update={"search_terms": SearchTerms.model_validate(terms)})


class ArticleRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["kb_articles"]

    async def get(self, article_id: str) -> Article | None:
        doc = await self._c.find_one({"_id": article_id})
        return Article.from_doc(doc) if doc else None

    async def upsert(self, article: Article) -> None:
        """Write the article with its `searchTerms` analysed from this very content."""
        await self._c.replace_one(
            {"_id": article.id}, with_search_terms(article).to_doc(), upsert=True
        )

    async def list(self, filter: dict[str, Any] | None = None) -> list[Article]:
        docs = await self._c.find(filter or {}).sort("_id", 1).to_list()
        return [Article.from_doc(d) for d in docs]

    async def hashes(self) -> dict[str, str]:
        """article id -> content hash, to skip unchanged articles on re-ingestion."""
        cursor = self._c.find({}, {"_id": 1, "contentHash": 1})
        return {d["_id"]: d.get("contentHash", "") async for d in cursor}

    async def count(self, filter: dict[str, Any] | None = None) -> int:
        return int(await self._c.count_documents(filter or {}))

    async def published_locales(self) -> set[str]:
        """The languages the published articles are written in."""
        cursor = await self._c.aggregate(
            [{"$match": {"status": "published"}}, {"$group": {"_id": "$locale"}}]
        )
        return {str(d["_id"]) async for d in cursor if d.get("_id")}

    async def titles_beyond(
        self, audiences: Sequence[str], locale: str
    ) -> builtins.list[tuple[str, str, str]]:
        """(slug, title, audience) of the published, unflagged articles in `locale` whose
        audience is outside `audiences`: only what a plan notice may name (`app.turn.plans`),
        never a body."""
        cursor = self._c.find(
            {
                "status": "published",
                "locale": locale,
                "audience": {"$nin": list(audiences)},
                "reviewFlags.0": {"$exists": False},
            },
            {"_id": 1, "title": 1, "audience": 1},
        )
        return [(d["_id"], d.get("title", ""), d.get("audience", "")) async for d in cursor]

    async def flagged(self) -> builtins.list[Article]:
        """Articles ingestion flagged for review (e.g. instruction-like text) not yet reviewed."""
        return await self.list({"reviewFlags.0": {"$exists": True}})

    async def record_review(
        self, article_id: str, *, reviewer: str, at: datetime, unpublish: bool
    ) -> Article | None:
        """Approve (clear the flags; a quarantined article is published, and this content is
        remembered as approved) or unpublish (status draft, flags kept for the record)."""
        current = await self._c.find_one({"_id": article_id}, {"status": 1, "contentHash": 1})
        if current is None:
            return None
        update: dict[str, Any] = {"reviewedBy": reviewer, "reviewedAt": at}
        if unpublish:
            update["status"] = "draft"
        else:
            update["reviewFlags"] = []
            update["approvedHash"] = current.get("contentHash")
            if current.get("status") == "quarantined":
                update["status"] = "published"
        doc = await self._c.find_one_and_update(
            {"_id": article_id}, {"$set": update}, return_document=ReturnDocument.AFTER
        )
        return Article.from_doc(doc) if doc else None

    async def delete(self, article_id: str) -> None:
        await self._c.delete_one({"_id": article_id})


class ChunkRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["kb_chunks"]

    async def replace_for_article(self, article_id: str, chunks: Sequence[Chunk]) -> None:
        """Make `chunks` the article's only chunks, in one ordered bulk write.

        Chunk ids are `article#index`, so the upserts overwrite in place and the trailing delete
        removes only chunks beyond the new count: no duplicates, no orphans, and never a moment
        where the article has no chunks at all.
        """
        if any(c.article_id != article_id for c in chunks):
            raise ValueError("every chunk must belong to the article being replaced")
        ops: list[Any] = [ReplaceOne({"_id": c.id}, c.to_doc(), upsert=True) for c in chunks]
        ops.append(DeleteMany({"articleId": article_id, "chunkIndex": {"$gte": len(chunks)}}))
        await self._c.bulk_write(ops, ordered=True)

    async def for_article(self, article_id: str) -> list[Chunk]:
        cursor = self._c.find({"articleId": article_id}).sort("chunkIndex", 1)
        return [Chunk.from_doc(d) for d in await cursor.to_list()]

    async def all(self, filter: dict[str, Any] | None = None) -> list[Chunk]:
        docs = (
            await self._c.find(filter or {}).sort([("articleId", 1), ("chunkIndex", 1)]).to_list()
        )
        return [Chunk.from_doc(d) for d in docs]

    async def count(self, filter: dict[str, Any] | None = None) -> int:
        return int(await self._c.count_documents(filter or {}))

    async def set_status(self, article_id: str, status: str) -> int:
        """Chunks copy their article's status (the vector index pre-filters on it)."""
        res = await self._c.update_many({"articleId": article_id}, {"$set": {"status": status}})
        return int(res.modified_count)

    async def delete_for_article(self, article_id: str) -> int:
        res = await self._c.delete_many({"articleId": article_id})
        return int(res.deleted_count)


class TicketRepo:
    def __init__(self, db: Any) -> None:
        self._c = db["tickets"]

    async def get(self, ticket_id: str) -> Ticket | None:
        doc = await self._c.find_one({"_id": ticket_id})
        return Ticket.from_doc(doc) if doc else None

    async def upsert_many(self, tickets: Sequence[Ticket]) -> None:
        if tickets:
            ops = [ReplaceOne({"_id": t.id}, t.to_doc(), upsert=True) for t in tickets]
            await self._c.bulk_write(ops, ordered=False)

    async def all(self, filter: dict[str, Any] | None = None) -> list[Ticket]:
        docs = await self._c.find(filter or {}).sort("_id", 1).to_list()
        return [Ticket.from_doc(d) for d in docs]

    async def count(self, filter: dict[str, Any] | None = None) -> int:
        return int(await self._c.count_documents(filter or {}))

    async def upsert(self, ticket: Ticket) -> None:
        await self._c.replace_one({"_id": ticket.id}, ticket.to_doc(), upsert=True)

    async def from_resolutions(self, limit: int = 200) -> builtins.list[Ticket]:
        """Resolution-born tickets, newest first."""
        cursor = self._c.find({"source": "resolution"}).sort("resolvedAt", -1).limit(limit)
        return [Ticket.from_doc(d) for d in await cursor.to_list()]

    async def record_vote(self, ticket_id: str, helpful: bool, quality: float) -> None:
        """A customer's vote on an answer that cited this resolution-born ticket."""
        await self._c.update_one(
            {"_id": ticket_id, "source": "resolution"},
            {"$inc": {"votesUp" if helpful else "votesDown": 1}, "$set": {"quality": quality}},
        )

    async def delete_for_cases(self, case_refs: Sequence[str]) -> int:
        """Resolution-born tickets written from these cases (GDPR erasure of their customer)."""
        res = await self._c.delete_many(
            {"source": "resolution", "caseRef": {"$in": list(case_refs)}}
        )
        return int(res.deleted_count)

    async def resolution_ids(self) -> builtins.list[str]:
        return [d["_id"] async for d in self._c.find({"source": "resolution"}, {"_id": 1})]


class DraftRepo:
    """Draft articles from gap clusters (`kb_drafts`): a collection no ranker reads."""

    def __init__(self, db: Any) -> None:
        self._c = db["kb_drafts"]

    async def create(self, draft: Draft) -> Draft:
        await self._c.insert_one(draft.to_doc())
        return draft

    async def get(self, draft_id: str) -> Draft | None:
        doc = await self._c.find_one({"_id": draft_id})
        return Draft.from_doc(doc) if doc else None

    async def list(self, status: str | None = None, limit: int = 100) -> builtins.list[Draft]:
        query: dict[str, Any] = {"status": status} if status else {}
        cursor = self._c.find(query).sort("updatedAt", -1).limit(limit)
        return [Draft.from_doc(d) for d in await cursor.to_list()]

    async def citing(self, case_refs: Sequence[str]) -> builtins.list[Draft]:
        """Drafts built from any of these cases."""
        cursor = self._c.find({"caseRefs": {"$in": list(case_refs)}})
        return [Draft.from_doc(d) for d in await cursor.to_list()]

    async def delete(self, draft_id: str) -> None:
        await self._c.delete_one({"_id": draft_id})

    async def update(self, draft_id: str, fields: dict[str, Any]) -> Draft | None:
        doc = await self._c.find_one_and_update(
            {"_id": draft_id}, {"$set": fields}, return_document=ReturnDocument.AFTER
        )
        return Draft.from_doc(doc) if doc else None
