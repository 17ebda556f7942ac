"""Section 4: bytes written per turn at turn 5 vs turn 200, measured, against an array layout.

**Measured** (`turn_writes`): the same synthetic conversation (turns 5 and 200 carry identical
content, see `conversation`) through the real engine on the durable embedded store; the store
writes each changed document through to SQLite as whole BSON, so its byte counter is the
"document bytes rewritten" per turn, by collection. This is what the flat-cost goal is judged on.

**Array layout (modelled, for contrast)**: the whole transcript as an array in the conversation
document, two updates a turn (`$push` the user message with `$inc lastSeq`, then `$push` the
reply): a document store rewrites the whole, growing document on each update. "wire bytes" =
BSON of each update's filter + spec; "document bytes rewritten" = the whole document after each
update. WiredTiger stores a new version of a document on update (its journal may log a small
update as a delta), so the array figure is an upper bound on disk and exact for the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson

from app.store.models import Message
from scripts.benchmarks import turn_writes
from scripts.benchmarks.common import fmt_ratio, heading, ratio, table
from scripts.benchmarks.conversation import ConversationSim, TurnWrites, kind_of
from tuning import TUNING, Tuning

MAX_BSON = 16 * 1024 * 1024


def size(doc: Mapping[str, Any]) -> int:
    return len(bson.encode(doc))


def _embedded(m: Message) -> dict[str, Any]:
    """A message as an array element: no `conversationId` (the parent says it), no TTL field."""
    doc = m.to_doc()
    doc.pop("conversationId", None)
    doc.pop("expiresAt", None)
    return doc


class ArrayLayout:
    """The conversation document with the transcript embedded, kept in step with the sim."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def document(self, conversation: dict[str, Any]) -> dict[str, Any]:
        return {**conversation, "messages": self.messages}


def _op(kind: str, wire: int, stored: int) -> dict[str, Any]:
    return {"op": kind, "wire_bytes": wire, "stored_bytes": stored}


def array_turn(sim: ConversationSim, w: TurnWrites, layout: ArrayLayout) -> list[dict[str, Any]]:
    conv = sim.conversation.to_doc()
    cid = {"_id": conv["_id"]}
    user, reply = _embedded(w.user), _embedded(w.reply)
    first = {
        "$push": {"messages": user},
        "$inc": {"lastSeq": 1},
        "$set": {"updatedAt": w.user.created_at},
    }
    layout.messages.append(user)
    after_first = size(layout.document(conv))
    second_set: dict[str, Any] = {
        "failedTurns": 0,
        "lastIntent": kind_of(w.number).intent,
        "updatedAt": w.reply.created_at,
    }
    if w.new_facts:
        second_set["facts"] = conv["facts"]
    second = {
        "$push": {"messages": reply},
        "$inc": {"lastSeq": 1, "turnCount": 1},
        "$set": second_set,
    }
    layout.messages.append(reply)
    after_second = size(layout.document(conv))
    return [
        _op("update conversations ($push user)", size(cid) + size(first), after_first),
        _op("update conversations ($push reply)", size(cid) + size(second), after_second),
    ]


def _totals(ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "operations": len(ops),
        "wire_bytes": sum(o["wire_bytes"] for o in ops),
        "stored_bytes": sum(o["stored_bytes"] for o in ops),
        "detail": ops,
    }


async def run(turns: tuple[int, int] = (5, 200), tuning: Tuning = TUNING) -> dict[str, Any]:
    early, late = turns
    measured_raw = await turn_writes.measure(turns, tuning)
    measured = {f"turn_{n}": measured_raw["turns"][n] for n in turns}
    for n in turns:
        measured[f"turn_{n}"]["conversation_doc_bytes"] = measured_raw["conversation_documents"][
            n
        ].get("conversations", 0)
    sim = ConversationSim(tuning=tuning)
    layout = ArrayLayout()
    array: dict[int, dict[str, Any]] = {}
    doc_sizes: dict[int, int] = {}
    for _ in range(late):
        w = sim.advance()
        arr = array_turn(sim, w, layout)
        doc_sizes[w.number] = size(layout.document(sim.conversation.to_doc()))
        if w.number in turns:
            array[w.number] = {**_totals(arr), "conversation_doc_bytes": doc_sizes[w.number]}
    window = min(15, late - 1)  # one whole cycle of turn kinds
    growth_per_turn = (doc_sizes[late] - doc_sizes[late - window]) / window
    turns_to_limit = late + (MAX_BSON - doc_sizes[late]) / growth_per_turn
    a, b = measured[f"turn_{early}"], measured[f"turn_{late}"]
    ratios = {
        f"ours_bytes_{late}/{early}": ratio(b["bytes"], a["bytes"]),
        f"array_stored_{late}/{early}": ratio(
            array[late]["stored_bytes"], array[early]["stored_bytes"]
        ),
        f"array/ours_at_{early}": ratio(array[early]["stored_bytes"], a["bytes"]),
        f"array/ours_at_{late}": ratio(array[late]["stored_bytes"], b["bytes"]),
    }
    return {
        "method": (
            "ours: real turns through run_turn on the durable embedded store, bytes = BSON of "
            "every document written through to SQLite during the turn (background summary "
            "included); array: modelled, whole conversation document after each update"
        ),
        "measured": measured,
        "unanswered_turns": measured_raw["unanswered_turns"],
        "array_model": {f"turn_{n}": array[n] for n in turns},
        "array_document_growth_bytes_per_turn": round(growth_per_turn, 1),
        "array_turns_until_16MiB_extrapolated": int(turns_to_limit),
        "ratios": ratios,
    }


def render(result: dict[str, Any]) -> list[str]:
    turns = sorted(int(t.split("_")[1]) for t in result["measured"])
    early, late = turns
    lines = heading(4, f"Bytes written per turn at turn {early} vs turn {late} (measured)")
    rows = []
    for n in turns:
        m = result["measured"][f"turn_{n}"]
        by = ", ".join(f"{k} {v:,}" for k, v in m["by_collection"].items())
        rows.append([f"turn {n} ours", m["documents"], m["bytes"], m["conversation_doc_bytes"], by])
    for n in turns:
        arr = result["array_model"][f"turn_{n}"]
        rows.append(
            [
                f"turn {n} array (model)",
                arr["operations"],
                arr["stored_bytes"],
                arr["conversation_doc_bytes"],
                "",
            ]
        )
    lines += table(
        ["layout", "docs written", "bytes written", "conversation doc", "by collection"], rows
    )
    r = result["ratios"]
    lines.append(
        f"  ratios: ours {late}/{early} {fmt_ratio(r[f'ours_bytes_{late}/{early}'])}; array "
        f"{late}/{early} {fmt_ratio(r[f'array_stored_{late}/{early}'])}; array/ours at {late} "
        f"{fmt_ratio(r[f'array/ours_at_{late}'])}"
    )
    lines.append(
        f"  array document grows {result['array_document_growth_bytes_per_turn']:,.0f} B/turn; "
        f"at that rate it passes the 16 MiB BSON limit near turn "
        f"{result['array_turns_until_16MiB_extrapolated']:,} (extrapolated, not run)"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    import asyncio

    print("\n".join(render(asyncio.run(run()))))
