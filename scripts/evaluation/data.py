"""Reading the eval formats of DESIGN 11: corpus JSONL → store models, cases JSONL → `EvalCase`.

Both readers are lenient per record and strict per file: a record that cannot be used is
skipped with a reason (reported, never silently dropped), a line that is not JSON stops the run
with its file and line number (a broken file would otherwise be measured as a bad pipeline).

Case fields, where DESIGN 11 is silent:
- `customer` absent or null → anonymous visitor (free rung, locale "en"). A `customer` object
  without `plan` is a signed-in customer with no plan (also the free rung: fail closed); without
  `locale` its locale is "en".
- `history` entries need a string `content`; roles other than user/assistant/agent are ignored.
- `expect.relevant` / `expect.forbidden` given as one string count as a one-element list.
- Every `expect` field is optional; a metric counts only the cases carrying its field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.store.models import Article, Ticket

HISTORY_ROLES = frozenset({"user", "assistant", "agent"})


class EvalDataError(ValueError):
    """A file the harness cannot read at all (missing, or a line that is not JSON)."""


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalDataError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalDataError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc


# --- corpus ------------------------------------------------------------------------------------


@dataclass
class Corpus:
    articles: list[Article] = field(default_factory=list)
    tickets: list[Ticket] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"


def _datetime(value: Any) -> datetime | None:
    """An ISO date or datetime (naive means UTC); None for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(t) for t in value] if isinstance(value, list) else []


def split_ticket_body(body: str) -> tuple[str, str]:
    """(symptom, resolution): split at a line starting with "Resolution:" when there is one,
    else the whole body is the symptom (the resolution stays empty)."""
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower().startswith("resolution:"):
            rest = line.strip()[len("resolution:") :].strip()
            resolution = "\n".join([rest, *lines[i + 1 :]]).strip()
            return "\n".join(lines[:i]).strip(), resolution
    return body.strip(), ""


def corpus_record(row: Any, where: str, now: datetime) -> Article | Ticket:
    """One corpus line as an `Article` or a `Ticket`; raises ValueError saying what is wrong."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    doc_id, title, body = row.get("id"), row.get("title"), row.get("body")
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise ValueError("no id")
    if not isinstance(body, str) or not body.strip():
        raise ValueError(f"{doc_id}: no body")
    title = title if isinstance(title, str) and title.strip() else doc_id
    kind = row.get("kind") or "article"
    audience = row.get("audience") or "all"
    locale = row.get("locale") or "en"
    category = row.get("category") or "general"
    try:
        if kind == "ticket":
            symptom, resolution = split_ticket_body(body)
            return Ticket(
                id=doc_id,
                subject=title,
                symptom=symptom,
                resolution=resolution,
                product=str(category),
                audience=audience,
                locale=locale,
                status=row.get("status") or "resolved",
                quality=float(row["quality"]) if row.get("quality") is not None else 1.0,
                resolved_at=_datetime(row.get("resolvedAt")),
            )
        if kind != "article":
            raise ValueError(f"{doc_id}: unknown kind {kind!r}")
        return Article(
            id=doc_id,
            slug=doc_id,
            title=title,
            body=body,
            summary=str(row.get("summary") or ""),
            category=str(category),
            tags=_tags(row.get("tags")),
            audience=audience,
            locale=locale,
            status=row.get("status") or "published",
            updated_at=_datetime(row.get("updatedAt")) or now,
            source_path=where,
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(f"{doc_id}: {problems}") from exc
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(doc_id):
            raise
        raise ValueError(f"{doc_id}: {exc}") from exc


def load_corpus(path: Path, now: datetime | None = None) -> Corpus:
    now = now or datetime.now(UTC)
    corpus = Corpus()
    for n, row in read_jsonl(path):
        where = f"{path.name}:{n}"
        try:
            record = corpus_record(row, where, now)
        except ValueError as exc:
            corpus.skipped.append(f"{where}: {exc}")
            continue
        if isinstance(record, Ticket):
            corpus.tickets.append(record)
        else:
            corpus.articles.append(record)
    return corpus


# --- cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalCase:
    """One labelled case. `None` in an expectation means the case does not carry that field."""

    id: str
    message: str
    history: tuple[tuple[str, str], ...] = ()
    signed_in: bool = False
    plan: str | None = None  # None: anonymous, or a customer without a plan
    locale: str | None = None
    relevant: tuple[str, ...] | None = None
    answerable: bool | None = None
    intent: str | None = None
    escalate: bool | None = None
    rewrite: str | None = None
    forbidden: tuple[str, ...] | None = None
    reference: str | None = None  # a reference answer (for answer token F1)
    tags: tuple[str, ...] = ()
    source: str = ""
    conversation: str = ""  # what groups turns of one conversation (see `conversation_key`)

    @property
    def previous_message(self) -> str:
        """The customer's last non-blank message before this one ("" for a first turn)."""
        return next((t for role, t in reversed(self.history) if role == "user" and t.strip()), "")


def _ids(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value if v is not None)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def parse_case(row: Any, where: str) -> EvalCase:
    """One case line as an `EvalCase`; raises ValueError when it has no usable message."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    message = row.get("message")
    if not isinstance(message, str):
        raise ValueError("no message")
    case_id = str(row.get("id") or where)
    customer = row.get("customer")
    signed_in = isinstance(customer, dict)
    cust: dict[str, Any] = customer if isinstance(customer, dict) else {}
    history = tuple(
        (str(h["role"]), h["content"])
        for h in row.get("history") or []
        if isinstance(h, dict)
        and h.get("role") in HISTORY_ROLES
        and isinstance(h.get("content"), str)
    )
    expect = row.get("expect") if isinstance(row.get("expect"), dict) else {}
    tags = row.get("tags")
    return EvalCase(
        id=case_id,
        message=message,
        history=history,
        signed_in=signed_in,
        plan=_text(cust.get("plan")),
        locale=_text(cust.get("locale")),
        relevant=_ids(expect.get("relevant")),
        answerable=_flag(expect.get("answerable")),
        intent=_text(expect.get("intent")),
        escalate=_flag(expect.get("escalate")),
        rewrite=_text(expect.get("rewrite")),
        forbidden=_ids(expect.get("forbidden")),
        reference=_text(expect.get("reference")),
        conversation=conversation_key(history, message),
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        source=where,
    )


def conversation_key(history: Sequence[tuple[str, str]], message: str) -> str:
    """What identifies a case's conversation without any dataset-specific id format: its first
    user turn (the message itself when there is no history). Turns of one conversation share it,
    so a split by this key never puts one conversation on both sides."""
    first = next((text for role, text in history if role == "user" and text.strip()), message)
    return " ".join(first.split()).lower()


SPLITS: tuple[str, ...] = ("tune", "report")


def split_of(case: EvalCase) -> str:
    """`tune` or `report`, deterministically: the parity of the first byte of
    sha256(conversation key). Fit and tune on `tune`; quote numbers on `report`."""
    return split_of_conversation(case.conversation)


def split_of_conversation(key: str) -> str:
    """`split_of` for a `conversation_key` (for scripts that read raw rows, not `EvalCase`s)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return SPLITS[digest[0] % 2]


@dataclass
class CaseSet:
    cases: list[EvalCase] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load_cases(
    paths: Sequence[Path], limit: int | None = None, split: str | None = None
) -> CaseSet:
    """Every case of every file, in order (only those of one `split_of` part when `split` is
    given); the first `limit` of them when given."""
    out = CaseSet()
    for path in paths:
        for n, row in read_jsonl(path):
            where = f"{path.name}:{n}"
            try:
                out.cases.append(parse_case(row, where))
            except ValueError as exc:
                out.skipped.append(f"{where}: {exc}")
    if split is not None:
        if split not in SPLITS:
            raise EvalDataError(f"unknown split {split!r}; expected one of {SPLITS}")
        out.cases = [c for c in out.cases if split_of(c) == split]
    if limit is not None:
        out.cases = out.cases[: max(limit, 0)]
    return out
