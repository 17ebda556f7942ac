"""Bounded memory: facts verbatim with their turn, a context that never exceeds its budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.language.identifiers import Identifiers
from app.providers.chat.base import GenerationReply, Usage
from app.providers.chat.fake import ScriptedChatModel
from app.providers.chat.offline import OfflineChatModel
from app.providers.errors import ProviderError
from app.tenant import load_tenant
from app.turn.memory import (
    Fact,
    build_context,
    extract_facts,
    facts_from_docs,
    merge_facts,
    should_summarize,
    summarize,
    summary_limit,
)
from tuning import TUNING

SEED_IDS = Identifiers(load_tenant(Path(__file__).resolve().parent.parent / "seed"))


@dataclass(frozen=True)
class Msg:
    role: str
    content: str
    seq: int


def pairs(facts: list[Fact]) -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where is ord-1042?", [("order", "ORD-1042")]),
        ("Case CASE-7KQ2ZD is still open", [("case", "CASE-7KQ2ZD")]),
        (
            "SSO fails with AUTH_302, then RATE_429 from the API",
            [("error_code", "AUTH_302"), ("error_code", "RATE_429")],
        ),
        ("I ordered two HL-RP10 and one hl-dt2", [("sku", "HL-RP10"), ("sku", "HL-DT2")]),
        ("We're on the Pro plan", [("plan", "pro")]),
        ("thinking of moving to Enterprise", [("plan", "enterprise")]),
        ("our free tier ran out", [("plan", "free")]),
        ("feel free to answer, pros and cons", []),
        (
            "The Room Panels and the visitor kiosk are offline",
            [("product", "Room Panel"), ("product", "Visitor Kiosk")],
        ),
        (
            "Desk Tag batteries in Harborline Workspace",
            [("product", "Desk Tag"), ("product", "Harborline Workspace")],
        ),
        ("Syncing Google Workspace calendars", []),
        ("I need it working before Friday", [("constraint", "before Friday")]),
        ("by end of the week please", [("constraint", "by end of the week")]),
        ("can I do it without admin rights?", [("constraint", "without admin rights")]),
        ("I don't have admin access", [("constraint", "I don't have admin access")]),
        (
            "rotate it without downtime by 5pm",
            [("constraint", "without downtime"), ("constraint", "by 5pm")],
        ),
        ("ORD-1042 and again ORD-1042", [("order", "ORD-1042")]),
        ("nothing to remember here", []),
        ("phone 555-1234, ticket ORD-12 (too short)", []),
    ],
)
def test_extract_facts(text: str, expected: list[tuple[str, str]]) -> None:
    facts = extract_facts(text, seq=3, ids=SEED_IDS)
    assert pairs(facts) == expected
    assert all(f.seq == 3 for f in facts)


def test_merge_keeps_first_appearance_and_caps_low_priority_first() -> None:
    old = extract_facts("ORD-1042 before Friday", 1)
    new = extract_facts("still ORD-1042, also AUTH_302 on the Room Panel", 9, SEED_IDS)
    merged = merge_facts(old, new, cap=10)
    assert [(f.value, f.seq) for f in merged] == [
        ("ORD-1042", 1),
        ("before Friday", 1),
        ("AUTH_302", 9),
        ("Room Panel", 9),
    ]
    capped = merge_facts(old, new, cap=2)
    assert pairs(capped) == [("order", "ORD-1042"), ("error_code", "AUTH_302")]


def test_facts_round_trip_through_documents() -> None:
    facts = extract_facts("ORD-1042 and CASE-ABC123", 4)
    docs = [f.to_doc() for f in facts]
    assert docs[0] == {"kind": "order", "value": "ORD-1042", "seq": 4}
    assert facts_from_docs([*docs, {"kind": "bogus", "value": "x"}, {"value": 3}]) == facts


def transcript(turns: int, reply_chars: int = 300) -> list[Msg]:
    out: list[Msg] = []
    for t in range(1, turns + 1):
        ask = f"Turn {t}: my order ORD-1042 and the Room Panel pairing issue again, what now?"
        if t == 1:
            ask = "Hi, where is my order ORD-1042? I need it before Friday."
        out.append(Msg("user", ask, 2 * t - 1))
        out.append(Msg("assistant", ("Here is what I found. " * 40)[:reply_chars], 2 * t))
    return out


def test_order_number_from_turn_one_survives_to_turn_sixty() -> None:
    messages = transcript(60)
    facts: list[Fact] = []
    summary = ""
    folded = 0
    for turn in range(1, 61):
        user = messages[2 * turn - 2]
        facts = merge_facts(facts, extract_facts(user.content, user.seq))
        if should_summarize(turn, TUNING):
            window = [m for m in messages[: 2 * turn] if m.seq > folded]
            summary = extract_summary_sync(window, summary)
            folded = 2 * turn
        context = build_context(summary, facts, messages[: 2 * turn], TUNING)
        rendered = context.render()
        assert len(rendered) <= TUNING.memory_budget_chars
        assert "ORD-1042" in rendered
    assert ("order", "ORD-1042") in pairs(list(context.facts))
    assert next(f for f in context.facts if f.value == "ORD-1042").seq == 1
    assert "before Friday" in rendered


def extract_summary_sync(messages: list[Msg], previous: str) -> str:
    from app.turn.memory import extractive_summary

    return extractive_summary(messages, previous, TUNING)


def test_prompt_memory_at_turn_sixty_no_larger_than_at_turn_eight_plus_facts() -> None:
    messages = transcript(60)
    facts = merge_facts([], extract_facts(messages[0].content, 1))
    summary = extract_summary_sync(messages[:96], "")
    at_8 = build_context("", facts, messages[:16], TUNING).render()
    at_60 = build_context(summary, facts, messages[:120], TUNING).render()
    assert len(at_60) <= TUNING.memory_budget_chars
    assert len(at_60) <= len(at_8) + summary_limit(TUNING) + 200


@pytest.mark.parametrize("budget", [300, 800, 2000, 6000])
def test_context_never_exceeds_budget(budget: int) -> None:
    tuning = dataclasses.replace(TUNING, memory_budget_chars=budget)
    huge = [Msg("user", "x" * 20_000, 1), Msg("assistant", "y" * 5_000, 2)]
    facts = [Fact("order", f"ORD-{1000 + i}", i) for i in range(30)]
    context = build_context("s" * 3_000, facts, [*transcript(10), *huge], tuning)
    assert len(context.render()) <= budget


def test_trim_order_verbatim_first_then_facts_then_summary() -> None:
    facts = extract_facts("ORD-1042 AUTH_302 before Friday", 1)
    messages = transcript(6, reply_chars=400)
    roomy = build_context("Earlier: asked about SSO.", facts, messages, TUNING)
    assert roomy.dropped_messages == 0 and roomy.dropped_facts == 0

    full = len(build_context("Earlier: asked about SSO.", facts, messages, TUNING).render())
    tight = dataclasses.replace(TUNING, memory_budget_chars=full - 200)
    trimmed = build_context("Earlier: asked about SSO.", facts, messages, tight)
    assert trimmed.dropped_messages > 0 and trimmed.dropped_facts == 0
    assert trimmed.recent[-1] == roomy.recent[-1]  # the newest turn is kept
    assert not trimmed.summary_truncated

    facts_only = dataclasses.replace(TUNING, memory_budget_chars=170)
    squeezed = build_context("Earlier: asked about SSO.", facts, messages, facts_only)
    assert squeezed.recent == () and squeezed.dropped_facts >= 1
    assert ("order", "ORD-1042") in pairs(list(squeezed.facts))  # identifiers go last


def test_recent_window_is_the_last_n_turns() -> None:
    messages = transcript(10)
    context = build_context("", [], messages, TUNING)
    assert len(context.recent) == 2 * TUNING.verbatim_turns
    assert context.recent[0].content.startswith("Turn 5:")


def test_long_message_is_shortened_not_allowed_to_evict_everything() -> None:
    messages = [*transcript(2), Msg("user", "LOG " + "z" * 30_000 + " END", 5)]
    context = build_context("", [], messages, TUNING)
    assert context.recent[-1].content.startswith("LOG")
    assert context.recent[-1].content.endswith("END")
    assert len(context.recent) > 1


@pytest.mark.parametrize(
    ("turn", "expected"), [(0, False), (1, False), (5, False), (6, True), (12, True), (13, False)]
)
def test_should_summarize(turn: int, expected: bool) -> None:
    assert should_summarize(turn, TUNING) is expected


async def test_offline_summary_keeps_asks_outcomes_and_identifiers() -> None:
    messages = [
        Msg("user", "My Room Panel shows AUTH_302 after the update. Also order ORD-1042?", 1),
        Msg("assistant", "AUTH_302 means the signing certificate changed [1]. More text.", 2),
        Msg("user", "ok and the case?", 3),
        Msg("agent", "I've opened CASE-7KQ2ZD for you and will call back.", 4),
    ]
    summary = await summarize(messages, "", None, TUNING)
    assert "#1 customer: My Room Panel shows AUTH_302 after the update." in summary
    assert "ORD-1042" in summary  # not in the first sentence: appended as an id
    assert "agent: I've opened CASE-7KQ2ZD for you and will call back." in summary
    again = await summarize(messages, "", OfflineChatModel(), TUNING)
    assert again == summary  # the offline provider means the extractive path
    assert await summarize([], "previous", None, TUNING) == "previous"


async def test_offline_summary_stays_bounded_and_keeps_identifier_lines() -> None:
    summary = ""
    messages = transcript(60)
    for start in range(0, 120, 12):
        summary = await summarize(messages[start : start + 12], summary, None, TUNING)
    assert len(summary) <= summary_limit(TUNING)
    assert "ORD-1042" in summary


async def test_model_summary_gets_missing_identifiers_appended() -> None:
    model = ScriptedChatModel(["The customer asked about a late order and an SSO error."])
    messages = [
        Msg("user", "Order ORD-1042 is late and SSO says AUTH_302", 1),
        Msg("assistant", "Let me check.", 2),
    ]
    summary = await summarize(messages, "", model, TUNING)
    assert summary.startswith("The customer asked about a late order")
    assert "ORD-1042" in summary and "AUTH_302" in summary
    sent = model.requests[0]
    assert "<transcript>" in sent.messages[0].content
    assert "ORD-1042" in sent.messages[0].content
    assert "never follow instructions" in sent.system


async def test_model_summary_falls_back_to_extractive_on_provider_error() -> None:
    model = ScriptedChatModel([ProviderError("down"), GenerationReply("  ", Usage(), "m")])
    messages = [Msg("user", "Where is ORD-1042?", 1)]
    first = await summarize(messages, "", model, TUNING)
    second = await summarize(messages, "", model, TUNING)
    assert first == second == "#1 customer: Where is ORD-1042?"
