"""Stop reasons (issue item 4): a refusal is never shown as an answer and fails the turn; a
`max_tokens` cut is trimmed to whole sentences with its citations checked again."""

from __future__ import annotations

from typing import Any

import pytest

from app.providers.chat.base import GenerationReply, Usage
from app.providers.chat.fake import ScriptedChatModel
from app.providers.chat.offline import OfflineChatModel
from app.turn.generate import Answer, generate_answer, stream_answer, trim_to_sentence
from tests.fakes_chat import AUTH_302, WEBHOOKS
from tuning import TUNING

CUT = (
    "AUTH_302 means the SAML signature did not verify [1]. Upload the new certificate [1][2]. "
    "Then sign in ag"
)


def reply(text: str, stop: str) -> GenerationReply:
    return GenerationReply(text, Usage(input=100, output=700, calls=1), "anthropic:test", (), stop)


def kwargs(model: ScriptedChatModel) -> dict[str, Any]:
    return {
        "question": "What does AUTH_302 mean?",
        "original": "What does AUTH_302 mean?",
        "passages": [AUTH_302, WEBHOOKS],
        "tool_results": [],
        "memory_context": None,
        "customer_name": None,
        "confidence": "strong",
        "intent": "troubleshooting",
        "chat_model": model,
        "fallback_model": OfflineChatModel(),
        "tuning": TUNING,
    }


async def run(streaming: bool, item: Any) -> Answer:
    model = ScriptedChatModel([item], name="anthropic:test")
    if not streaming:
        return await generate_answer(**kwargs(model))
    items = [i async for i in stream_answer(**kwargs(model))]
    assert isinstance(items[-1], Answer)
    return items[-1]


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_refusal_becomes_the_safe_reply(streaming: bool) -> None:
    answer = await run(streaming, reply("I won't help with that [1].", "refusal"))
    assert answer.kind == "refused" and answer.stop_reason == "refusal"
    assert "won't help" not in answer.text and answer.citations == ()
    assert answer.fallback_reason == "refusal"
    assert answer.usage.output == 700  # the refused call is still billed


@pytest.mark.parametrize("streaming", [False, True])
async def test_max_tokens_is_trimmed_to_whole_sentences_and_citations_rechecked(
    streaming: bool,
) -> None:
    answer = await run(streaming, reply(CUT + " [2", "max_tokens"))
    assert answer.text == (
        "AUTH_302 means the SAML signature did not verify [1]. Upload the new certificate [1][2]."
    )
    assert [c["n"] for c in answer.citations] == [1, 2]
    assert answer.kind == "answer" and answer.stop_reason == "max_tokens"


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_cut_with_no_whole_sentence_falls_back(streaming: bool) -> None:
    answer = await run(streaming, reply("AUTH_302 means the SAML sig", "max_tokens"))
    assert answer.model == "offline" and answer.fallback_reason
    assert "max_tokens" in answer.fallback_reason


@pytest.mark.parametrize(
    ("text", "trimmed"),
    [
        ("One. Two [1]. Thr", "One. Two [1]."),
        ("Version 2.5 is out. Upgr", "Version 2.5 is out."),
        ("No end at all", ""),
        ("Done!", "Done!"),
    ],
)
def test_trim_to_sentence(text: str, trimmed: str) -> None:
    assert trim_to_sentence(text) == trimmed
