"""The chat-model interface every stage depends on, and the values that cross it.

A `ChatModel` has three verbs: `complete_json` (condensation: one structured object), `generate`
(an answer, possibly after calling the customer-data tools) and `stream` (the same answer as text
deltas, then one final event). Adapters translate vendor failures into `ProviderError`; choosing
a fallback is the caller's wiring, never adapter logic.

A `GenerationRequest` carries the rendered prompt (what a language model reads) *and* the
structured ingredients it was rendered from (what the offline extractive provider reads), so both
providers answer the same request without either re-parsing the other's format.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from app.language.synonyms import EMPTY, SynonymTable
from app.providers.errors import ProviderError
from tuning import TUNING

Role = Literal["user", "assistant"]
MAX_TOOL_ROUNDS = TUNING.max_tool_rounds


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call (or one turn, summed) consumed; `input` excludes cache reads and writes."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    calls: int = 0  # API calls these tokens came from
    cache_eligible_calls: int = 0  # calls whose marked prefix reached the model's cache minimum

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.calls + other.calls,
            self.cache_eligible_calls + other.cache_eligible_calls,
        )

    def to_meta(self) -> dict[str, int]:
        """The `meta.tokens` shape of DESIGN 3 (plus cache writes, which are billed too)."""
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "calls": self.calls,
            "cacheEligibleCalls": self.cache_eligible_calls,
        }


class PassageLike(Protocol):
    """A retrieved passage as generation sees it (retrieval's own type only needs these fields)."""

    @property
    def id(self) -> str: ...  # chunk id or ticket id
    @property
    def doc_id(self) -> str: ...  # article slug or ticket id: what a citation links to
    @property
    def kind(self) -> str: ...  # "doc" | "ticket"
    @property
    def title(self) -> str: ...
    @property
    def breadcrumb(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Outline:
    """The numbered sections of the article a passage comes from (`app.turn.outline`): its
    title, each step's heading, and up to two of its sentences that name what the question names
    and no retrieved passage holds."""

    title: str
    steps: tuple[str, ...]
    notes: tuple[str, ...] = ()
    # "steps": a procedure's numbered sections; "overview": each section's heading and first
    # sentence, for a question about the article's whole subject (`outline.article_overview`)
    kind: str = "steps"


@dataclass(frozen=True, slots=True)
class Passage:
    """A plain `PassageLike` (tests, adapters, the eval harness). `outline` is set on the first
    passage of an article whose procedure a broad how-to question asks for; `section` on every
    article passage whose stored section tree the turn found."""

    id: str
    doc_id: str
    kind: str
    title: str
    breadcrumb: str
    text: str
    outline: Outline | None = None
    # the article section the passage was cut from (`app.store.models.Section`: path, anchor,
    # typed blocks), attached by the turn; answers are selected from its blocks
    section: Any = None
    tree: tuple[Any, ...] = ()  # all of that article's sections (a sibling may answer better)


class ToolOutcome(Protocol):
    """What a tool call returned (`app.turn.tools.ToolResult` has exactly these fields)."""

    @property
    def tool(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def found(self) -> bool: ...
    @property
    def data(self) -> Any: ...
    @property
    def message(self) -> str: ...


ToolRunner = Callable[[str, dict[str, Any]], Awaitable[ToolOutcome]]
"""`async (name, args) -> result`, bound to the verified session (e.g. `SessionTools.call`)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model made during generation, with what it returned."""

    name: str
    args: dict[str, Any]
    result: ToolOutcome

    def trace(self) -> dict[str, Any]:
        return {"tool": self.name, "ok": self.result.ok, "found": self.result.found}


@dataclass(frozen=True)
class GenerationRequest:
    """One answer to produce: `system` is static (cacheable), everything per-turn in `messages`."""

    system: str
    messages: Sequence[ChatMessage]
    # the structured ingredients the prompt was rendered from
    question: str = ""  # the condensed, standalone question
    original: str = ""  # the customer's own words
    passages: Sequence[PassageLike] = ()
    tool_results: Sequence[ToolOutcome] = ()
    customer_name: str | None = None
    intent: str = "other"
    confidence: str = "strong"
    # tools the model may call (TOOL_SPECS), run through `tool_runner`; none offered without it
    tools: Sequence[Mapping[str, Any]] = ()
    tool_runner: ToolRunner | None = None
    max_tool_rounds: int = MAX_TOOL_ROUNDS
    max_tokens: int = TUNING.reply_max_tokens
    # the reply language and its phrase table (tenant templates: "sign_in", "order_status", ...);
    # an empty table means the built-in English wording
    locale: str = "en"
    phrases: Mapping[str, str] | None = None
    # the tenant's product aliases, each with the product's name ("raumpanel" -> "Room Panel"):
    # the offline answerer matches a question's words with a passage's through them
    product_names: Mapping[str, str] | None = None
    # the tenant's synonym groups: the offline answerer reads "United Kingdom" in a passage as
    # covering a question's "UK" (a language model knows that by itself)
    synonyms: SynonymTable = EMPTY
    # each model call (tool round) gets at most this long, inside the caller's deadline
    round_timeout_seconds: float | None = None


@dataclass(frozen=True)
class GenerationReply:
    """`stop_reason` is the API's for the last call: `end_turn`, `tool_use`, `max_tokens` (the
    text is cut off mid-answer), `refusal` (the model declined; the text must not be shown as an
    answer), `pause_turn` (only if the adapter's continuation budget ran out)…"""

    text: str
    usage: Usage
    model: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None


@dataclass(frozen=True)
class JsonReply:
    data: dict[str, Any]
    usage: Usage
    model: str = ""


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class StreamDone:
    """Last event of a stream: the whole reply (its text is the concatenation of the deltas)."""

    reply: GenerationReply


StreamEvent = TextDelta | StreamDone


@runtime_checkable
class ChatModel(Protocol):
    """`language_model` is what callers may rely on: True for a model that writes its own text
    (it has a JSON mode, can summarise, and is billed by the token); False for the offline
    extractive provider, whose `complete_json` always raises."""

    name: str
    language_model: bool

    async def complete_json(
        self, system: str, messages: Sequence[ChatMessage], schema: Mapping[str, Any]
    ) -> JsonReply:
        """One JSON object shaped by `schema` (callers still clamp it: a schema is not a check)."""
        ...

    async def generate(self, request: GenerationRequest) -> GenerationReply:
        """The answer text, after at most `request.max_tool_rounds` rounds of tool calls."""
        ...

    def stream(self, request: GenerationRequest) -> AsyncIterator[StreamEvent]:
        """`generate` as text deltas, then one `StreamDone`."""
        ...


async def drain(events: AsyncIterator[StreamEvent]) -> GenerationReply:
    """The final reply of a stream (the reply already carries the full text)."""
    reply: GenerationReply | None = None
    async for event in events:  # run to the end, so the stream closes itself
        if isinstance(event, StreamDone):
            reply = event.reply
    if reply is None:
        raise ProviderError("stream ended without a final reply")
    return reply
