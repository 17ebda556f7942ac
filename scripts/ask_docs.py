"""Run a question set against a running server through its HTTP API and score the replies.

    python -m scripts.ask_docs QUESTIONS.jsonl [--base http://127.0.0.1:8000] [--out REPORT.json]

Meant for a docs folder served with `ARTICLES_DIR=path make run`. The question set is yours (it
stays next to the docs, outside this repository); one JSON object a line:

    {"id": "a01", "kind": "answerable" | "followup" | "unanswerable",
     "turns": ["first message", "follow-up", ...],      # sent in order, one conversation
     "articles": ["expected-slug", ...],                # where the answer lives (answerable)
     "facts": [["7 days", "seven days"], ...]}          # every group must appear (any spelling)

Only the last turn is scored. An answerable or follow-up question is *correct* when the reply
contains every fact group (case-insensitive) and was not handed to a person; *retrieved* when a
passage of an expected article was among the passages the reply was built from; *cited* when
the reply cites one. An unanswerable question is *honest* when the reply says it lacks the
information (confidence `none`) or hands over to a person. Strong precision is the share of
correct answers among the strong-band replies to answerable questions.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass
class Outcome:
    id: str
    kind: str
    question: str
    confidence: str
    intent: str
    escalated: bool
    correct: bool
    retrieved: bool
    cited: bool
    reply: str


def _post(base: str, path: str, body: dict[str, Any], token: str | None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        data: dict[str, Any] = json.loads(response.read())
        return data


def _slug(passage_id: str) -> str:
    return passage_id.split("#", 1)[0]


def ask(base: str, case: dict[str, Any]) -> Outcome:
    token = str(_post(base, "/v1/sessions", {}, None)["sessionToken"])
    conv = str(_post(base, "/v1/conversations", {}, token)["id"])
    reply: dict[str, Any] = {}
    for turn in case["turns"]:
        result = _post(base, f"/v1/conversations/{conv}/messages", {"content": turn}, token)
        reply = result.get("reply") or {}
    meta = reply.get("meta") or {}
    text = str(reply.get("content", ""))
    expected = set(case.get("articles", []))
    passages = {_slug(str(p.get("id", ""))) for p in meta.get("passages", [])}
    cited = {str(c.get("docId", "")) for c in meta.get("citations", [])}
    escalated = bool(meta.get("escalated"))
    confidence = str(meta.get("confidence"))
    if case["kind"] == "unanswerable":
        correct = confidence == "none" or escalated
    else:
        found = all(
            any(alt.lower() in text.lower() for alt in group) for group in case.get("facts", [])
        )
        correct = found and not escalated
    return Outcome(
        id=case["id"],
        kind=case["kind"],
        question=case["turns"][-1],
        confidence=confidence,
        intent=str(meta.get("intent")),
        escalated=escalated,
        correct=correct,
        retrieved=bool(expected & passages),
        cited=bool(expected & cited),
        reply=text,
    )


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("answerable", "followup", "unanswerable"):
        rows = [o for o in outcomes if o.kind == kind]
        if not rows:
            continue
        out[kind] = {
            "n": len(rows),
            "correct": sum(o.correct for o in rows),
            "retrieved": sum(o.retrieved for o in rows),
            "cited": sum(o.cited for o in rows),
            "escalated": sum(o.escalated for o in rows),
            "strong": sum(o.confidence == "strong" for o in rows),
        }
    answered = [o for o in outcomes if o.kind != "unanswerable"]
    strong = [o for o in answered if o.confidence == "strong"]
    out["strong_precision"] = (
        round(sum(o.correct for o in strong) / len(strong), 3) if strong else None
    )
    out["score"] = f"{sum(o.correct for o in outcomes)}/{len(outcomes)}"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.ask_docs", description=__doc__)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    cases = [
        json.loads(line)
        for line in args.questions.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    outcomes = []
    for case in cases:
        o = ask(args.base.rstrip("/"), case)
        outcomes.append(o)
        mark = "ok " if o.correct else "NO "
        print(
            f"{mark}{o.id:4} {o.kind:12} {o.confidence:6} {o.intent:17} "
            f"ret={int(o.retrieved)} cit={int(o.cited)} esc={int(o.escalated)}  {o.question}",
            flush=True,
        )
    summary = summarise(outcomes)
    print(json.dumps(summary, indent=2))
    if args.out:
        report = {"summary": summary, "outcomes": [asdict(o) for o in outcomes]}
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
