"""Golden rows (tests/language/golden.yaml) through the offline condenser, and the escalation
decision for a frustrated message: answered when the docs answer, handed off when the turn fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from app.providers.embeddings.fake import FakeEmbedder
from app.tenant import load_tenant
from app.turn.condense import Turn, condense
from app.turn.escalate import decide
from app.turn.router import Router
from tuning import TUNING

ROOT = Path(__file__).resolve().parents[2]
ROWS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("golden.yaml")).read_text(encoding="utf-8")
)
CHECKED = {"standalone": "standalone_question", "sentiment": "sentiment", "intent": "intent",
           "human": "explicit_human_request"}  # fmt: skip


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(FakeEmbedder(), tenant=load_tenant(ROOT / "seed"), tool_exemplars={})


@pytest.mark.parametrize("row", ROWS, ids=[r["message"][:40] for r in ROWS])
async def test_golden_row(router: Router, row: dict[str, Any]) -> None:
    history = [Turn("user", text) for text in row.get("history", [])]
    c = await condense(row["message"], history, chat_model=None, router=router,
                       prev_standalone=history[-1].content if history else None)  # fmt: skip
    got = {key: getattr(c, attr) for key, attr in CHECKED.items() if key in row}
    assert got == {key: row[key] for key in got}


@pytest.mark.parametrize("row", [r for r in ROWS if r.get("sentiment") == "frustrated"])
async def test_frustration_alone_never_hands_off(router: Router, row: dict[str, Any]) -> None:
    c = await condense(row["message"], [], chat_model=None, router=router, prev_standalone=None)

    def reason(outcome: str) -> str | None:
        return decide(intent=c.intent, explicit_request=c.explicit_human_request,
                      sentiment=c.sentiment, outcome=outcome,  # type: ignore[arg-type]
                      failed_turns=1, tuning=TUNING).reason  # fmt: skip

    assert reason("success") is None and reason("partial") is None
    assert reason("failed") == "frustration"
