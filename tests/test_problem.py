"""The handoff packet names the customer's problem: the first unresolved request."""

from __future__ import annotations

import pytest

from app.turn.problem import Turn, first_unresolved, turns_from_metas


def t(question: str, failed: int, intent: str = "troubleshooting", sentiment: str = "neutral"):  # type: ignore[no-untyped-def]
    return Turn(question=question, intent=intent, sentiment=sentiment, failed_turns=failed)


@pytest.mark.parametrize(
    ("earlier", "current", "expected"),
    [
        # the complaint that triggers the handoff is not the problem
        (
            [t("the panel keeps rebooting", 1)],
            t("still rebooting, this is useless", 2, sentiment="frustrated"),
            "the panel keeps rebooting",
        ),
        # even when the first answer looked strong: the complaint says it did not resolve it
        (
            [t("the panel keeps rebooting", 0)],
            t("still rebooting", 1, sentiment="angry"),
            "the panel keeps rebooting",
        ),
        # a request answered and thanked for is resolved: the stretch starts after it
        (
            [
                t("how do I reset my password", 0, intent="how_to"),
                t("thanks", 0, intent="acknowledgment", sentiment="positive"),
                t("the desk tag will not pair", 1),
            ],
            t("I want a person", 1, intent="human_handoff"),
            "the desk tag will not pair",
        ),
        # a first message that is itself the request
        (
            [],
            t("I want a refund for ORD-1042", 0, intent="refund_request"),
            "I want a refund for ORD-1042",
        ),
        # an earlier success not complained about is not dragged in
        (
            [t("how do I export a report", 0, intent="how_to")],
            t("my invoice is wrong", 0, intent="billing_dispute"),
            "my invoice is wrong",
        ),
        # the earliest of several failed requests in a row
        (
            [t("sso fails with AUTH_302", 1), t("what does AUTH_302 mean", 2)],
            t("nothing works", 3, sentiment="frustrated"),
            "sso fails with AUTH_302",
        ),
    ],
)
def test_first_unresolved(earlier: list[Turn], current: Turn, expected: str) -> None:
    assert first_unresolved(earlier, current) == expected


def test_the_button_uses_the_recorded_turns() -> None:
    metas = [
        {
            "condensedQuestion": "the panel keeps rebooting",
            "intent": "troubleshooting",
            "sentiment": "neutral",
            "failedTurns": 1,
        },
        {"escalated": True, "via": "button"},  # a reply that recorded no turn is skipped
    ]
    assert first_unresolved(turns_from_metas(metas), None) == "the panel keeps rebooting"
    assert first_unresolved([], None) == ""
