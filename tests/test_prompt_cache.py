"""Prompt caching that caches (issue 17, item 2): the stable prefix — fixed instructions, tool
definitions and the tenant reference built from the tenant file — reaches the default model's
minimum cacheable length, a breakpoint is sent only when it does, and two different turns share
the prefix byte for byte, so the second one reads the cache.

Token counts come from the fake's `count_tokens` endpoint (same request and response shape as
Anthropic's; 3.5 characters a token, see tests/fake_anthropic.py) and from the adapter's own
estimate (4 characters a token, deliberately low)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.providers.chat.models import capabilities_for, estimate_tokens
from app.providers.rerank.fake import FakeReranker
from app.services import probe_providers
from app.tenant import Tenant, load_tenant
from app.turn.condense import CONDENSE_SCHEMA
from app.turn.condense import SYSTEM_PROMPT as CONDENSE_PROMPT
from app.turn.prompt import SYSTEM_PROMPT, build_request
from app.turn.reference import tenant_reference, with_reference
from app.turn.tools import TOOL_SPECS
from tests.apihelp import ADMIN, Api, running_app
from tests.fake_anthropic import CACHE_MINIMUM, MODEL, MessagesAPI, message, sse, text_block
from tests.fake_anthropic import tool_use as tool_use_block
from tests.fakes_chat import RecordingTools
from tuning import TUNING

SEED = Path(__file__).resolve().parents[1] / "seed"


def seed_tenant() -> Tenant:
    return load_tenant(SEED)


def answer_system(tenant: Tenant) -> str:
    return with_reference(SYSTEM_PROMPT, tenant_reference(tenant, TUNING))


def condense_system(tenant: Tenant) -> str:
    return with_reference(CONDENSE_PROMPT, tenant_reference(tenant, TUNING))


def request_for(tenant: Tenant, question: str, *, signed_in: bool) -> Any:
    runner = RecordingTools({}) if signed_in else None
    return build_request(
        question=question,
        tools=TOOL_SPECS,
        tool_runner=runner,
        reference=tenant_reference(tenant, TUNING),
    )


# --------------------------------------------------------------------------- the prefix itself


def test_the_model_minimums_are_the_documented_ones() -> None:
    """app/providers/chat/models.py records its source; the fake uses the same numbers."""
    for model, minimum in CACHE_MINIMUM.items():
        assert capabilities_for(model).cache_min_tokens == minimum, model
    assert capabilities_for("claude-opus-4-7").cache_min_tokens == 2048
    assert capabilities_for("claude-opus-5").cache_min_tokens == 512


def test_the_reference_is_built_from_the_tenant_file() -> None:
    tenant = seed_tenant()
    reference = tenant_reference(tenant, TUNING)
    for product in tenant.products:  # every product by name, with what it is
        assert product.name in reference
        if product.name in tenant.reference.products:
            assert tenant.reference.products[product.name].split()[0] in reference
    for plan in tenant.plans:
        assert f"- {plan}: reads articles for {', '.join(TUNING.audience_ladder[plan])}" in (
            reference
        )
        assert f"within {TUNING.sla_hours[plan]} hours" in reference
    for intent in tenant.escalate_intents:
        assert f"- {intent}:" in reference
    for fmt in tenant.identifiers.values():
        if fmt.example:
            assert fmt.example in reference
    for fact in tenant.reference.facts:
        assert " ".join(fact.split()) in " ".join(reference.split())
    # deterministic: the same text on every call (anything else could never be cached)
    assert tenant_reference(seed_tenant(), TUNING) == reference


def test_a_reference_naming_an_unknown_product_is_a_start_up_error(tmp_path: Path) -> None:
    path = tmp_path / "tenant.yaml"
    path.write_text("name: T\nproducts: [{name: Widget}]\nreference: {products: {Gadget: x}}\n")
    with pytest.raises(ValueError, match="Gadget"):
        load_tenant(path)


async def test_every_stable_prefix_reaches_the_default_models_minimum() -> None:
    """The answer prefix (anonymous: system only; signed in: tools + system) and the condense
    prefix (JSON tool + system), counted by the token-counting endpoint, all reach Sonnet 4.6's
    2,048. The instructions alone (the old prefix) do not — that is why nothing was cached."""
    tenant = seed_tenant()
    api = MessagesAPI()
    model = api.model()
    minimum = model.capabilities.cache_min_tokens
    assert minimum == 2048
    assert await model.measure_prefix(SYSTEM_PROMPT, TOOL_SPECS) < minimum  # before this change
    measured = {
        "anonymous": await model.measure_prefix(answer_system(tenant), ()),
        "signedIn": await model.measure_prefix(answer_system(tenant), TOOL_SPECS),
        "condense": await model.measure_json_prefix(condense_system(tenant), CONDENSE_SCHEMA),
    }
    assert min(measured.values()) >= minimum, measured
    # the request the endpoint saw has the count_tokens shape: model, system, tools, messages
    body = api.counted[2]  # the signed-in answer prefix
    assert set(body) == {"model", "system", "tools", "messages"}
    assert body["system"][0]["text"] == answer_system(tenant)
    # even without the start-up measurement the adapter's low estimate clears the minimum, so
    # the breakpoint is sent from the first call on
    assert estimate_tokens(len(answer_system(tenant))) >= minimum


@pytest.mark.parametrize(
    ("model_name", "with_reference_block", "cached"),
    [
        ("claude-sonnet-4-6", True, True),  # the default: caches with the tenant reference
        ("claude-sonnet-4-6", False, False),  # a tenant file without one: below the minimum
        ("claude-sonnet-5", False, True),  # a 1,024-token model caches even the bare prefix
        ("claude-haiku-4-5", True, False),  # 4,096: below it, so nothing is marked or claimed
    ],
)
async def test_a_breakpoint_is_sent_only_when_the_prefix_meets_the_minimum(
    model_name: str, with_reference_block: bool, cached: bool
) -> None:
    tenant = seed_tenant() if with_reference_block else load_tenant(None)
    api = MessagesAPI().add(message(text_block("one")), message(text_block("two")))
    model = api.model(model=model_name)
    system = answer_system(tenant)
    if not with_reference_block:
        system = SYSTEM_PROMPT  # bare instructions
    measured = await model.measure_prefix(system, TOOL_SPECS)
    assert (measured >= model.capabilities.cache_min_tokens) is cached
    reference = tenant_reference(tenant, TUNING) if with_reference_block else ""
    replies = []
    for question in ("How do I pair a desk tag?", "Where is my order?"):
        request = build_request(
            question=question,
            tools=TOOL_SPECS,
            tool_runner=RecordingTools({}),
            reference=reference,
        )
        replies.append(await model.generate(request))
    for body in api.bodies:
        assert ("cache_control" in body["system"][-1]) is cached
    first, second = replies
    if cached:
        assert first.usage.cache_write == measured - 1  # the count includes a 1-token message
        assert second.usage.cache_read == first.usage.cache_write and second.usage.cache_write == 0
        assert first.usage.cache_eligible_calls == second.usage.cache_eligible_calls == 1
    else:
        for reply in replies:
            assert reply.usage.cache_read == reply.usage.cache_write == 0
            assert reply.usage.cache_eligible_calls == 0


async def test_a_per_turn_value_in_the_prefix_means_no_cache_reads() -> None:
    """The fake is strict enough to catch a leak: the same prefix with one per-turn value in it
    (here the question) writes the cache on every call and never reads it."""
    tenant = seed_tenant()
    api = MessagesAPI().add(message(text_block("one")), message(text_block("two")))
    model = api.model()
    replies = []
    for question in ("How do I pair a desk tag?", "How do I mount a room panel?"):
        leaky = build_request(
            question=question,
            reference=tenant_reference(tenant, TUNING) + f"Today's question: {question}\n",
        )
        replies.append(await model.generate(leaky))
    assert all("cache_control" in body["system"][-1] for body in api.bodies)
    assert [r.usage.cache_read for r in replies] == [0, 0]
    assert all(r.usage.cache_write > 0 for r in replies)


# --------------------------------------------------------------------------- whole turns


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    with running_app() as api:
        yield api


def _condensation(question: str) -> dict[str, Any]:
    return {
        "standaloneQuestion": question,
        "intent": "how_to",
        "needsRetrieval": True,
        "needsTools": [],
        "sentiment": "neutral",
        "mentionedOrderId": None,
        "explicitHumanRequest": False,
    }


def test_two_different_turns_read_the_cached_prefix(api: Api) -> None:
    """Two customers, two questions, the real pipeline: the second turn's condense call and its
    answer both read the cache the first turn wrote. Anything per-turn or per-customer in the
    prefix (a name, a date, the locale, the question) would make both reads 0."""
    assert api.services.tenant.name == "Harborline"
    fake = MessagesAPI()
    questions = ("How do I update the room panel firmware?", "How do I pair a desk tag?")
    for question in questions:
        fake.add(
            message(
                tool_use_block("record_output", _condensation(question)), stop_reason="tool_use"
            ),
            sse("Open the Admin Console and follow the steps [1]."),
        )
    original = (api.services.chat_model, api.services.reranker)
    api.services.chat_model = fake.model()
    api.services.reranker = FakeReranker(scores={"": 0.9}, calibration="offline")
    try:
        api.run(probe_providers, api.services)
        ready = api.client.get("/readyz").json()["providers"]["chat"]
        replies = []
        for customer, question in zip(("cus_castellan", "cus_brightwater"), questions, strict=True):
            h = api.session(customer)
            conv = api.conversation(h)
            replies.append(api.send(h, conv, question)["reply"]["meta"])
        metrics = api.client.get("/v1/admin/metrics", headers=ADMIN).json()
    finally:
        api.services.chat_model, api.services.reranker = original
    assert ready["prefixCacheable"] == {"anonymous": True, "signedIn": True, "condense": True}
    assert len(fake.bodies) == 4  # condense + answer, twice
    condense_bodies, answer_bodies = fake.bodies[0::2], fake.bodies[1::2]
    for pair in (condense_bodies, answer_bodies):
        assert all(b["system"][-1].get("cache_control") == {"type": "ephemeral"} for b in pair)
        first, second = pair
        assert json.dumps(first["system"]) == json.dumps(second["system"])
        assert json.dumps(first.get("tools")) == json.dumps(second.get("tools"))
        assert first["messages"] != second["messages"]  # the per-turn part differs
    first, second = (meta["tokens"] for meta in replies)
    assert first["cacheWrite"] > 0 and first["cacheRead"] == 0
    assert second["cacheRead"] == first["cacheWrite"] and second["cacheWrite"] == 0
    cache = metrics["spend"]["cache"]
    assert cache["readInputTokens"] >= 2 * CACHE_MINIMUM[MODEL] and cache["alert"] is None
    assert cache["eligibleCalls"] >= 4


def test_the_prefix_size_script_reports_the_seed_prefixes_as_cacheable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from scripts import prefix_size

    monkeypatch.setattr("sys.argv", ["prefix_size", "--tenant", str(SEED)])
    prefix_size.main()
    rows = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("answer", "condense"))
    ]
    assert len(rows) == 3 and all(row.endswith("yes") for row in rows), rows
    monkeypatch.setattr(
        "sys.argv", ["prefix_size", "--tenant", str(SEED), "--model", "claude-haiku-4-5"]
    )
    prefix_size.main()
    rows = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("answer", "condense"))
    ]
    assert not any(row.endswith("yes") for row in rows), rows  # 4,096 is out of reach
