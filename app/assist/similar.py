"""Similar resolved cases for the agent: resolution tickets and past resolved handoffs nearest
to the problem's vector, within the customer's audience, each with its resolution in one line."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.assist.policy import plain, quote
from app.knowledge.resolution import audience_for_plan
from app.search.base import cosine_to_score
from app.store.assist import SimilarCase
from app.store.models import Escalation
from app.turn.retrieve import RetrievalResult
from tuning import Tuning

if TYPE_CHECKING:
    from app.services import Services

ONE_LINE_CHARS = 160


def one_line(text: str) -> str:
    """A resolution's first sentence (cut at a word, with an ellipsis, when longer)."""
    return quote(text, ONE_LINE_CHARS)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


async def similar_cases(
    services: Services, case: Escalation, problem: str, retrieval: RetrievalResult
) -> list[SimilarCase]:
    """Nearest first, at most `assist_similar_limit`, none below `assist_similar_min_score`."""
    tuning = services.tuning
    if not problem.strip():
        return []
    vector = list(retrieval.query_vector or await services.embedder.embed_query(problem))
    found = await _tickets(services, vector, retrieval) + await _cases(
        services, case, vector, retrieval.filter.audiences
    )
    kept = [s for s in found if s.score >= tuning.assist_similar_min_score]
    kept.sort(key=lambda s: -s.score)
    return kept[: tuning.assist_similar_limit]


async def _tickets(
    services: Services, vector: list[float], retrieval: RetrievalResult
) -> list[SimilarCase]:
    """Resolved tickets by the tickets ranker, pre-filtered by the customer's entitlement."""
    tuning = services.tuning
    hits = await services.search.dense_tickets(
        vector,
        retrieval.filter,  # the customer's audience ladder and locale, inside the query
        tuning.assist_similar_limit,
        tuning.ticket_min_quality,
        tuning.vector_num_candidates,
    )
    out = []
    for hit in hits:
        ticket = await services.store.tickets.get(hit.doc_id)
        if ticket is None:
            continue
        out.append(
            SimilarCase(
                kind="ticket",
                id=ticket.id,
                title=ticket.subject,
                resolution=one_line(ticket.resolution),
                score=round(hit.score, 4),
                audience=ticket.audience,
            )
        )
    return out


async def _cases(
    services: Services, case: Escalation, vector: list[float], audiences: Sequence[str]
) -> list[SimilarCase]:
    """Past resolved handoffs with a resolution that did not become a ticket (those are found
    as tickets), whose customer's rung the current customer may read."""
    tuning = services.tuning
    resolved = await services.store.escalations.list("resolved", tuning.assist_cases_scanned)
    pool = [
        c
        for c in resolved
        if c.case_ref != case.case_ref
        and c.resolution
        and not c.ticket_id
        and c.asked_for.strip()
        and _audience(c, tuning) in audiences
    ]
    if not pool:
        return []
    vectors = await services.embedder.embed_documents([plain(c.asked_for) for c in pool])
    return [
        SimilarCase(
            kind="case",
            id=c.case_ref,
            title=c.asked_for,
            resolution=one_line(c.resolution or ""),
            score=round(cosine_to_score(cosine(vector, v)), 4),  # as the tickets ranker reports
            audience=_audience(c, tuning),
        )
        for c, v in zip(pool, vectors, strict=True)
    ]


def _audience(case: Escalation, tuning: Tuning) -> str:
    """A resolved case is readable from its customer's rung up (anonymous: everyone)."""
    return audience_for_plan((case.customer or {}).get("plan"), tuning)
