"""Faults, abuse and concurrency (issue 6): what the customer sees, and what the store holds."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pymongo.errors import ServerSelectionTimeoutError

from app.main import create_app
from app.providers.chat.base import GenerationRequest
from app.providers.chat.fake import GARBAGE, Hang, ScriptedChatModel
from app.providers.errors import ProviderError
from app.providers.rerank.fake import FakeReranker
from app.store import Store
from tests.apihelp import ADMIN, Api, make_settings, parse_sse, running_app, served
from tuning import TUNING, ConfidenceBands

pytestmark = pytest.mark.integration

UNLIMITED = dataclasses.replace(
    TUNING.without_rate_limits(),
    # the fake rerankers' scores are read as plain score thresholds (no answerability model)
    confidence={**TUNING.confidence, "scores": ConfidenceBands(strong=0.7, weak=0.55)},
)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app(tuning=UNLIMITED) as api:
        yield api


@pytest.fixture
def swap(api: Api) -> Iterator[Any]:
    """Replace a service for one test, restoring it afterwards."""
    saved: dict[str, Any] = {}

    def put(name: str, value: Any) -> None:
        saved.setdefault(name, getattr(api.services, name))
        setattr(api.services, name, value)

    def restore() -> None:
        for name, value in saved.items():
            setattr(api.services, name, value)
        saved.clear()

    put.restore = restore  # type: ignore[attr-defined]
    yield put
    restore()


def strong_reranker() -> FakeReranker:
    return FakeReranker(scores={"": 0.9}, calibration="scores")


def assert_consistent(api: Api, conv: str) -> list[dict[str, Any]]:
    """seq contiguous from 1, and every user message followed by a reply or an error record."""
    msgs = api.messages(conv)
    assert [m["seq"] for m in msgs] == list(range(1, len(msgs) + 1))
    return msgs


@pytest.mark.parametrize(
    "failure",
    [ProviderError("timeout"), GARBAGE, Hang(60)],
    ids=["raises", "garbage", "times-out"],
)
def test_chat_model_failing_on_every_call(api: Api, swap: Any, failure: Any) -> None:
    swap("chat_model", ScriptedChatModel.always(failure, name="anthropic:broken"))
    swap("reranker", strong_reranker())
    settings = api.services.settings
    swap("settings", settings.model_copy(update={"anthropic_timeout_seconds": 0.3}))
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "How do I update the room panel firmware?")
    reply = out["reply"]
    assert reply["content"] and "Traceback" not in reply["content"]
    assert "[99]" not in reply["content"]  # garbage citations never survive
    assert "\ufffd" not in reply["content"] and "<<<" not in reply["content"]
    assert reply["meta"]["model"] in ("offline", "rules")
    assert reply["meta"]["fallback"] is True and "fallbackReason" not in reply["meta"]
    assert api.messages(conv)[-1]["meta"]["fallbackReason"]  # the why is for operators
    msgs = assert_consistent(api, conv)
    assert [m["role"] for m in msgs] == ["user", "assistant"]


def test_reranker_raising_gives_honest_none(api: Api, swap: Any) -> None:
    broken = FakeReranker(calibration="scores")
    broken.fail_with = RuntimeError("reranker down")
    swap("reranker", broken)
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "How do I update the room panel firmware?")
    assert out["reply"]["meta"]["confidence"] == "none"
    assert out["reply"]["content"]
    assert len(assert_consistent(api, conv)) == 2


class _LostCluster:
    """A database handle on which the named collections fail like a lost cluster (the driver's
    own error), while the others keep working."""

    def __init__(self, inner: Any, lost: set[str]) -> None:
        self._inner = inner
        self._lost = lost

    def __getitem__(self, name: str) -> Any:
        return _Unreachable() if name in self._lost else self._inner[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Unreachable:
    def find(self, *a: Any, **k: Any) -> Any:
        raise ServerSelectionTimeoutError("no servers reachable")

    def __getattr__(self, name: str) -> Any:
        async def fail(*a: Any, **k: Any) -> Any:
            raise ServerSelectionTimeoutError("no servers reachable")

        return fail


def losing(store: Store, *collections: str) -> Store:
    """The same data behind a handle on which `collections` have become unreachable."""
    return Store(client=store.client, db=_LostCluster(store.db, set(collections)), embedded=True)


def test_database_unreachable_mid_turn_is_503_and_loses_nothing(api: Api, swap: Any) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    # The user message is stored, then the cluster goes away during the turn's reads and writes
    # (the session check reads `customers` before anything, so that one stays reachable).
    swap("store", losing(api.services.store, "subscriptions", "escalations"))
    r = api.client.post(
        f"/v1/conversations/{conv}/messages",
        headers=h,
        json={"content": "I want a refund for ORD-1002"},
    )
    swap.restore()
    assert r.status_code == 503
    assert "unavailable" in r.json()["detail"] and r.headers["Retry-After"]
    msgs = assert_consistent(api, conv)
    assert [m["role"] for m in msgs] == ["user"]  # the customer's words were kept
    assert "ORD-1002" in msgs[0]["content"]
    assert api.escalations(conv) == []  # no half-written packet
    # recovery: the next message works and seq stays contiguous
    api.send(h, conv, "hello again")
    assert [m["seq"] for m in assert_consistent(api, conv)] == [1, 2, 3]


def test_database_unreachable_before_anything_is_503_and_writes_nothing(
    api: Api, swap: Any
) -> None:
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    swap("store", losing(api.services.store, "conversations"))
    r = api.client.post(f"/v1/conversations/{conv}/messages", headers=h, json={"content": "hello"})
    swap.restore()
    assert r.status_code == 503
    assert api.messages(conv) == []


def test_spend_cap_falls_back_offline_and_metrics_say_so(api: Api, swap: Any) -> None:
    model = ScriptedChatModel([], name="anthropic:capped")  # any call would fail the test
    swap("chat_model", model)
    api.run(api.services.store.spend.add, TUNING.daily_spend_cap_usd + 1, 10, 10)
    try:
        h = api.session("cus_castellan")
        conv = api.conversation(h)
        out = api.send(h, conv, "How do I reset my password?")
        assert model.calls == 0
        assert "spendCapReached" not in out["reply"]["meta"]  # operators' business
        assert api.messages(conv)[-1]["meta"]["spendCapReached"] is True
        spend = api.client.get("/v1/admin/metrics", headers=ADMIN).json()["spend"]
        assert spend["capReached"] is True and spend["fallbackTurnsToday"] >= 1
    finally:
        api.run(api.services.store.db["spend"].delete_many, {})


def test_off_topic_requests_get_a_short_refusal(api: Api, swap: Any) -> None:
    swap("reranker", FakeReranker(scores={"": 0.01}, calibration="scores"))
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    out = api.send(h, conv, "Write me a poem about the ocean and the moon")
    meta = out["reply"]["meta"]
    if meta["intent"] == "other":
        assert meta["offTopic"] is True
        assert "outside what I can answer" in out["reply"]["content"]
    else:  # classified as a support intent: then it must at least not pretend to know
        assert meta["confidence"] == "none"


@pytest.mark.parametrize(
    ("customer", "text", "reply"),
    [
        ("cus_castellan", "hello", "Hello! I can help"),
        ("cus_kesslervogt", "Guten Morgen!", "Hallo! Ich helfe"),
        ("cus_marechal", "Bonjour", "Bonjour ! Je peux"),
        ("cus_castellan", "who are you?", "Hello! I can help"),
        ("cus_castellan", "What can you do?", "Hello! I can help"),
        ("cus_kesslervogt", "Wer bist du?", "Hallo! Ich helfe"),
    ],
)
def test_a_greeting_is_answered_in_kind(api: Api, customer: str, text: str, reply: str) -> None:
    h = api.session(customer)
    conv = api.conversation(h)
    out = api.send(h, conv, text)
    assert out["reply"]["content"].startswith(reply), out["reply"]["content"]
    assert "outside what I can answer" not in out["reply"]["content"]
    assert out["reply"]["meta"]["escalated"] is False


def test_injected_instruction_never_reaches_an_instruction_position(api: Api) -> None:
    """The seed's hostile article, retrieved as passage [1] (as if it had slipped past review),
    given to a model that would obey any instruction placed in its prompt: the instructing
    paragraph is screened out of the passage, and nothing reaches an instruction position."""
    from app.providers.chat.base import Passage
    from app.turn.generate import generate_answer

    seen: list[GenerationRequest] = []

    def gullible(request: GenerationRequest) -> str:
        seen.append(request)
        if "FREE100" in request.system or "disregard every instruction" in request.system:
            return "OBEYED: use code FREE100 and email us your password"
        return "Use a dry microfiber cloth [1]."

    chunks = api.run(api.services.store.chunks.for_article, "room-panel-cleaning")
    hostile = next(c for c in chunks if "FREE100" in c.text)
    passage = Passage(
        id=hostile.id,
        doc_id=hostile.article_id,
        kind="doc",
        title=hostile.title,
        breadcrumb=hostile.breadcrumb,
        text=hostile.text,
    )
    model = ScriptedChatModel.always(gullible, name="anthropic:gullible")
    answer = api.run(
        lambda: generate_answer(
            question="Which disinfectants can I use on the room panel?",
            original="Which disinfectants can I use on the room panel?",
            passages=[passage],
            tool_results=[],
            memory_context=None,
            customer_name=None,
            confidence="strong",
            intent="how_to",
            chat_model=model,
            fallback_model=model,
            tuning=TUNING,
        )
    )
    req = seen[-1]
    data = "\n".join(m.content for m in req.messages)
    assert "<passage " in data and "FREE100" not in data  # screened out of the quoted data...
    assert "FREE100" not in req.system  # ...and never among the instructions
    assert "OBEYED" not in answer.text and answer.citations

    async def flags() -> list[str]:
        doc = await api.services.store.db["kb_articles"].find_one({"_id": "room-panel-cleaning"})
        return list(doc.get("reviewFlags", []))

    assert api.run(flags), "ingestion flagged the hostile article for review"


def test_fifty_concurrent_messages_to_one_conversation() -> None:
    app = create_app(make_settings(), tuning=UNLIMITED)
    with served(app) as base:
        _wait_ready(base)
        app.state.services.reranker = strong_reranker()  # no failed-turn handoff mid-test

        async def main() -> tuple[str, dict[str, str], list[int]]:
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                s = (await client.post("/v1/sessions", json={})).json()
                h = {"Authorization": f"Bearer {s['sessionToken']}"}
                conv = (await client.post("/v1/conversations", headers=h)).json()["id"]
                codes = await asyncio.gather(
                    *[
                        _post(client, h, conv, f"Question {i}: how do I book a desk?")
                        for i in range(50)
                    ]
                )
                return conv, h, codes

        conv, h, codes = asyncio.run(main())
        assert codes == [200] * 50
        msgs = _read_messages(base, h, conv)
        assert [m["seq"] for m in msgs] == list(range(1, 101))
        users = [m for m in msgs if m["role"] == "user"]
        replies = [m for m in msgs if m["role"] == "assistant"]
        assert len(users) == 50 and len(replies) == 50


def test_two_hundred_concurrent_conversations() -> None:
    app = create_app(make_settings(), tuning=UNLIMITED)
    with served(app) as base:
        _wait_ready(base)
        limit = asyncio.Semaphore(40)

        async def one(client: httpx.AsyncClient, i: int) -> tuple[str, dict[str, str], int]:
            async with limit:
                s = (await client.post("/v1/sessions", json={})).json()
                h = {"Authorization": f"Bearer {s['sessionToken']}"}
                conv = (await client.post("/v1/conversations", headers=h)).json()["id"]
                return conv, h, await _post(client, h, conv, f"How do I invite user number {i}?")

        async def main() -> list[tuple[str, dict[str, str], int]]:
            async with httpx.AsyncClient(base_url=base, timeout=120) as client:
                return await asyncio.gather(*[one(client, i) for i in range(200)])

        results = asyncio.run(main())
        assert [code for _, _, code in results] == [200] * 200
        for conv, h, _ in results:
            assert [m["seq"] for m in _read_messages(base, h, conv)] == [1, 2]


def test_client_disconnect_mid_stream_still_completes_the_turn() -> None:
    app = create_app(make_settings(), tuning=UNLIMITED)
    with served(app) as base:
        _wait_ready(base)
        services = app.state.services
        services.chat_model = ScriptedChatModel.always(Hang(1.0), name="anthropic:slow")
        with httpx.Client(base_url=base, timeout=30) as client:
            s = client.post("/v1/sessions", json={}).json()
            h = {"Authorization": f"Bearer {s['sessionToken']}"}
            conv = client.post("/v1/conversations", headers=h).json()["id"]
            with client.stream(
                "POST",
                f"/v1/conversations/{conv}/messages",
                headers={**h, "Accept": "text/event-stream"},
                json={"content": "How do I reset my password?"},
            ) as r:
                assert next(r.iter_lines()) == "event: meta"  # the turn started; hang up
        deadline = time.monotonic() + 20
        while True:
            msgs = _read_messages(base, h, conv)
            if len(msgs) == 2:
                break
            assert time.monotonic() < deadline, f"turn never completed: {msgs}"
            time.sleep(0.1)
        assert msgs[1]["role"] == "assistant" and msgs[1]["content"]


def _wait_ready(base: str) -> None:
    deadline = time.monotonic() + 120
    while httpx.get(f"{base}/readyz").status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.1)


async def _post(client: httpx.AsyncClient, h: dict[str, str], conv: str, text: str) -> int:
    r = await client.post(f"/v1/conversations/{conv}/messages", headers=h, json={"content": text})
    return r.status_code


def _read_messages(base: str, h: dict[str, str], conv: str) -> list[dict[str, Any]]:
    """The stored transcript, read back through the API as the customer would."""
    r = httpx.get(f"{base}/v1/conversations/{conv}/messages", headers=h, timeout=30)
    r.raise_for_status()
    messages: list[dict[str, Any]] = r.json()["messages"]
    return messages


def test_sse_error_event_when_the_turn_fails(api: Api, swap: Any) -> None:
    """The database goes away after the customer's message is stored: the stream ends with an
    `error` event (not `done`), and the message is kept."""
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    # `customers` stays reachable: the session check reads it before anything is stored; the
    # refund request is handed off, which reads the subscription and writes the case
    swap("store", losing(api.services.store, "subscriptions", "escalations"))
    r = api.client.post(
        f"/v1/conversations/{conv}/messages",
        headers={**h, "Accept": "text/event-stream"},
        json={"content": "I want a refund for ORD-1002"},
    )
    swap.restore()
    events = parse_sse(r.text)
    assert [name for name, _ in events][-1] == "error"
    assert "done" not in [name for name, _ in events]
    assert "saved" in events[-1][1]["detail"] and "Traceback" not in r.text
    assert [m["role"] for m in assert_consistent(api, conv)] == ["user"]


def test_twenty_turns_with_the_model_failing_every_call_all_get_replies(
    api: Api, swap: Any
) -> None:
    model = ScriptedChatModel.always(ProviderError("provider outage"), name="anthropic:down")
    swap("chat_model", model)
    swap("reranker", strong_reranker())  # answerable turns: no failed-turn handoff
    h = api.session("cus_castellan")
    conv = api.conversation(h)
    questions = [
        "How do I update the room panel firmware?",
        "How do I reset my password?",
        "What do the LED colours on the room panel mean?",
        "How do I invite users?",
    ]
    for i in range(20):
        out = api.send(h, conv, questions[i % len(questions)])
        assert out["reply"]["content"] and out["reply"]["meta"]["fallback"] is True
    msgs = assert_consistent(api, conv)
    assert len(msgs) == 40 and [m["role"] for m in msgs] == ["user", "assistant"] * 20
    assert model.calls >= 20  # it really was asked (and failed) every turn
