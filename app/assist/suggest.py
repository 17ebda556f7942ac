"""The suggested reply for a case: computed when a person opens it, cached per conversation length.

Retrieval runs over the *customer's* entitlement (their plan's ladder and locale, filtered inside
the search query by the same retrieval stage a customer turn uses), with the packet's problem as
the query and the customer's latest messages reranked with it. Offline, the draft is the offline
answerer's answer with its citations; with a language model, the generated reply in the
customer's language grounded in those passages (the generation stage of a customer turn, with
its fallback). A policy intent gets the policy passage quoted and what the agent must decide
(`app.assist.policy`). The work runs under a customer turn's deadline and spend cap.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app import spend
from app.assist.policy import is_policy_case, policy_draft, without_offers
from app.assist.similar import similar_cases
from app.links import article_url, link_key
from app.providers import budget
from app.providers.embeddings.memo import one_turn
from app.store.assist import AssistEvent, Suggestion, SuggestionSource
from app.store.models import Customer, Escalation, Message
from app.turn import memory
from app.turn.engine import prompt_passage, reply_locale
from app.turn.generate import Answer, generate_answer
from app.turn.retrieve import RetrievalResult, retrieve
from app.turn.trace import TurnTrace

if TYPE_CHECKING:
    from app.services import Services

OFFER_KEYS = ("weak_hedge", "offer_person", "no_answer_tools_tail")


async def suggestion_for(services: Services, case: Escalation) -> tuple[Suggestion, bool]:
    """(the case's suggestion at its current conversation length, whether it was cached)."""
    store = services.store
    messages = await store.messages.after(case.conversation_id, 0)
    cached = await store.assist.cached(case.case_ref, len(messages))
    if cached is not None:
        return cached, True
    with one_turn(), budget.deadline(services.tuning.turn_budget_seconds):
        fresh = await _compute(services, case, messages)
    return await store.assist.save(fresh), False


async def record_sent(
    services: Services, case_ref: str, suggestion_id: str | None, sent: str, message_id: str
) -> str | None:
    """Count an agent reply sent from a suggestion: unchanged or edited (whitespace aside)."""
    if not suggestion_id:
        return None
    suggestion = await services.store.assist.get(suggestion_id)
    if suggestion is None or suggestion.case_ref != case_ref or not suggestion.text:
        return None
    same = " ".join(sent.split()) == " ".join(suggestion.text.split())
    event: AssistEvent = "sent_unchanged" if same else "sent_edited"
    await services.store.assist.record(suggestion, event, datetime.now(UTC), message_id)
    return event


def case_problem(case: Escalation, messages: list[Message], keep: int) -> tuple[str, str]:
    """(the problem to search for, the customer's latest words to rerank with it).

    The packet's problem, unless the customer's last request was for a person ("can I speak to
    someone?", or the button with no question): that asks for no answer, so the problem is what
    the customer said before it."""
    said = [m.content.strip() for m in messages if m.role == "user" and m.content.strip()]
    asked = case.asked_for.strip()
    if case.intent == "human_handoff" or not asked or asked.startswith("("):
        request = {asked, (case.trigger or "").strip()}
        before = [text for text in said if text not in request]
        if before:
            said, asked = before, " ".join(before[-keep:])
    latest = " ".join(said[-keep:])
    return asked, latest or asked


async def _customer(services: Services, case: Escalation) -> Customer | None:
    cid = case.customer_id or (case.customer or {}).get("id")
    return await services.store.customers.get(cid) if cid else None


def _entitlement(case: Escalation, customer: Customer | None) -> tuple[str | None, str | None]:
    """(plan, locale) of the case's customer: the account's record, else the packet's copy;
    an anonymous visitor has neither (the free rung)."""
    if customer is not None:
        return customer.plan, customer.locale
    packet = case.customer or {}
    return packet.get("plan"), packet.get("locale")


async def _compute(services: Services, case: Escalation, messages: list[Message]) -> Suggestion:
    started = time.perf_counter()
    tuning, tenant = services.tuning, services.tenant
    customer = await _customer(services, case)
    plan, own_locale = _entitlement(case, customer)
    problem, latest = case_problem(case, messages, tuning.assist_context_messages)
    last_trace = next(
        (TurnTrace.read(m.meta) for m in reversed(messages) if m.role == "assistant"), None
    )
    locale = reply_locale(latest, tenant, last_trace, own_locale)
    search_locale = own_locale or locale
    with budget.deadline(tuning.retrieve_budget_seconds):
        retrieval = await retrieve(
            latest,
            problem,
            plan,
            search_locale,
            backend=services.search,
            embedder=services.embedder,
            reranker=services.reranker,
            tuning=tuning,
            synonyms=tenant.synonym_table,
        )
    similar = await similar_cases(services, case, problem, retrieval)
    base = Suggestion(
        case_ref=case.case_ref,
        conversation_id=case.conversation_id,
        customer_id=customer.id if customer else case.customer_id,
        conversation_length=len(messages),
        kind="none",
        problem=problem,
        locale=locale,
        confidence=retrieval.confidence,
        similar=similar,
        created_at=datetime.now(UTC),
    )
    if is_policy_case(case.intent, tenant):
        drafted = _policy(services, base, case.intent or "", retrieval, plan)
    else:
        drafted = await _answer(services, base, case, messages, retrieval, customer, plan)
    latency = {**drafted.latency_ms, "retrieve": round(retrieval.latency_ms.get("total", 0.0), 1)}
    latency["total"] = round((time.perf_counter() - started) * 1000.0, 1)
    return drafted.model_copy(update={"latency_ms": latency})


def _policy(
    services: Services, base: Suggestion, intent: str, retrieval: RetrievalResult, plan: str | None
) -> Suggestion:
    """Quote the best policy passage the customer may read; say what the agent must decide."""
    # a request ("I want a refund") is not a question the answerability band rates: the policy
    # passage is the best-ranked article passage the reranker did not all but discard
    floor = services.tuning.weak_passage_floor
    docs = [
        p for p in retrieval.passages if p.hit.kind == "doc" and (p.rerank_score or 0.0) >= floor
    ]
    best = docs[0] if docs else None
    text, decide, quoted = policy_draft(
        services.tenant,
        intent,
        base.locale,
        best.hit.text if best else None,
        services.tuning.assist_quote_max_chars,
    )
    sources = _sources(services, retrieval, plan, cited={best.hit.passage_id} if best else set())
    if best is not None:  # the quoted passage is [1], as the draft cites it
        sources.sort(key=lambda s: s.passage_id != best.hit.passage_id)
        sources = [s.model_copy(update={"n": i}) for i, s in enumerate(sources, 1)]
    return base.model_copy(
        update={
            "kind": "policy",
            "text": text,
            "decide": decide,
            "policy_quote": quoted,
            "sources": sources,
        }
    )


async def _answer(
    services: Services,
    base: Suggestion,
    case: Escalation,
    messages: list[Message],
    retrieval: RetrievalResult,
    customer: Customer | None,
    plan: str | None,
) -> Suggestion:
    """The customer turn's generation stage, over the customer-filtered passages."""
    store, tuning, tenant = services.store, services.tuning, services.tenant
    if retrieval.confidence == "none":  # nothing answers it: sources shown, no draft to guess
        return base.model_copy(update={"sources": _sources(services, retrieval, plan, set())})
    chat_model, capped = await spend.chat_model_for_turn(
        services.chat_model, services.fallback_model, store, tuning
    )
    conv = await store.conversations.get(case.conversation_id)
    recent = messages[-(tuning.verbatim_turns * 2) :]
    context = memory.build_context(
        conv.summary if conv else "", memory.facts_from_docs(conv.facts if conv else []), recent
    )
    phrases = tenant.templates.get(base.locale)
    t = time.perf_counter()
    answer = await generate_answer(
        question=base.problem,
        original=retrieval.original or base.problem,
        passages=[prompt_passage(p) for p in retrieval.passages],
        tool_results=[],
        memory_context=context,
        customer_name=customer.name if customer else None,
        confidence=retrieval.confidence,
        intent=case.intent or "other",
        chat_model=chat_model,
        fallback_model=services.fallback_model,
        tuning=tuning,
        locale=base.locale,
        phrases=phrases,
        reference=services.prompt_reference,
        product_names=services.router.ids.product_names,
        synonyms=tenant.synonym_table,
    )
    await spend.record_spend(store, services.settings, answer)
    return _with_answer(services, base, answer, retrieval, plan, capped, time.perf_counter() - t)


def _with_answer(
    services: Services,
    base: Suggestion,
    answer: Answer,
    retrieval: RetrievalResult,
    plan: str | None,
    capped: bool,
    seconds: float,
) -> Suggestion:
    offers = [services.tenant.text(k, base.locale) for k in OFFER_KEYS]
    drafted = answer.kind == "answer"
    cited = {str(c.get("passageId")) for c in answer.citations}
    return base.model_copy(
        update={
            "kind": "answer" if drafted else "none",
            "text": without_offers(answer.text, offers) if drafted else "",
            "sources": _sources(services, retrieval, plan, cited),
            "model": answer.model,
            "fallback_reason": answer.fallback_reason,
            "spend_cap_reached": capped,
            "latency_ms": {"generate": round(seconds * 1000.0, 1)},
        }
    )


def _sources(
    services: Services, retrieval: RetrievalResult, plan: str | None, cited: set[str]
) -> list[SuggestionSource]:
    """The passages beside the draft, numbered as the draft cites them."""
    key = link_key(services.settings)
    out = []
    for n, p in enumerate(retrieval.passages, 1):
        h = p.hit
        url = article_url(h.doc_id, h.audience, key, plan, page=h.page) if h.kind == "doc" else None
        out.append(
            SuggestionSource(
                n=n,
                kind=h.kind,
                doc_id=h.doc_id,
                passage_id=h.passage_id,
                title=h.title,
                breadcrumb=h.breadcrumb,
                audience=h.audience,
                rerank_score=None if p.rerank_score is None else round(float(p.rerank_score), 4),
                cited=h.passage_id in cited,
                url=url,
            )
        )
    return out
