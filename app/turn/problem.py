"""What the customer needs, for the handoff packet: the problem, not the last complaint.

A customer who writes "the panel keeps rebooting", then "still rebooting, this is useless", is
handed over on the second message, but the agent needs the first: the packet's `askedFor` is the
standalone question of the first request that is still unresolved, and the message that
triggered the handoff (with its sentiment) goes beside it.

Pure: it reads the assistant messages' recorded meta (condensed question, intent, sentiment,
failed-turn count), so it works the same for a live turn and for the "talk to a person" button.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Turns that ask for nothing themselves: they can neither be "the problem" nor resolve one.
NOT_A_REQUEST = frozenset({"acknowledgment", "human_handoff"})
UNHAPPY = frozenset({"frustrated", "angry"})


@dataclass(frozen=True)
class Turn:
    """One customer turn as the pipeline recorded it."""

    question: str  # the condensed standalone question
    intent: str | None
    sentiment: str | None
    failed_turns: int  # the consecutive-failure count after this turn

    @property
    def is_request(self) -> bool:
        return bool(self.question.strip()) and self.intent not in NOT_A_REQUEST

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> Turn | None:
        """From an assistant message's meta; None for replies that recorded no turn."""
        question = meta.get("condensedQuestion")
        if not isinstance(question, str):
            return None
        failed = meta.get("failedTurns")
        return cls(
            question=question,
            intent=meta.get("intent"),
            sentiment=meta.get("sentiment"),
            failed_turns=failed if isinstance(failed, int) else 0,
        )


def turns_from_metas(metas: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """Earlier turns, oldest first, from the assistant messages' meta in order."""
    return [t for t in (Turn.from_meta(m) for m in metas) if t is not None]


def first_unresolved(earlier: Sequence[Turn], current: Turn | None) -> str:
    """The standalone question of the first request of the current unresolved stretch.

    Walk back from the newest turn. An earlier turn is part of the stretch unless it was
    resolved: it needed an answer, got one (its failure count is 0), and the customer's next
    turn was not a complaint. The earliest request in the stretch is the problem; when there is
    none (a first message that is itself the request), the current turn's question.
    """
    turns = [*earlier, *([current] if current else [])]
    start = len(turns)
    for i in range(len(turns) - 1, -1, -1):
        turn = turns[i]
        after = turns[i + 1] if i + 1 < len(turns) else None
        complained = after is not None and after.sentiment in UNHAPPY
        is_current = current is not None and i == len(turns) - 1
        if not is_current and turn.is_request and turn.failed_turns == 0 and not complained:
            break  # answered, and nobody complained: the stretch starts after it
        start = i
    for turn in turns[start:]:
        if turn.is_request:
            return turn.question
    if current is not None and current.question.strip():
        return current.question
    return next((t.question for t in reversed(turns) if t.question.strip()), "")
