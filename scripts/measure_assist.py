"""How often the agent-assist suggestion cites the document that resolves the case.

Replays the seed's escalation scenarios (`seed/eval/cases.jsonl`, tag `escalation`) through the
HTTP API as a seed customer on the case's plan and locale (anonymous when the case names none):
the history's customer messages, then the message; a conversation the bot did not hand off is
handed off with the "talk to a person" button. Then it opens the case's suggestion and compares
its sources with the resolving documents labelled in `seed/eval/assist_resolving.jsonl` (written
before this was first run). A scenario with no resolving document (a knowledge gap, or a request
for a person that states no problem) counts only in `falseLeadsWhenNothingResolves`: its draft
cites or quotes a passage all the same.

    python -m scripts.measure_assist [--embedder local|fake] [--out REPORT.json]

Reports, over the scenarios with a resolving document: `cited` (the draft cites, or the policy
draft quotes, a resolving document), `sources` (one is among the sources beside the draft) and
`similar` (one is among the similar resolved cases).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.identity import mint_identity
from app.main import create_app
from app.settings import Settings
from tuning import TUNING

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "seed" / "eval" / "cases.jsonl"
LABELS = ROOT / "seed" / "eval" / "assist_resolving.jsonl"
ADMIN_TOKEN = "measure-admin-token"
SECRET = "measure-identity-secret-0123456789abcdef"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _customer_for(case: dict[str, Any], customers: list[dict[str, Any]]) -> str | None:
    wanted = case.get("customer")
    if not wanted:
        return None
    for c in customers:
        if c["plan"] == wanted["plan"] and c.get("locale", "en") == wanted.get("locale", "en"):
            return str(c["_id"])
    raise LookupError(f"{case['id']}: no seed customer on {wanted}")


def _session(client: TestClient, customer_id: str | None) -> dict[str, str]:
    body = {"identityToken": mint_identity(customer_id, SECRET, 10)} if customer_id else {}
    r = client.post("/v1/sessions", json=body)
    r.raise_for_status()
    return {"Authorization": f"Bearer {r.json()['sessionToken']}"}


def _replay(client: TestClient, case: dict[str, Any], customer_id: str | None) -> str:
    """The scenario's customer messages through the API; returns the case reference."""
    h = _session(client, customer_id)
    r = client.post("/v1/conversations", headers=h)
    r.raise_for_status()
    conv = r.json()["id"]
    said = [t["content"] for t in case.get("history", []) if t["role"] == "user"]
    case_ref = None
    for text in [*said, case["message"]]:
        r = client.post(f"/v1/conversations/{conv}/messages", headers=h, json={"content": text})
        r.raise_for_status()
        reply = r.json().get("reply") or {}
        case_ref = (reply.get("meta") or {}).get("caseRef") or case_ref
    if case_ref is None:
        r = client.post(f"/v1/conversations/{conv}/handoff", headers=h, json={})
        r.raise_for_status()
        case_ref = r.json()["caseRef"]
    return str(case_ref)


def _score(suggestion: dict[str, Any], resolving: set[str]) -> dict[str, Any]:
    cited = {s["docId"] for s in suggestion["sources"] if s["cited"]}
    shown = {s["docId"] for s in suggestion["sources"]}
    similar = {s["id"] for s in suggestion["similar"]}
    return {
        "problem": suggestion["problem"],
        "kind": suggestion["kind"],
        "confidence": suggestion["confidence"],
        "citedIds": sorted(cited),
        "sourceIds": sorted(shown),
        "similarIds": sorted(similar),
        "cited": bool(cited & resolving),
        "sources": bool(shown & resolving),
        "similar": bool(similar & resolving),
    }


def measure(embedder: str) -> dict[str, Any]:
    labels = {row["case"]: set(row["resolving"]) for row in _jsonl(LABELS)}
    scenarios = [c for c in _jsonl(CASES) if "escalation" in c.get("tags", [])]
    customers = _jsonl(ROOT / "seed" / "customers.jsonl")
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        mongodb_uri=None,
        embedded_store="memory",
        embedder=embedder,
        admin_token=ADMIN_TOKEN,
        identity_secret=SECRET,
        session_secret="measure-session-secret-0123456789abcdef",
        allowed_hosts=["testserver"],
    )
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    rows = []
    with TestClient(create_app(settings, tuning=TUNING.without_rate_limits())) as client:
        while client.get("/readyz").status_code != 200:
            pass
        for case in scenarios:
            case_ref = _replay(client, case, _customer_for(case, customers))
            r = client.get(f"/v1/admin/escalations/{case_ref}/suggestion", headers=admin)
            r.raise_for_status()
            resolving = labels[case["id"]]
            rows.append(
                {"case": case["id"], "resolving": sorted(resolving)} | _score(r.json(), resolving)
            )
    return _summary(rows)


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = [r for r in rows if r["resolving"]]
    unlabelled = [r for r in rows if not r["resolving"]]
    n = len(labelled)
    return {
        "scenarios": len(rows),
        "withResolvingDocument": n,
        "cited": sum(r["cited"] for r in labelled),
        "sources": sum(r["sources"] for r in labelled),
        "similar": sum(r["similar"] for r in labelled),
        "citedOrSimilar": sum(r["cited"] or r["similar"] for r in labelled),
        # nothing resolves these: a drafted answer or a quoted passage is a false lead
        "falseLeadsWhenNothingResolves": sum(bool(r["citedIds"]) for r in unlabelled),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--embedder", choices=["local", "fake"], default="local")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = measure(args.embedder)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n")
    n = report["withResolvingDocument"]
    print(text if not args.out else "")
    print(
        f"{report['scenarios']} scenarios, {n} with a resolving document: "
        f"cited {report['cited']}/{n}, among sources {report['sources']}/{n}, "
        f"among similar cases {report['similar']}/{n}; "
        f"false leads {report['falseLeadsWhenNothingResolves']}/{report['scenarios'] - n}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
