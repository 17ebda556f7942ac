"""Section 4: bytes written per turn at turn 5 vs turn 200, two storage layouts.

The same synthetic conversation (turns 5 and 200 have identical content, see `conversation`),
measured with `bson.encode` of what each layout sends and what the server must store:

- **ours** (what `engine.run_turn` does): insert the user message, insert the reply (one
  document each in `messages`), and update the conversation: `allocate_seq` twice (`$inc
  lastSeq`), `record_turn` (`$inc turnCount`, `$set` counters), and `$set facts` when the
  message named a new identifier.
- **array**: the whole transcript as an array in the conversation document. The user message is
  still stored first (DESIGN 4.2), so two updates a turn: `$push` the user message with `$inc
  lastSeq`, then `$push` the reply with the same counter/facts changes as ours.

"wire bytes" = BSON of each insert's document and of each update's filter + update spec (the
OP_MSG envelope, command name and write concern add a constant few dozen bytes per operation and
are left out). "document bytes rewritten" = the BSON size of every document version the server
has to store: each inserted message, and the whole conversation document after each update.
WiredTiger stores a new version of the whole document on update; its journal may log a small
update as a delta, so the on-disk effect of the array layout is bounded above by this figure,
while the cache/checkpoint write of a modified document is the whole document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson

from app.store.models import Message
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


def ours_turn(sim: ConversationSim, w: TurnWrites) -> list[dict[str, Any]]:
    conv = sim.conversation.to_doc()
    cid = {"_id": conv["_id"]}
    ops = []
    seq_update = {"$inc": {"lastSeq": 1}, "$set": {"updatedAt": w.user.created_at}}
    # conversation sizes after each update barely differ from the final one (a counter's value)
    ops.append(_op("update conversations (allocate_seq)", size(cid) + size(seq_update), size(conv)))
    ops.append(_op("insert messages (user)", size(w.user.to_doc()), size(w.user.to_doc())))
    ops.append(_op("update conversations (allocate_seq)", size(cid) + size(seq_update), size(conv)))
    ops.append(_op("insert messages (reply)", size(w.reply.to_doc()), size(w.reply.to_doc())))
    record = {
        "$inc": {"turnCount": 1},
        "$set": {
            "failedTurns": 0,
            "lastIntent": kind_of(w.number).intent,
            "updatedAt": w.reply.created_at,
        },
    }
    ops.append(_op("update conversations (record_turn)", size(cid) + size(record), size(conv)))
    if w.new_facts:
        facts = {"$set": {"facts": conv["facts"], "updatedAt": w.reply.created_at}}
        ops.append(_op("update conversations (facts)", size(cid) + size(facts), size(conv)))
    return ops


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


def run(turns: tuple[int, int] = (5, 200), tuning: Tuning = TUNING) -> dict[str, Any]:
    early, late = turns
    sim = ConversationSim(tuning=tuning)
    layout = ArrayLayout()
    measured: dict[int, dict[str, Any]] = {}
    doc_sizes: dict[int, int] = {}
    for _ in range(late):
        w = sim.advance()
        ours = ours_turn(sim, w)
        arr = array_turn(sim, w, layout)
        doc_sizes[w.number] = size(layout.document(sim.conversation.to_doc()))
        if w.number in turns:
            measured[w.number] = {
                "ours": _totals(ours),
                "array": _totals(arr),
                "conversation_doc_bytes_ours": size(sim.conversation.to_doc()),
                "conversation_doc_bytes_array": doc_sizes[w.number],
            }
    a, b = measured[early], measured[late]
    window = min(15, late - 1)  # one whole cycle of turn kinds
    growth_per_turn = (doc_sizes[late] - doc_sizes[late - window]) / window
    turns_to_limit = late + (MAX_BSON - doc_sizes[late]) / growth_per_turn
    ratios = {
        f"ours_wire_{late}/{early}": ratio(b["ours"]["wire_bytes"], a["ours"]["wire_bytes"]),
        f"array_wire_{late}/{early}": ratio(b["array"]["wire_bytes"], a["array"]["wire_bytes"]),
        f"ours_stored_{late}/{early}": ratio(b["ours"]["stored_bytes"], a["ours"]["stored_bytes"]),
        f"array_stored_{late}/{early}": ratio(
            b["array"]["stored_bytes"], a["array"]["stored_bytes"]
        ),
        f"array/ours_wire_at_{late}": ratio(b["array"]["wire_bytes"], b["ours"]["wire_bytes"]),
        f"array/ours_stored_at_{early}": ratio(
            a["array"]["stored_bytes"], a["ours"]["stored_bytes"]
        ),
        f"array/ours_stored_at_{late}": ratio(
            b["array"]["stored_bytes"], b["ours"]["stored_bytes"]
        ),
    }
    return {
        "method": (
            "bson.encode of each layout's writes for identical turn content at both positions; "
            "wire = insert documents + update filter/spec; stored = every document version "
            "written (inserted messages, whole conversation document after each update)"
        ),
        f"turn_{early}": a,
        f"turn_{late}": b,
        "array_document_growth_bytes_per_turn": round(growth_per_turn, 1),
        "array_turns_until_16MiB_extrapolated": int(turns_to_limit),
        "ratios": ratios,
    }


def render(result: dict[str, Any]) -> list[str]:
    turns = [k for k in result if k.startswith("turn_")]
    early, late = (int(t.split("_")[1]) for t in turns)
    lines = heading(4, f"Bytes written per turn at turn {early} vs turn {late}: messages vs array")
    rows = []
    for t in turns:
        r = result[t]
        n = int(t.split("_")[1])
        for name, label in (("ours", "ours (doc per message)"), ("array", "array in conversation")):
            rows.append(
                [
                    f"turn {n} {label}",
                    r[name]["operations"],
                    r[name]["wire_bytes"],
                    r[name]["stored_bytes"],
                    r[f"conversation_doc_bytes_{name}"],
                ]
            )
    lines += table(
        ["layout", "writes", "wire bytes", "doc bytes rewritten", "conversation doc"], rows
    )
    r = result["ratios"]
    lines.append(
        f"  ratios: wire {late}/{early} ours {fmt_ratio(r[f'ours_wire_{late}/{early}'])}, "
        f"array {fmt_ratio(r[f'array_wire_{late}/{early}'])}; rewritten {late}/{early} ours "
        f"{fmt_ratio(r[f'ours_stored_{late}/{early}'])}, array "
        f"{fmt_ratio(r[f'array_stored_{late}/{early}'])}"
    )
    lines.append(
        f"  array/ours: wire at {late} {fmt_ratio(r[f'array/ours_wire_at_{late}'])}; "
        f"rewritten at {early} {fmt_ratio(r[f'array/ours_stored_at_{early}'])}, at {late} "
        f"{fmt_ratio(r[f'array/ours_stored_at_{late}'])}"
    )
    lines.append(
        f"  array document grows {result['array_document_growth_bytes_per_turn']:,.0f} B/turn; "
        f"at that rate it passes the 16 MiB BSON limit near turn "
        f"{result['array_turns_until_16MiB_extrapolated']:,} (extrapolated, not run)"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    print("\n".join(render(run())))
