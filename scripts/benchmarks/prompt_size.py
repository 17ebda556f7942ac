"""Section 3: prompt size at turn 8 vs turn 60, our bounded memory vs replaying the transcript.

Both prompts come from `app.turn.prompt.build_prompt` with the same system text, the same five
passages, the same turn info and the same question; only the conversation part differs:

- ours: `memory.build_context(summary, facts, prior messages)` exactly as `engine._answer` calls
  it (the last `(verbatim_turns + 1) * 4` stored messages, the summary and facts the conversation
  document holds after the previous turn);
- raw: every earlier message verbatim, in the same `<conversation_context>` format.

Sizes are characters sent (system + user message); tokens are approximated as chars / 4.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.turn import memory
from app.turn.prompt import Prompt, build_prompt
from scripts.benchmarks.common import fmt_ratio, heading, ratio, table
from scripts.benchmarks.conversation import PROMPT_PASSAGES, ConversationSim, kind_of
from tuning import TUNING, Tuning


def _prompt(question: str, intent: str, context: memory.MemoryContext) -> Prompt:
    return build_prompt(
        question=question,
        original=question,
        passages=PROMPT_PASSAGES,
        memory=context,
        customer_name="Brightwater Analytics",
        confidence="strong",
        intent=intent,
    )


def prompts_at(turn: int, tuning: Tuning = TUNING) -> dict[str, Any]:
    """Both prompts for the customer's message of `turn` (1-based)."""
    sim = ConversationSim(tuning=tuning)
    for _ in range(turn - 1):
        sim.advance()
    conv = sim.conversation
    question = sim.user_message(turn)
    window = (tuning.verbatim_turns + 1) * 4
    prior = sim.messages[-window:]
    ours_ctx = memory.build_context(conv.summary, memory.facts_from_docs(conv.facts), prior, tuning)
    raw_ctx = memory.MemoryContext(
        recent=tuple(memory.Line(m.role, m.content, m.seq) for m in sim.messages)
    )
    intent = kind_of(turn).intent
    ours = _prompt(question.content, intent, ours_ctx)
    raw = _prompt(question.content, intent, raw_ctx)

    def sizes(p: Prompt, ctx: memory.MemoryContext) -> dict[str, Any]:
        return {
            "prompt_chars": p.size_chars,
            "prompt_tokens_approx": round(p.size_chars / 4),
            "context_chars": len(ctx.render()),
        }

    return {
        "turn": turn,
        "prior_messages": len(sim.messages),
        "ours": {
            **sizes(ours, ours_ctx),
            "summary_chars": len(ours_ctx.summary),
            "facts": len(ours_ctx.facts),
            "verbatim_messages": len(ours_ctx.recent),
            "dropped_messages": ours_ctx.dropped_messages,
        },
        "raw": sizes(raw, raw_ctx),
    }


def run(turns: Sequence[int] = (8, 60), tuning: Tuning = TUNING) -> dict[str, Any]:
    early, late = turns
    a, b = prompts_at(early, tuning), prompts_at(late, tuning)
    return {
        "method": (
            "synthetic 15-kind support conversation; prompts from app.turn.prompt.build_prompt "
            "with 5 fixed passages; ours = memory.build_context as the engine calls it, raw = "
            "every earlier message verbatim; tokens ≈ chars/4"
        ),
        "memory_budget_chars": tuning.memory_budget_chars,
        f"turn_{early}": a,
        f"turn_{late}": b,
        "ratios": {
            f"ours_{late}/{early}": ratio(b["ours"]["prompt_chars"], a["ours"]["prompt_chars"]),
            f"raw_{late}/{early}": ratio(b["raw"]["prompt_chars"], a["raw"]["prompt_chars"]),
            f"raw/ours_at_{early}": ratio(a["raw"]["prompt_chars"], a["ours"]["prompt_chars"]),
            f"raw/ours_at_{late}": ratio(b["raw"]["prompt_chars"], b["ours"]["prompt_chars"]),
            f"context_ours_{late}/{early}": ratio(
                b["ours"]["context_chars"], a["ours"]["context_chars"]
            ),
            f"context_raw_{late}/{early}": ratio(
                b["raw"]["context_chars"], a["raw"]["context_chars"]
            ),
            f"context_raw/ours_at_{late}": ratio(
                b["raw"]["context_chars"], b["ours"]["context_chars"]
            ),
        },
    }


def render(result: dict[str, Any]) -> list[str]:
    turns = [k for k in result if k.startswith("turn_")]
    early, late = (int(t.split("_")[1]) for t in turns)
    lines = heading(3, f"Prompt size at turn {early} vs turn {late}: our memory vs raw transcript")
    rows = []
    for t in turns:
        r = result[t]
        for name in ("ours", "raw"):
            s = r[name]
            rows.append(
                [
                    f"turn {r['turn']} {name}",
                    r["prior_messages"],
                    s["context_chars"],
                    s["prompt_chars"],
                    s["prompt_tokens_approx"],
                ]
            )
    lines += table(["prompt", "earlier msgs", "context chars", "prompt chars", "~tokens"], rows)
    for t in turns:
        o = result[t]["ours"]
        lines.append(
            f"  ours at turn {result[t]['turn']}: summary {o['summary_chars']} chars, "
            f"{o['facts']} facts, {o['verbatim_messages']} verbatim messages "
            f"(budget {result['memory_budget_chars']} chars)"
        )
    r = result["ratios"]
    lines.append(
        f"  ratios (whole prompt): ours {late}/{early} {fmt_ratio(r[f'ours_{late}/{early}'])}; "
        f"raw {late}/{early} {fmt_ratio(r[f'raw_{late}/{early}'])}; "
        f"raw/ours at {late} {fmt_ratio(r[f'raw/ours_at_{late}'])} "
        f"(at {early}: {fmt_ratio(r[f'raw/ours_at_{early}'])})"
    )
    lines.append(
        f"  ratios (conversation part only): ours {late}/{early} "
        f"{fmt_ratio(r[f'context_ours_{late}/{early}'])}; raw {late}/{early} "
        f"{fmt_ratio(r[f'context_raw_{late}/{early}'])}; raw/ours at {late} "
        f"{fmt_ratio(r[f'context_raw/ours_at_{late}'])}"
    )
    return lines


if __name__ == "__main__":  # pragma: no cover - manual use
    print("\n".join(render(run())))
