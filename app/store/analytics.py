"""Aggregations for the admin dashboard, run by MongoDB (both backends run these pipelines).

Kept to stages mongomock-ng also runs; where a server operator is missing there (`$percentile`,
`$round`), the last step is done in Python and says so.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any


def _day(field: str) -> dict[str, Any]:
    return {"$dateToString": {"format": "%Y-%m-%d", "date": f"${field}"}}


async def conversation_metrics(db: Any, start: datetime, end: datetime) -> dict[str, Any]:
    """Per day: conversations, escalated, deflected (ended without escalation), resolved
    (deflected and confirmed by the customer's "did this resolve it?")."""
    pipeline = [
        {"$match": {"createdAt": {"$gte": start, "$lt": end}, "turnCount": {"$gt": 0}}},
        {
            "$group": {
                "_id": _day("createdAt"),
                "conversations": {"$sum": 1},
                "escalated": {"$sum": {"$cond": [{"$eq": ["$escalated", True]}, 1, 0]}},
                "resolved": {
                    "$sum": {
                        "$cond": [
                            {"$and": [{"$ne": ["$escalated", True]}, {"$eq": ["$resolved", True]}]},
                            1,
                            0,
                        ]
                    }
                },
            }
        },
        {"$sort": {"_id": 1}},
    ]
    rows = await (await db["conversations"].aggregate(pipeline)).to_list()
    per_day = []
    totals = {"conversations": 0, "escalated": 0, "deflected": 0, "resolved": 0}
    for r in rows:
        deflected = r["conversations"] - r["escalated"]
        day = {
            "date": r["_id"],
            "conversations": r["conversations"],
            "escalated": r["escalated"],
            "deflected": deflected,
            "resolved": r["resolved"],
        }
        per_day.append(day)
        for k in totals:
            totals[k] += day[k]
    n = totals["conversations"]
    return {
        "totals": {
            **totals,
            "unconfirmedDeflections": totals["deflected"] - totals["resolved"],
            "deflectionRate": round(totals["deflected"] / n, 4) if n else None,
            "resolutionRate": round(totals["resolved"] / n, 4) if n else None,
        },
        "perDay": per_day,
    }


async def confidence_mix(db: Any, start: datetime, end: datetime) -> dict[str, int]:
    pipeline = [
        {
            "$match": {
                "role": "assistant",
                "createdAt": {"$gte": start, "$lt": end},
                "meta.confidence": {"$in": ["strong", "weak", "none"]},
            }
        },
        {"$group": {"_id": "$meta.confidence", "n": {"$sum": 1}}},
    ]
    rows = await (await db["messages"].aggregate(pipeline)).to_list()
    mix = {"strong": 0, "weak": 0, "none": 0}
    for r in rows:
        mix[r["_id"]] = r["n"]
    return mix


async def escalation_reasons(db: Any, start: datetime, end: datetime) -> dict[str, int]:
    pipeline = [
        {"$match": {"createdAt": {"$gte": start, "$lt": end}}},
        {"$group": {"_id": "$reason", "n": {"$sum": 1}}},
    ]
    rows = await (await db["escalations"].aggregate(pipeline)).to_list()
    out = {"policy": 0, "explicit": 0, "frustration": 0, "failed_turns": 0}
    for r in rows:
        out[str(r["_id"])] = r["n"]
    return out


async def median_latency_ms(db: Any, start: datetime, end: datetime) -> float | None:
    """Median total turn latency. `$percentile` needs MongoDB 7; the median is taken in Python."""
    pipeline = [
        {
            "$match": {
                "role": "assistant",
                "createdAt": {"$gte": start, "$lt": end},
                "meta.latencyMs.total": {"$exists": True},
            }
        },
        {"$project": {"_id": 0, "t": "$meta.latencyMs.total"}},
    ]
    rows = await (await db["messages"].aggregate(pipeline)).to_list()
    values = [float(r["t"]) for r in rows if isinstance(r.get("t"), int | float)]
    return round(statistics.median(values), 1) if values else None


async def docs_gaps(
    db: Any, start: datetime, end: datetime, *, examples: int = 5, limit: int = 50
) -> list[dict[str, Any]]:
    """Weak/none turns grouped by intent (served by the {meta.confidence, meta.intent} index)."""
    pipeline = [
        {
            "$match": {
                "meta.confidence": {"$in": ["weak", "none"]},
                "role": "assistant",
                "createdAt": {"$gte": start, "$lt": end},
            }
        },
        {"$sort": {"createdAt": -1}},
        {
            "$group": {
                "_id": "$meta.intent",
                "count": {"$sum": 1},
                "escalated": {"$sum": {"$cond": [{"$eq": ["$meta.escalated", True]}, 1, 0]}},
                "avgTopScore": {"$avg": "$meta.topRerankScore"},
                "examples": {"$addToSet": "$meta.condensedQuestion"},
            }
        },
        {"$sort": {"count": -1, "_id": 1}},
        {"$limit": limit},
    ]
    rows = await (await db["messages"].aggregate(pipeline)).to_list()
    return [
        {
            "intent": r["_id"] or "other",
            "count": r["count"],
            "escalated": r["escalated"],
            "avgTopScore": None if r["avgTopScore"] is None else round(float(r["avgTopScore"]), 3),
            "examples": sorted(e for e in r["examples"] if e)[:examples],
        }
        for r in rows
    ]
