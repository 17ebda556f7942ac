"""`LocalSearch.refresh_tickets`: a ticket written after the index was built is found at once,
under the same filters (audience, status, quality), and the article index is left as it was."""

from __future__ import annotations

from datetime import UTC, datetime

from app.providers.embeddings.fake import FakeEmbedder
from app.search.filters import SearchFilter
from app.search.local import LocalSearch
from app.store import Store
from app.store.models import Ticket

PRO = SearchFilter(audiences=("all", "pro"), locale="en")
FREE = SearchFilter(audiences=("all",), locale="en")


async def _ticket(embedder: FakeEmbedder, tid: str, text: str, **kw: object) -> Ticket:
    [vector] = await embedder.embed_documents([text])
    fields: dict[str, object] = {
        "id": tid,
        "subject": text,
        "symptom": text,
        "resolution": "fixed",
        "product": "",
        "status": "resolved",
        "quality": 0.9,
        "resolved_at": datetime.now(UTC),
        "embedding": vector,
        "source": "resolution",
    }
    fields.update(kw)
    return Ticket.model_validate(fields)


async def test_new_and_unpublished_tickets_show_at_once(
    store: Store, embedder: FakeEmbedder
) -> None:
    await store.tickets.upsert(await _ticket(embedder, "t-old", "printer jams on labels"))
    search = await LocalSearch.build(store)
    before = search.counts
    new = await _ticket(embedder, "t-new", "lobby screen flickers at dusk", audience="pro")
    await store.tickets.upsert(new)
    query = await embedder.embed_query("lobby screen flickers at dusk")

    assert [h.doc_id for h in await search.dense_tickets(query, PRO, 5, 0.7)] == ["t-old"]
    await search.refresh_tickets()
    hits = await search.dense_tickets(query, PRO, 5, 0.7)
    assert hits[0].doc_id == "t-new"
    assert "t-new" not in [h.doc_id for h in await search.dense_tickets(query, FREE, 5, 0.7)]
    assert search.counts == {**before, "tickets": 2}

    await store.tickets.upsert(new.model_copy(update={"status": "unpublished"}))
    await search.refresh_tickets()
    assert "t-new" not in [h.doc_id for h in await search.dense_tickets(query, PRO, 5, 0.7)]
