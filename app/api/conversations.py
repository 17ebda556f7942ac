"""Customer endpoints: sessions, conversations, messages (SSE or JSON), feedback, handoff."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel, Field, field_validator

from app.api.deps import PrincipalDep, ServicesDep, session_ended, write_limit
from app.api.schemas import (
    ConversationCreated,
    ConversationOut,
    HandoffOut,
    MessagesOut,
    Ok,
    SessionOut,
    TurnOut,
)
from app.api.security import client_address
from app.api.views import conversation_view, error_responses, message_view
from app.errors import Unauthenticated
from app.identity import SESSION_HOURS, Principal, mint_session, verify_identity_claims
from app.knowledge.loop import rate_cited_tickets
from app.provision import identity_keys, provision_customer
from app.ratelimit import check_rate_limits
from app.safety.pii import mask
from app.services import Services
from app.store.models import Conversation
from app.turn.engine import TurnSink, clean_message, request_handoff, run_turn
from app.turn.entitlement import normalize_locale

log = logging.getLogger(__name__)
router = APIRouter(
    prefix="/v1", tags=["customer"], responses=error_responses(401, 404, 413, 422, 429, 503)
)


class SessionIn(BaseModel):
    identityToken: str | None = Field(
        default=None, max_length=4096, description="Host-signed HS256 JWT; omit for anonymous."
    )
    locale: str | None = Field(
        default=None,
        max_length=35,
        pattern=r"^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$",
        description="An anonymous visitor's language (BCP 47, e.g. `de-AT`): answers come from "
        "articles in that language. A signed-in customer's own locale wins.",
    )


class MessageIn(BaseModel):
    content: str = Field(max_length=60_000, description="What the customer typed.")

    @field_validator("content", mode="before")
    @classmethod
    def _drop_unpaired_surrogates(cls, value: object) -> object:
        """JSON may carry lone surrogates (\\ud800); they are not text, so they are dropped."""
        if isinstance(value, str):
            return (
                value.encode("utf-8", "ignore").decode("utf-8")
                if any("\ud800" <= ch <= "\udfff" for ch in value)
                else value
            )
        return value


class MessageFeedbackIn(BaseModel):
    helpful: bool
    comment: str | None = Field(default=None, max_length=2000)


class ReadIn(BaseModel):
    seq: int = Field(ge=0, description="The last message seq the customer has now seen.")


class ConversationFeedbackIn(BaseModel):
    resolved: bool
    comment: str | None = Field(default=None, max_length=2000)


@router.post(
    "/sessions",
    response_model=SessionOut,
    dependencies=[write_limit("sessions", "rate_limit_sessions_per_minute")],
)
async def create_session(body: SessionIn, services: ServicesDep) -> dict[str, Any]:
    """Exchange a host-signed identity token (or nothing, for anonymous) for a session token.

    A token naming a customer we have not seen creates them from its claims (see
    `app/provision.py`); a known customer is updated from them.
    """
    settings = services.settings
    customer = None
    if body.identityToken:
        try:
            claims = verify_identity_claims(body.identityToken, identity_keys(settings))
        except Unauthenticated as exc:
            raise HTTPException(401, detail=str(exc)) from exc
        customer = await provision_customer(
            services.store, claims, tuple(services.tuning.audience_ladder)
        )
        # the stored record's session epoch (a concurrent first sign-in may have created it)
        customer = await services.store.customers.get(customer.id) or customer
    locale = normalize_locale(body.locale) if body.locale and customer is None else None
    token, exp = mint_session(
        customer.id if customer else None,
        settings.session_secret.get_secret_value(),
        locale,
        epoch=customer.session_epoch if customer else None,
    )
    return {
        "sessionToken": token,
        "anonymous": customer is None,
        "customer": (
            {
                "id": customer.id,
                "name": customer.name,
                "plan": customer.plan,
                "locale": customer.locale,
            }
            if customer
            else None
        ),
        "expiresAt": exp.isoformat(),
    }


@router.delete("/sessions/current", response_model=Ok)
async def revoke_session(principal: PrincipalDep, services: ServicesDep) -> dict[str, Any]:
    """Sign out: this session token stops working at once (the widget's shutdown and reset)."""
    until = datetime.now(UTC) + timedelta(hours=SESSION_HOURS)
    await services.store.revoked_sessions.revoke(principal.session_id, until)
    for wake in _LISTENERS.get(principal.session_id, ()):
        wake.set()  # this worker's streams end now; other workers' on their next check
    return {"ok": True}


async def owned(services: Services, principal: Principal, conversation_id: str) -> Conversation:
    """The caller's own conversation, or 404 (someone else's is indistinguishable from none)."""
    conv = await services.store.conversations.get_owned(
        conversation_id, customer_id=principal.customer_id, anonymous_id=principal.anonymous_id
    )
    if conv is None:
        raise HTTPException(404, detail="conversation not found")
    return conv


@router.post(
    "/conversations",
    status_code=201,
    response_model=ConversationCreated,
    dependencies=[write_limit("conversations", "rate_limit_conversations_per_minute")],
)
async def create_conversation(principal: PrincipalDep, services: ServicesDep) -> dict[str, Any]:
    conv = await services.store.conversations.create(
        customer_id=principal.customer_id,
        anonymous_id=principal.anonymous_id,
        anonymous_ttl_days=services.tuning.anonymous_session_ttl_days,
    )
    return {"id": conv.id, "status": conv.status, "createdAt": conv.created_at.isoformat()}


@router.get(
    "/conversations/{conversation_id}",
    response_model=ConversationOut,
    response_model_exclude_unset=True,
)
async def get_conversation(
    conversation_id: str, principal: PrincipalDep, services: ServicesDep
) -> dict[str, Any]:
    conv = await owned(services, principal, conversation_id)
    messages = await services.store.messages.after(conv.id, 0)
    return conversation_view(conv, messages)


@router.get(
    "/conversations/{conversation_id}/messages",
    response_model=MessagesOut,
    response_model_exclude_unset=True,
    responses={
        200: {
            "description": "JSON (`MessagesOut`), or with `Accept: text/event-stream` a stream "
            "of `status` ({status}) and `message` (a message) events as they are stored, "
            "with a comment line every 15 s; it ends after about 25 s (reconnect with `after`).",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def list_messages(
    conversation_id: str,
    principal: PrincipalDep,
    services: ServicesDep,
    request: Request,
    after: Annotated[int, Query(ge=0, description="Only messages with a greater seq.")] = 0,
    accept: Annotated[str | None, Header()] = None,
) -> Any:
    """Messages after `after`: a person's replies reach the widget this way, pushed as they
    are stored when the client asks for a stream."""
    conv = await owned(services, principal, conversation_id)
    if accept and "text/event-stream" in accept:
        return EventSourceResponse(
            _message_events(services, request, principal, conv.id, after),
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    messages = await services.store.messages.after(conv.id, after)
    return {"status": conv.status, "messages": [message_view(m) for m in messages]}


LISTEN_SECONDS = 25.0  # one stream's life: proxies and load balancers drop idle ones anyway
LISTEN_CHECK_SECONDS = 1.0  # how soon a stored reply is pushed (one indexed read per check)
LISTEN_PING_SECONDS = 15.0
# session id -> wake-up events of this worker's open streams: a sign-out ends them at once
_LISTENERS: dict[str, set[asyncio.Event]] = {}


async def _message_events(
    services: Services, request: Request, principal: Principal, conversation_id: str, after: int
) -> AsyncIterator[str]:
    """New messages and status changes of one conversation, as they are stored.

    Any worker can serve it (it reads the store); a MongoDB change stream on `messages` would
    replace the one-second check on a replica set. The session is checked again before every
    read, so a signed-out, revoked or deleted session receives nothing stored after that.
    """
    wake = asyncio.Event()
    _LISTENERS.setdefault(principal.session_id, set()).add(wake)
    try:
        async for event in _listen(services, request, principal, conversation_id, after, wake):
            yield event
    finally:
        mine = _LISTENERS.get(principal.session_id, set())
        mine.discard(wake)
        if not mine:
            _LISTENERS.pop(principal.session_id, None)


async def _listen(
    services: Services,
    request: Request,
    principal: Principal,
    conversation_id: str,
    after: int,
    wake: asyncio.Event,
) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    end = loop.time() + LISTEN_SECONDS
    pinged = loop.time()
    status: str | None = None
    while loop.time() < end and not await request.is_disconnected():
        if wake.is_set() or await session_ended(services, principal):
            yield _sse("end", {"reason": "session ended"})
            return
        conv = await services.store.conversations.get(conversation_id)
        if conv is None:
            yield _sse("status", {"status": "gone"})
            return
        if conv.status != status:
            status = conv.status
            yield _sse("status", {"status": status})
        for m in await services.store.messages.after(conversation_id, after):
            after = max(after, m.seq)
            yield _sse("message", message_view(m))
        if loop.time() - pinged >= LISTEN_PING_SECONDS:
            pinged = loop.time()
            yield ": ping\n\n"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), LISTEN_CHECK_SECONDS)


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, default=str, ensure_ascii=False)}\n\n"


class _QueueSink(TurnSink):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    async def meta(self, data: dict[str, Any]) -> None:
        await self.queue.put(("meta", data))

    async def delta(self, text: str) -> None:
        await self.queue.put(("delta", {"text": text}))


@router.post(
    "/conversations/{conversation_id}/messages",
    response_model=TurnOut,
    response_model_exclude_unset=True,
    responses={
        200: {
            "description": "JSON (`TurnOut`), or with `Accept: text/event-stream` a stream of "
            "`meta`, `delta` ({text}) … then `done` ({message, userMessage}) or `error` "
            "({detail}) events.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def post_message(
    conversation_id: str,
    body: MessageIn,
    request: Request,
    principal: PrincipalDep,
    services: ServicesDep,
    accept: Annotated[str | None, Header()] = None,
) -> Any:
    """Send a message. `Accept: text/event-stream` streams meta, delta... and done events."""
    conv = await owned(services, principal, conversation_id)
    content = clean_message(body.content, services.tuning)  # 413 / 422 via the error handlers
    address = client_address(request)
    await check_rate_limits(services.store, services.tuning, principal.session_id, address)

    if not (accept and "text/event-stream" in accept):
        result = await run_turn(services, principal, conv, content)
        return {
            "userMessage": message_view(result.user_message),
            "reply": message_view(result.reply) if result.reply else None,
        }

    sink = _QueueSink()
    # The turn runs as its own task: a client that disconnects mid-stream stops receiving,
    # but the turn still completes and is stored.
    task = services.spawn(run_turn(services, principal, conv, content, sink=sink))

    async def events() -> AsyncIterator[str]:
        while True:
            getter = asyncio.ensure_future(sink.queue.get())
            done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                event, data = getter.result()
                yield _sse(event, data)
                continue
            getter.cancel()
            while not sink.queue.empty():
                event, data = sink.queue.get_nowait()
                yield _sse(event, data)
            exc = task.exception()
            if exc is not None:
                log.error("turn failed", exc_info=exc)
                yield _sse(
                    "error",
                    {
                        "detail": "Something went wrong on our side; your message "
                        "was saved. Please try again in a moment."
                    },
                )
            else:
                result = task.result()
                reply = message_view(result.reply) if result.reply else None
                yield _sse(
                    "done", {"message": reply, "userMessage": message_view(result.user_message)}
                )
            return

    return EventSourceResponse(
        events(), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )


@router.post(
    "/conversations/{conversation_id}/handoff",
    response_model=HandoffOut,
    response_model_exclude_unset=True,
    dependencies=[write_limit("handoffs", "rate_limit_handoffs_per_minute")],
)
async def handoff(
    conversation_id: str, principal: PrincipalDep, services: ServicesDep
) -> dict[str, Any]:
    """The "talk to a person" button: escalates with a full packet and names the case."""
    conv = await owned(services, principal, conversation_id)
    case_ref, message = await request_handoff(services, principal, conv)
    return {"caseRef": case_ref, "message": message_view(message) if message else None}


@router.post(
    "/conversations/{conversation_id}/messages/{message_id}/feedback",
    response_model=Ok,
    dependencies=[write_limit("feedback", "rate_limit_feedback_per_minute")],
)
async def message_feedback(
    conversation_id: str,
    message_id: str,
    body: MessageFeedbackIn,
    principal: PrincipalDep,
    services: ServicesDep,
) -> dict[str, Any]:
    conv = await owned(services, principal, conversation_id)
    msg = await services.store.messages.get(conv.id, message_id)
    if msg is None or msg.role == "user":
        raise HTTPException(404, detail="message not found")
    await services.store.feedback.add(
        conv.id,
        message_id=msg.id,
        helpful=body.helpful,
        comment=mask(body.comment, services.settings.pii_mask),
        expires_at=conv.expires_at,
    )
    if msg.role == "assistant":
        await rate_cited_tickets(services, msg, body.helpful)  # the knowledge loop's feedback
    return {"ok": True}


@router.post(
    "/conversations/{conversation_id}/feedback",
    response_model=Ok,
    dependencies=[write_limit("feedback", "rate_limit_feedback_per_minute")],
)
async def conversation_feedback(
    conversation_id: str,
    body: ConversationFeedbackIn,
    principal: PrincipalDep,
    services: ServicesDep,
) -> dict[str, Any]:
    """ "Did this resolve it?" — the confirmation behind the resolution rate."""
    conv = await owned(services, principal, conversation_id)
    await services.store.feedback.add(
        conv.id,
        resolved=body.resolved,
        comment=mask(body.comment, services.settings.pii_mask),
        expires_at=conv.expires_at,
    )
    await services.store.conversations.update(conv.id, {"resolved": body.resolved})
    return {"ok": True}


@router.post("/conversations/{conversation_id}/read", response_model=Ok)
async def mark_read(
    conversation_id: str, body: ReadIn, principal: PrincipalDep, services: ServicesDep
) -> dict[str, Any]:
    """The customer has seen the conversation up to `seq`: unread counts follow them across
    pages and devices (`readSeq` in the conversation)."""
    conv = await owned(services, principal, conversation_id)
    await services.store.conversations.mark_read(conv.id, min(body.seq, conv.last_seq))
    return {"ok": True}
