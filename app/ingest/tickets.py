"""Resolved tickets from a help-desk export (CSV or JSON Lines) into `Ticket`s.

Input format: one ticket a row (CSV with a header line) or a line (JSONL objects). Column names
are matched case-insensitively, ignoring `_`, `-` and spaces, with the aliases in `_COLUMNS`:

| field | column (aliases) | required | becomes |
|---|---|---|---|
| id | id, ticket id, ticket number | no | the ticket's key (else a hash of subject + created) |
| subject | subject, title | yes* | subject |
| description | description, body, question, symptom | yes* | symptom (*one of the two) |
| resolution | resolution, solution, answer | yes | resolution (a row without one is skipped) |
| product | product, category, product area | no | product (default `general`) |
| created | created, created at, opened | no | fallback for resolvedAt |
| resolved | resolved, resolved at, solved at, closed at | no | resolvedAt (recency decay) |
| plan | plan, tier | no | audience: free → all, pro → pro, enterprise → enterprise |
| status | status | no | resolved/solved/closed → resolved; open/new/pending/hold → skipped |
| locale | locale, language | no | locale (default en) |
| quality | quality | no | overrides the computed quality (0..1) |

Every text field is PII-masked (`app.safety.pii`: cards, emails, phones, IBANs, passwords)
before anything is stored or embedded. Every row passes the one screen (`app.ingest.review`, on
normalised text): a row holding instruction-like text is stored `unpublished` with its review
flags, never retrieved until a person publishes it in /admin. Quality is computed from the
resolution (`ticket_quality`); tickets under `tuning.ticket_min_quality` are stored but never
retrieved, and are reported.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, cast

from app.ingest.loaders import InvalidArticle, LoadError, decode_utf8
from app.ingest.review import review_flags
from app.safety.pii import KINDS, mask_text
from app.store.models import Audience, Ticket, TicketStatus

TICKET_SUFFIXES = (".csv", ".jsonl", ".ndjson")
PLAN_AUDIENCE: dict[str, Audience] = {"free": "all", "pro": "pro", "enterprise": "enterprise"}
_RESOLVED = frozenset({"resolved", "solved", "closed", "done", "fixed"})
_WONT_FIX = frozenset({"wont_fix", "won't fix", "wontfix", "declined", "not_planned"})
_UNRESOLVED = frozenset({"open", "new", "pending", "hold", "on-hold", "in_progress", "waiting"})
_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id", "ticketid", "ticketnumber", "number"),
    "subject": ("subject", "title"),
    "description": ("description", "body", "question", "symptom", "problem"),
    "resolution": ("resolution", "solution", "answer", "fix"),
    "product": ("product", "category", "productarea"),
    "created": ("created", "createdat", "opened", "openedat"),
    "resolved": ("resolved", "resolvedat", "solvedat", "closedat"),
    "plan": ("plan", "tier"),
    "status": ("status",),
    "locale": ("locale", "language", "lang"),
    "quality": ("quality",),
}
# resolutions that say a ticket was closed, not how the problem was solved
_NON_ANSWERS = frozenset(
    {
        "fixed",
        "resolved",
        "solved",
        "closed",
        "done",
        "duplicate",
        "n/a",
        "na",
        "none",
        "no response",
        "customer did not respond",
        "see above",
        "ok",
        "thanks",
    }
)
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass
class TicketLoad:
    """What one ticket file held: tickets to store, rows skipped or rejected (with reasons)."""

    tickets: list[Ticket] = field(default_factory=list)
    skipped: list[LoadError] = field(default_factory=list)
    bad: list[LoadError] = field(default_factory=list)
    masked_rows: int = 0


def ticket_quality(subject: str, description: str, resolution: str) -> float:
    """How useful a resolution is as an answer, 0..1. Pure.

    A resolution that only says the ticket closed ("fixed", "duplicate") is worth nothing; a
    short one little; one of a sentence or more with a problem described is fully useful.
    """
    text = resolution.strip().strip(".!").lower()
    if not text or text in _NON_ANSWERS:
        return 0.1
    words = len(_WORD.findall(resolution))
    if words < 4:
        score = 0.3
    elif words < 8:
        score = 0.6
    else:
        score = 1.0
    problem_words = len(_WORD.findall(f"{subject} {description}"))
    if problem_words < 3:
        score -= 0.2  # a fix without the problem it fixes matches nothing a customer asks
    return round(max(0.0, min(score, 1.0)), 2)


def is_tickets_file(path: Path) -> bool:
    """True when the file's first row names the columns of a ticket export."""
    if path.suffix.lower() not in TICKET_SUFFIXES:
        return False
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as fh:
            head = fh.readline()
    except OSError:
        return False
    if path.suffix.lower() == ".csv":
        keys: Iterable[str] = next(csv.reader([head]), [])
    else:
        try:
            obj = json.loads(head)
        except json.JSONDecodeError:
            return False
        keys = obj.keys() if isinstance(obj, dict) else []
    found = {_field_of(k) for k in keys}
    return "resolution" in found and bool(found & {"subject", "description"})


def ticket_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(ticket exports, other .csv/.jsonl files) under `folder`, sorted; hidden paths skipped."""
    found: tuple[list[Path], list[Path]] = ([], [])
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).parts
        if (
            path.suffix.lower() in TICKET_SUFFIXES
            and path.is_file()
            and not any(p.startswith(".") for p in rel)
        ):
            found[0 if is_tickets_file(path) else 1].append(path)
    return found


def _norm_key(key: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(key).strip().lower())


def _field_of(key: str) -> str | None:
    norm = _norm_key(key)
    return next((name for name, aliases in _COLUMNS.items() if norm in aliases), None)


def _rows(path: Path, raw: bytes) -> Iterator[tuple[int, Mapping[str, Any] | str]]:
    """(line number, row) for every row; a row that cannot be parsed is its error message.
    Raises `InvalidArticle` for a file that cannot be read at all (not UTF-8)."""
    text = decode_utf8(raw)
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:  # e.g. a field over the csv module's size limit
                yield reader.line_num, f"unreadable CSV ({exc}); the rest of the file was not read"
                return
            extra = row.pop(None, None)
            if extra:  # more cells than the header has columns: shifted, so no field is sure
                cells = len(row) + len(extra)
                yield reader.line_num, f"{cells} cells but the header has {len(row)} columns"
                continue
            if any(v not in (None, "") for v in row.values()):
                yield reader.line_num, row
        return
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield n, f"invalid JSON ({exc.msg} at column {exc.colno})"
            continue
        yield n, obj if isinstance(obj, dict) else "expected a JSON object"


def _date(value: Any, column: str) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            d = date.fromisoformat(text[:10])
        except ValueError:
            raise InvalidArticle(f"{column} {text!r} is not a date (use ISO 8601)") from None
        parsed = datetime(d.year, d.month, d.day)
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return "" if value is None else str(value).strip()


def load_ticket_rows(
    path: Path,
    raw: bytes,
    *,
    shown: str | None = None,
    pii: Iterable[str] = KINDS,
) -> TicketLoad:
    """Every row of a ticket file as a Ticket, or a skip / a rejection naming `file:line`."""
    shown = shown or path.as_posix()
    kinds = tuple(pii)
    out = TicketLoad()
    seen: dict[str, int] = {}
    try:
        rows = list(_rows(path, raw))
    except InvalidArticle as exc:
        out.bad.append(LoadError(shown, str(exc)))
        return out
    for line, parsed in rows:
        where = f"{shown}:{line}"
        if isinstance(parsed, str):
            out.bad.append(LoadError(where, parsed))
            continue
        row = {f: v for k, v in parsed.items() if (f := _field_of(str(k))) is not None}
        try:
            ticket, masked = _ticket(row, kinds)
        except _Skip as skip:
            out.skipped.append(LoadError(where, str(skip)))
            continue
        except InvalidArticle as exc:
            out.bad.append(LoadError(where, str(exc)))
            continue
        if ticket.id in seen:
            out.bad.append(
                LoadError(where, f"duplicate id {ticket.id!r} (also on line {seen[ticket.id]})")
            )
            continue
        seen[ticket.id] = line
        out.masked_rows += masked
        out.tickets.append(ticket)
    return out


class _Skip(Exception):
    """A well-formed row that is not a resolved ticket."""


def _ticket(row: Mapping[str, Any], pii: tuple[str, ...]) -> tuple[Ticket, bool]:
    raw_status = _text(row, "status").lower()
    if raw_status in _UNRESOLVED:
        raise _Skip(f"status {raw_status!r}: not resolved")
    status: TicketStatus = "wont_fix" if raw_status in _WONT_FIX else "resolved"
    if raw_status and raw_status not in _RESOLVED | _WONT_FIX:
        raise InvalidArticle(f"unknown status {raw_status!r}")
    subject_raw, description_raw = _text(row, "subject"), _text(row, "description")
    resolution_raw = _text(row, "resolution")
    if not subject_raw and not description_raw:
        raise InvalidArticle("no subject and no description")
    if not resolution_raw:
        raise _Skip("no resolution")
    problems: list[str] = []
    plan = _text(row, "plan").lower() or "free"
    audience = PLAN_AUDIENCE.get(plan)
    if audience is None:
        problems.append(f"unknown plan {plan!r} (expected one of {', '.join(PLAN_AUDIENCE)})")
    created = resolved = None
    for name in ("created", "resolved"):
        try:
            value = _date(row.get(name), name)
        except InvalidArticle as exc:
            problems.append(str(exc))
            continue
        created, resolved = (value, resolved) if name == "created" else (created, value)
    quality_override: float | None = None
    if _text(row, "quality"):
        try:
            quality_override = float(_text(row, "quality"))
        except ValueError:
            problems.append(f"quality {_text(row, 'quality')!r} is not a number")
        else:
            if not 0.0 <= quality_override <= 1.0:
                problems.append(f"quality {quality_override} is outside 0..1")
    if problems:
        raise InvalidArticle("; ".join(problems))
    subject, description, resolution = (
        mask_text(t, pii) for t in (subject_raw, description_raw, resolution_raw)
    )
    masked = (subject, description, resolution) != (subject_raw, description_raw, resolution_raw)
    ticket_id = _text(row, "id") or _derived_id(subject_raw, description_raw, created)
    quality = (
        quality_override
        if quality_override is not None
        else ticket_quality(subject, description, resolution)
    )
    ticket = Ticket(
        id=ticket_id,
        subject=subject or description.split("\n", 1)[0][:120],
        symptom=description,
        resolution=resolution,
        product=_text(row, "product") or "general",
        audience=cast(Audience, audience),
        locale=(_text(row, "locale") or "en").lower(),
        status=status,
        quality=quality,
        resolved_at=resolved or created,
    )
    # the one screen, on normalised text: an instruction in a row is held until a person looks
    flags = review_flags(ticket.subject, f"{ticket.symptom}\n{ticket.resolution}")
    if flags:
        ticket = ticket.model_copy(update={"status": "unpublished", "review_flags": flags})
    return ticket, masked


def _derived_id(subject: str, description: str, created: datetime | None) -> str:
    key = f"{subject}\n{description}\n{created.isoformat() if created else ''}"
    return "t-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def load_ticket_files(
    files: Iterable[tuple[Path, str]], pii: Iterable[str] = KINDS, max_bytes: int = 50_000_000
) -> TicketLoad:
    """Every (file, shown path)'s rows, merged; an id already taken by an earlier file is bad."""
    merged = TicketLoad()
    seen: dict[str, str] = {}
    kinds = tuple(pii)
    for path, shown in files:
        size = path.stat().st_size
        if size > max_bytes:
            merged.bad.append(LoadError(shown, f"file is {size:,} bytes; split it"))
            continue
        got = load_ticket_rows(path, path.read_bytes(), shown=shown, pii=kinds)
        merged.skipped.extend(got.skipped)
        merged.bad.extend(got.bad)
        merged.masked_rows += got.masked_rows
        for ticket in got.tickets:
            if ticket.id in seen:
                merged.bad.append(
                    LoadError(shown, f"ticket id {ticket.id!r} also in {seen[ticket.id]}")
                )
                continue
            seen[ticket.id] = shown
            merged.tickets.append(ticket)
    return merged
