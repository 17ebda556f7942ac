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


async def gap_turns(db: Any, start: datetime, end: datetime, limit: int = 20000) -> dict[str, Any]:
    """Raw material of the gap report: assistant turns in range that were weak/none, escalated,
    voted unhelpful or in a conversation the customer said was not solved; plus those votes, the
    handoff packets and the askers' plans. Deciding what is a gap is `app.knowledge.gaps`."""
    votes = await (
        db["feedback"].find(
            {"createdAt": {"$gte": start, "$lt": end}},
            {"_id": 0, "conversationId": 1, "messageId": 1, "helpful": 1, "resolved": 1},
        )
    ).to_list()
    down = sorted(
        {v["messageId"] for v in votes if v.get("helpful") is False and v.get("messageId")}
    )
    unsolved = sorted({v["conversationId"] for v in votes if v.get("resolved") is False})
    query = {
        "role": "assistant",
        "createdAt": {"$gte": start, "$lt": end},
        "$or": [
            {"meta.confidence": {"$in": ["weak", "none"]}},
            {"meta.escalated": True},
            {"_id": {"$in": down}},
            {"conversationId": {"$in": unsolved}},
        ],
    }
    projection = {
        "conversationId": 1,
        "createdAt": 1,
        "meta.confidence": 1,
        "meta.condensedQuestion": 1,
        "meta.escalated": 1,
        "meta.escalationReason": 1,
        "meta.caseRef": 1,
        "meta.tools": 1,
        "meta.offTopic": 1,
        "meta.language": 1,
    }
    cursor = db["messages"].find(query, projection).sort("createdAt", -1).limit(limit)
    turns = await cursor.to_list()
    conv_ids = sorted({t["conversationId"] for t in turns})
    convs = await (
        db["conversations"].find({"_id": {"$in": conv_ids}}, {"customerId": 1})
    ).to_list()
    customer_of = {c["_id"]: c.get("customerId") for c in convs}
    customers = await (
        db["customers"].find(
            {"_id": {"$in": sorted({c for c in customer_of.values() if c})}}, {"plan": 1}
        )
    ).to_list()
    plan_of = {c["_id"]: c.get("plan") for c in customers}
    cases = await (db["escalations"].find({"conversationId": {"$in": conv_ids}})).to_list()
    return {
        "turns": turns,
        "thumbsDown": set(down),
        "notSolved": set(unsolved),
        "planOfConversation": {cid: plan_of.get(cus) for cid, cus in customer_of.items() if cus},
        "cases": cases,
    }


async def answers_citing(
    db: Any, start: datetime, end: datetime, ticket_ids: list[str]
) -> list[dict[str, Any]]:
    """Strong assistant answers in range that cite one of `ticket_ids` (createdAt, ids cited)."""
    if not ticket_ids:
        return []
    cursor = db["messages"].find(
        {
            "role": "assistant",
            "createdAt": {"$gte": start, "$lt": end},
            "meta.confidence": "strong",
            "meta.citations": {"$elemMatch": {"kind": "ticket", "docId": {"$in": ticket_ids}}},
        },
        {"_id": 1, "conversationId": 1, "createdAt": 1, "meta.citations": 1},
    )
    return list(await cursor.to_list())


async def tickets_created(db: Any, start: datetime, end: datetime) -> list[datetime]:
    """When each resolution-born ticket in range was written."""
    cursor = db["tickets"].find(
        {"source": "resolution", "resolvedAt": {"$gte": start, "$lt": end}}, {"resolvedAt": 1}
    )
    return [d["resolvedAt"] for d in await cursor.to_list()]


ASSIST_EVENTS: dict[str, str] = {
    "shown": "shown",
    "inserted": "inserted",
    "sent_unchanged": "sentUnchanged",
    "sent_edited": "sentEdited",
}


async def assist_use(db: Any, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Agent-assist use per ISO week: suggestions shown, inserted, sent unchanged, sent edited.
    Counted per day by MongoDB, folded into ISO weeks in Python (no `$isoWeek` in mongomock)."""
    pipeline = [
        {"$match": {"at": {"$gte": start, "$lt": end}}},
        {"$group": {"_id": {"day": _day("at"), "event": "$event"}, "n": {"$sum": 1}}},
    ]
    weeks: dict[str, dict[str, Any]] = {}
    async for row in await db["assist_events"].aggregate(pipeline):
        key = ASSIST_EVENTS.get(row["_id"]["event"])
        if key is None:
            continue
        year, week, _ = datetime.fromisoformat(row["_id"]["day"]).isocalendar()
        label = f"{year}-W{week:02d}"
        counts = weeks.setdefault(
            label, {"week": label, **dict.fromkeys(ASSIST_EVENTS.values(), 0)}
        )
        counts[key] += int(row["n"])
    return [weeks[w] for w in sorted(weeks)]
