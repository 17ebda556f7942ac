"""A scripted chat model for tests: a queue of replies, and a record of every request it received.

Each call pops the next script item:

- `str` → the answer text (`generate`/`stream`), or JSON text to parse (`complete_json`)
- `dict` → the JSON object (`complete_json`), or its JSON text (`generate`)
- `GenerationReply` / `JsonReply` → returned as is
- an exception instance → raised (wrap vendor-like failures in `ProviderError` yourself)
- `Hang(seconds)` → sleeps, so the caller's timeout fires
- `GARBAGE` → an unusable reply: non-JSON for `complete_json` (raises `ProviderError`, as a real
  adapter would), nonsense text with out-of-range citations for `generate`
- `CallTools([(name, args), ...])` → one tool round: the tools run through the request's
  `tool_runner`, then the next item is taken for the following round (like the real loop)
- `Interrupt(text, error)` → `stream` yields `text` then raises `error`; `generate` just raises
- a callable `(request) -> item` → computed from the request (e.g. a model that *would* obey an
  instruction if one reached it); its result is interpreted as above

`ScriptedChatModel.always(item)` repeats one item forever (fault tests: "fails on every call").
An exhausted script raises `AssertionError`, so a test never passes on a reply it did not script.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.providers.chat.base import (
    ChatMessage,
    GenerationReply,
    GenerationRequest,
    JsonReply,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from app.providers.errors import ProviderError


@dataclass(frozen=True)
class Hang:
    seconds: float = 3600.0


@dataclass(frozen=True)
class CallTools:
    calls: Sequence[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Interrupt:
    text: str
    error: BaseException = field(default_factory=lambda: ProviderError("stream interrupted"))


class _Garbage:
    def __repr__(self) -> str:
        return "GARBAGE"


GARBAGE: Any = _Garbage()
GARBAGE_TEXT = "}{ <<<%%% [99] [0] ��"


@dataclass(frozen=True)
class JsonCall:
    system: str
    messages: tuple[ChatMessage, ...]
    schema: dict[str, Any]


@dataclass
class ScriptedChatModel:
    script: Iterable[Any] = ()
    name: str = "scripted"
    language_model: bool = True
    repeat_last: bool = False
    usage: Usage = field(default_factory=lambda: Usage(input=100, output=20))
    requests: list[GenerationRequest] = field(default_factory=list)
    json_calls: list[JsonCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: deque[Any] = deque(self.script)

    @classmethod
    def always(cls, item: Any, name: str = "scripted") -> ScriptedChatModel:
        return cls([item], name=name, repeat_last=True)

    def add(self, *items: Any) -> None:
        self._queue.extend(items)

    @property
    def calls(self) -> int:
        return len(self.requests) + len(self.json_calls)

    def _next(self, request: GenerationRequest | None) -> Any:
        if not self._queue:
            raise AssertionError(f"{self.name}: script exhausted")
        last = self.repeat_last and len(self._queue) == 1
        item = self._queue[0] if last else self._queue.popleft()
        if callable(item) and request is not None and not isinstance(item, type):
            item = item(request)
        return item

    async def _resolve(self, item: Any) -> Any:
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Hang):
            await asyncio.sleep(item.seconds)
            raise ProviderError("scripted hang ended")
        return item

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        self.json_calls.append(JsonCall(system, tuple(messages), dict(schema)))
        item = await self._resolve(self._next(None))
        if isinstance(item, JsonReply):
            return item
        if item is GARBAGE:
            item = GARBAGE_TEXT
        if isinstance(item, str):
            try:
                item = json.loads(item)
            except ValueError as exc:
                raise ProviderError(f"model returned invalid JSON: {exc}") from exc
        if not isinstance(item, dict):
            raise ProviderError(f"model returned a {type(item).__name__}, not an object")
        return JsonReply(data=item, usage=self.usage, model=self.name)

    async def _rounds(self, request: GenerationRequest) -> GenerationReply | Interrupt:
        self.requests.append(request)
        calls: list[ToolCall] = []
        usage = Usage()
        for _ in range(request.max_tool_rounds + 1):
            item = await self._resolve(self._next(request))
            usage = usage + self.usage
            if not isinstance(item, CallTools):
                break
            if request.tool_runner is None:
                raise AssertionError("scripted a tool call but the request offers no tools")
            for name, args in item.calls:
                result = await request.tool_runner(name, dict(args))
                calls.append(ToolCall(name, dict(args), result))
        else:
            raise AssertionError("scripted more tool rounds than the request allows")
        if isinstance(item, Interrupt):
            return item
        if isinstance(item, GenerationReply):
            return GenerationReply(
                item.text, item.usage, item.model, (*calls, *item.tool_calls), item.stop_reason
            )
        if item is GARBAGE:
            item = GARBAGE_TEXT
        if isinstance(item, dict):
            item = json.dumps(item)
        if not isinstance(item, str):
            raise AssertionError(f"cannot interpret script item {item!r}")
        return GenerationReply(item, usage, self.name, tuple(calls), "end_turn")

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        reply = await self._rounds(request)
        if isinstance(reply, Interrupt):
            raise reply.error
        return reply

    async def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        reply = await self._rounds(request)
        for piece in re.findall(r"\S+\s*|\s+", reply.text):
            yield TextDelta(piece)
        if isinstance(reply, Interrupt):
            raise reply.error
        yield StreamDone(reply)


__all__ = [
    "GARBAGE",
    "CallTools",
    "Hang",
    "Interrupt",
    "JsonCall",
    "ScriptedChatModel",
]
