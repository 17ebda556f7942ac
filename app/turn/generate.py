"""Generate (DESIGN 8): one turn's answer with checked citations, or an honest "I don't know".

Rules, in order:

1. `acknowledgment` ("thanks", "that worked") → a short personal reply; no passages, no model call.
2. confidence `none` and no tool result that found something → an honest reply (what the lookups
   said, or "I don't have enough information…") with the offer of a person; no model call: a
   model given nothing relevant can only guess.
3. otherwise the configured chat model answers from the prompt of `app.turn.prompt`. If it raises
   `ProviderError`, times out, or returns nothing, the fallback (offline) model answers this turn
   instead and `fallback_reason` says why; the customer never sees an error.
4. every `[n]` in the answer is checked against the passages supplied; invalid ones are removed
   and counted (`invalid_citations`).
5. the model's stop reason decides what a reply is worth: `refusal` → the safe no-answer reply
   (offering a person), kind `refused`, and the engine counts the turn as failed; `max_tokens` →
   the text up to its last whole sentence, its citations checked again (a cut with no whole
   sentence left is a failure, answered by the fallback). `stopReason` goes into the trace.

`stream_answer` is the same turn as text deltas for the SSE endpoint: it yields `str` pieces
whose concatenation is exactly `Answer.text`, then the `Answer` itself as the last item. A model
failing mid-stream cannot take back what was shown, so the offline answer is appended after a
short apology and the failure is recorded the same way. A refusal or a `max_tokens` cut is known
only at the end of the stream: the `Answer` then carries the safe or trimmed text, which is what
is stored (the widget re-renders the stored message at `done`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from app.language.synonyms import EMPTY, SynonymTable
from app.providers import budget
from app.providers.chat.base import (
    ChatModel,
    GenerationReply,
    GenerationRequest,
    PassageLike,
    StreamDone,
    StreamEvent,
    ToolCall,
    ToolOutcome,
    ToolRunner,
    Usage,
)
from app.providers.errors import ProviderError
from app.text import Phrases, acknowledgment_reply, no_answer_reply, phrase
from app.turn.citations import CitationStreamFilter, check_citations
from app.turn.memory import MemoryContext
from app.turn.prompt import build_request
from app.turn.tools import TOOL_SPECS
from tuning import Tuning

log = logging.getLogger(__name__)

AnswerKind = Literal["answer", "no_answer", "acknowledgment", "refused"]
RULES = "rules"  # the `model` of replies that needed no model
INTERRUPTED = " …\n\nSorry, my connection dropped while answering. "

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    text: str
    kind: AnswerKind
    citations: tuple[dict[str, Any], ...]  # [{n, passageId, docId, title, kind}]
    invalid_citations: int
    model: str  # who wrote it: "anthropic:<model>", "offline", or "rules"
    fallback_reason: str | None
    usage: Usage
    latency_ms: int
    tool_calls: tuple[ToolCall, ...] = ()  # tools the model called while answering
    stop_reason: str | None = None  # the model's, when a model wrote it

    def to_meta(self) -> dict[str, Any]:
        """The generation part of the assistant message's `meta` (DESIGN 3)."""
        return {
            "answerKind": self.kind,
            "citations": [dict(c) for c in self.citations],
            "invalidCitations": self.invalid_citations,
            "model": self.model,
            "fallbackReason": self.fallback_reason,
            "tokens": self.usage.to_meta(),
            "modelTools": [c.trace() for c in self.tool_calls],
            "stopReason": self.stop_reason,
        }


def _citations(
    numbers: Sequence[int], passages: Sequence[PassageLike]
) -> tuple[dict[str, Any], ...]:
    out = []
    for n in numbers:
        p = passages[n - 1]
        out.append({"n": n, "passageId": p.id, "docId": p.doc_id, "title": p.title, "kind": p.kind})
    return tuple(out)


def _elapsed_ms(start: float) -> int:
    return round((time.perf_counter() - start) * 1000)


def _reason(exc: BaseException, timeout_seconds: float | None) -> str:
    if isinstance(exc, TimeoutError):
        return f"timeout after {timeout_seconds}s" if timeout_seconds else "timeout"
    return f"{type(exc).__name__}: {exc}"[:300]


def _shortcut(
    *,
    original: str,
    question: str,
    tool_results: Sequence[ToolOutcome],
    customer_name: str | None,
    confidence: str,
    intent: str,
    start: float,
    phrases: Phrases | None = None,
) -> Answer | None:
    """Rules 1 and 2: replies that need no model."""
    kind: AnswerKind
    if intent == "acknowledgment":
        text = acknowledgment_reply(original or question, customer_name, phrases)
        kind = "acknowledgment"
    elif confidence == "none" and not any(r.ok and r.found for r in tool_results):
        text, kind = no_answer_reply(tool_results, phrases), "no_answer"
    else:
        return None
    return Answer(text, kind, (), 0, RULES, None, Usage(), _elapsed_ms(start))


def _request(
    *,
    round_timeout_seconds: float | None = None,
    question: str,
    original: str,
    passages: Sequence[PassageLike],
    tool_results: Sequence[ToolOutcome],
    memory_context: MemoryContext | None,
    customer_name: str | None,
    confidence: str,
    intent: str,
    tool_runner: ToolRunner | None,
    locale: str = "en",
    phrases: Phrases | None = None,
    reference: str = "",
    product_names: Mapping[str, str] | None = None,
    synonyms: SynonymTable = EMPTY,
) -> GenerationRequest:
    request = build_request(
        question=question,
        original=original,
        passages=passages,
        tool_results=tool_results,
        memory=memory_context,
        customer_name=customer_name,
        confidence=confidence,
        intent=intent,
        tools=TOOL_SPECS,
        tool_runner=_declared_args_only(tool_runner),
        locale=locale,
        phrases=phrases,
        reference=reference,
        product_names=product_names,
        synonyms=synonyms,
    )
    return dataclasses.replace(request, round_timeout_seconds=round_timeout_seconds)


_DECLARED_ARGS = {
    spec["name"]: frozenset(spec["input_schema"].get("properties", {})) for spec in TOOL_SPECS
}


def _declared_args_only(runner: ToolRunner | None) -> ToolRunner | None:
    """Tool calls reach the session with only the arguments their schema declares.

    The session ignores anything else anyway (the customer comes from the session, never from the
    model); dropping it here means a model told to "pass customerId=…" gets nowhere, visibly.
    """
    if runner is None:
        return None

    async def run(name: str, args: dict[str, Any]) -> ToolOutcome:
        allowed = _DECLARED_ARGS.get(name, frozenset())
        return await runner(name, {k: v for k, v in args.items() if k in allowed})

    return run


# a sentence ends at . ! ? or … (with any citations right after it) before a space or the end
_SENTENCE_END = re.compile(r"[.!?…](?:\s*\[\d+\])*(?=\s|$)")


def trim_to_sentence(text: str) -> str:
    """`text` up to the end of its last whole sentence (its citations kept), or "" if none."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()].rstrip() if ends else ""


def _settled(reply: GenerationReply) -> GenerationReply:
    """A `max_tokens` reply cut back to whole sentences; raises when nothing whole is left."""
    if reply.stop_reason != "max_tokens":
        return reply
    trimmed = trim_to_sentence(reply.text)
    if not trimmed.strip():
        raise ProviderError("the reply was cut off (max_tokens) before a whole sentence")
    return dataclasses.replace(reply, text=trimmed)


def _offline_request(request: GenerationRequest) -> GenerationRequest:
    return dataclasses.replace(request, tools=(), tool_runner=None)


async def _within(awaitable: Awaitable[T], timeout_seconds: float | None) -> T:
    async with asyncio.timeout(timeout_seconds):
        return await awaitable


async def _timed(
    events: AsyncIterator[StreamEvent], timeout_seconds: float | None
) -> AsyncGenerator[StreamEvent, None]:
    """`events` with an overall deadline that applies only while *waiting* for the provider.

    (A timeout around the whole loop would also span our `yield`s, and could cancel the consumer's
    code instead of the provider's.) The provider stream is closed however this generator ends.
    """
    iterator = aiter(events)
    loop = asyncio.get_running_loop()
    deadline = None if timeout_seconds is None else loop.time() + timeout_seconds
    try:
        while True:
            try:
                if deadline is None:  # a timeout context per event is not free: skip it
                    event = await anext(iterator)
                else:
                    async with asyncio.timeout_at(deadline):
                        event = await anext(iterator)
            except StopAsyncIteration:
                return
            yield event
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


READABLE_PROBE_CHARS = 40  # how much of a streamed reply is held back to check it reads as text


def looks_like_text(text: str) -> bool:
    """A reply a customer could read: no replacement characters, letters outnumber symbols."""
    if "\ufffd" in text:
        return False
    letters = sum(ch.isalpha() for ch in text)
    symbols = sum(ch in "{}<>%$#@^*|~`\\" for ch in text)
    return letters > 0 and symbols <= letters


async def _readable(events: AsyncGenerator[StreamEvent, None]) -> AsyncGenerator[StreamEvent, None]:
    """Hold back the first characters of a stream until they read as text; garbage raises
    `ProviderError` before the customer has seen any of it."""
    held: list[StreamEvent] = []
    probe = ""
    checked = False
    async with aclosing(events) as source:
        iterator = source.__aiter__()
        while True:
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                break
            except Exception:
                if held and looks_like_text(probe):  # a readable start is shown, then the error
                    for e in held:
                        yield e
                raise
            if checked:
                yield event
                continue
            held.append(event)
            probe += (
                event.reply.text
                if isinstance(event, StreamDone) and not probe
                else ("" if isinstance(event, StreamDone) else event.text)
            )
            if len(probe) >= READABLE_PROBE_CHARS or isinstance(event, StreamDone):
                if probe.strip() and not looks_like_text(probe):
                    raise ProviderError("the model's reply was not readable text")
                checked = True
                for e in held:
                    yield e
                held.clear()
    for e in held:
        yield e


async def generate_answer(
    *,
    question: str,
    original: str,
    passages: Sequence[PassageLike],
    tool_results: Sequence[ToolOutcome],
    memory_context: MemoryContext | None,
    customer_name: str | None,
    confidence: str,
    intent: str,
    chat_model: ChatModel,
    fallback_model: ChatModel,
    tuning: Tuning,
    tool_runner: ToolRunner | None = None,
    timeout_seconds: float | None = None,
    locale: str = "en",
    phrases: Phrases | None = None,
    reference: str = "",  # the tenant reference block (app.turn.reference)
    product_names: Mapping[str, str] | None = None,  # alias -> product name (the tenant's)
    synonyms: SynonymTable = EMPTY,  # the tenant's groups (the offline answerer reads them)
) -> Answer:
    """The answer for one turn (see the module doc for the rules)."""
    start = time.perf_counter()
    passages = list(passages)[: tuning.top_passages]
    short = _shortcut(
        original=original,
        question=question,
        tool_results=tool_results,
        customer_name=customer_name,
        confidence=confidence,
        intent=intent,
        start=start,
        phrases=phrases,
    )
    if short is not None:
        return short
    request = _request(
        round_timeout_seconds=tuning.generation_round_budget_seconds,
        question=question,
        original=original,
        passages=passages,
        tool_results=tool_results,
        memory_context=memory_context,
        customer_name=customer_name,
        confidence=confidence,
        intent=intent,
        tool_runner=tool_runner,
        locale=locale,
        phrases=phrases,
        reference=reference,
        product_names=product_names,
        synonyms=synonyms,
    )
    reason: str | None = None
    reply: GenerationReply | None = None
    try:
        reply = _settled(await _within(chat_model.generate(request), _left(timeout_seconds)))
        if reply.stop_reason == "refusal":
            return _refused(reply, tool_results, start)
        if not reply.text.strip():
            raise ProviderError("empty reply")
        if not looks_like_text(reply.text):
            raise ProviderError("the model's reply was not readable text")
    except (ProviderError, TimeoutError) as exc:
        reason = _reason(exc, timeout_seconds)
        log.warning("chat model %s failed, answering offline: %s", chat_model.name, reason)
        reply = None
        if fallback_model is not chat_model:
            try:
                reply = await fallback_model.generate(_offline_request(request))
            except ProviderError as second:
                log.error("fallback model failed too: %s", second)
    if reply is None or not reply.text.strip():
        text = no_answer_reply(tool_results, phrases)
        return Answer(text, "no_answer", (), 0, RULES, reason, Usage(), _elapsed_ms(start))
    answer = _final(reply, reply.text, passages, reason, start)
    if not answer.text:  # nothing left once invalid citations went
        answer = dataclasses.replace(answer, text=no_answer_reply(tool_results, phrases))
    return answer


def _left(timeout_seconds: float | None) -> float | None:
    """The generation stage's timeout: the caller's, clipped to the turn's remaining budget."""
    left = budget.remaining()
    if left is None:
        return timeout_seconds
    return left if timeout_seconds is None else min(left, timeout_seconds)


def _refused(reply: GenerationReply, tool_results: Sequence[ToolOutcome], start: float) -> Answer:
    """The model declined: nothing it wrote is shown; the customer is offered a person."""
    log.warning("chat model %s refused to answer", reply.model)
    return Answer(
        text=no_answer_reply(tool_results),
        kind="refused",
        citations=(),
        invalid_citations=0,
        model=reply.model,
        fallback_reason="refusal",
        usage=reply.usage,
        latency_ms=_elapsed_ms(start),
        tool_calls=reply.tool_calls,
        stop_reason="refusal",
    )


async def stream_answer(
    *,
    question: str,
    original: str,
    passages: Sequence[PassageLike],
    tool_results: Sequence[ToolOutcome],
    memory_context: MemoryContext | None,
    customer_name: str | None,
    confidence: str,
    intent: str,
    chat_model: ChatModel,
    fallback_model: ChatModel,
    tuning: Tuning,
    tool_runner: ToolRunner | None = None,
    timeout_seconds: float | None = None,
    locale: str = "en",
    phrases: Phrases | None = None,
    reference: str = "",  # the tenant reference block (app.turn.reference)
    product_names: Mapping[str, str] | None = None,  # alias -> product name (the tenant's)
    synonyms: SynonymTable = EMPTY,  # the tenant's groups (the offline answerer reads them)
) -> AsyncIterator[str | Answer]:
    """`generate_answer` as text deltas (`str`), then the `Answer` as the last item."""
    start = time.perf_counter()
    passages = list(passages)[: tuning.top_passages]
    short = _shortcut(
        original=original,
        question=question,
        tool_results=tool_results,
        customer_name=customer_name,
        confidence=confidence,
        intent=intent,
        start=start,
        phrases=phrases,
    )
    if short is not None:
        yield short.text
        yield short
        return
    request = _request(
        round_timeout_seconds=tuning.generation_round_budget_seconds,
        question=question,
        original=original,
        passages=passages,
        tool_results=tool_results,
        memory_context=memory_context,
        customer_name=customer_name,
        confidence=confidence,
        intent=intent,
        tool_runner=tool_runner,
        locale=locale,
        phrases=phrases,
        reference=reference,
        product_names=product_names,
        synonyms=synonyms,
    )
    citations = CitationStreamFilter(len(passages))
    raw: list[str] = []
    shown: list[str] = []
    reply: GenerationReply | None = None
    reason: str | None = None
    interrupted = False

    def feed(delta: str) -> str:
        raw.append(delta)
        out = citations.feed(delta)
        if out:
            shown.append(out)
        return out

    try:
        timeout_seconds = _left(timeout_seconds)
        # the offline provider never waits (nothing for a deadline to interrupt), so no timer is
        # armed for each word it streams, as for the offline fallback below
        budget = timeout_seconds if chat_model.language_model else None
        stream = _readable(_timed(chat_model.stream(request), budget))
        async with aclosing(stream) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    reply = event.reply
                elif out := feed(event.text):
                    yield out
        if reply is None:
            raise ProviderError("stream ended without a final reply")
        if reply.stop_reason == "refusal":
            yield _refused(reply, tool_results, start)
            return
        if reply.stop_reason == "max_tokens":
            reply = _settled(dataclasses.replace(reply, text="".join(raw)))
            yield _final(reply, reply.text, passages, None, start)
            return
        if not "".join(raw).strip():
            raise ProviderError("empty reply")
    except (ProviderError, TimeoutError) as exc:
        reason = _reason(exc, timeout_seconds)
        log.warning("chat model %s failed, answering offline: %s", chat_model.name, reason)
        interrupted = bool("".join(raw).strip())
        reply = None
        if dropped := citations.drop_partial():  # "… the signature [1" ends without "[1"
            raw[:] = ["".join(raw)[: -len(dropped)]]
        if interrupted and (out := feed(phrase(phrases, "interrupted", INTERRUPTED))):
            yield out
        if fallback_model is not chat_model:
            try:
                async with aclosing(
                    _timed(fallback_model.stream(_offline_request(request)), None)
                ) as events:
                    async for event in events:
                        if isinstance(event, StreamDone):
                            reply = event.reply
                        elif out := feed(event.text):
                            yield out
            except ProviderError as second:
                log.error("fallback model failed too: %s", second)
                reply = None
        if reply is None and (out := feed(no_answer_reply(tool_results, phrases))):
            yield out
    if out := citations.flush():
        shown.append(out)
        yield out
    text = "".join(shown)
    check = check_citations("".join(raw), len(passages))
    if check.text != text:  # pragma: no cover - the filter guarantees equality
        log.error("streamed text and checked text differ")
    yield Answer(
        text=text,
        kind="answer" if reply is not None or interrupted else "no_answer",
        citations=_citations(check.valid, passages),
        invalid_citations=check.invalid,
        model=reply.model if reply is not None else RULES,
        fallback_reason=reason,
        usage=reply.usage if reply is not None else Usage(),
        latency_ms=_elapsed_ms(start),
        tool_calls=reply.tool_calls if reply is not None else (),
        stop_reason=reply.stop_reason if reply is not None else None,
    )


def _final(
    reply: GenerationReply,
    raw: str,
    passages: Sequence[PassageLike],
    reason: str | None,
    start: float,
) -> Answer:
    """An answer whose text is `raw` with its citations checked against the passages supplied."""
    check = check_citations(raw, len(passages))
    return Answer(
        text=check.text.strip(),
        kind="answer",
        citations=_citations(check.valid, passages),
        invalid_citations=check.invalid,
        model=reply.model,
        fallback_reason=reason,
        usage=reply.usage,
        latency_ms=_elapsed_ms(start),
        tool_calls=reply.tool_calls,
        stop_reason=reply.stop_reason,
    )
