"""Pure scoring rules of the docs zoo: question checks, reply scores, leak markers."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Raw template or dialect syntax a reader must never see (issue 39's leak list).
MARKERS = ("{%", "{{", ":::", "!!!", "<Tab", "--8<--", "%7B%7B")
KINDS = (
    "howto",
    "limit",
    "setting",
    "symptom",
    "comparison",
    "followup",
    "unanswerable",
)
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_EMPHASIS = re.compile(r"\*\*|__|`")


def normalise(text: str) -> str:
    """Case-folded text with one space between words, plain quotes and no bold/code marks."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split()).casefold()


def load_questions(path: Path) -> list[dict[str, Any]]:
    """The question set, one JSON object a line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def check_questions(cases: list[dict[str, Any]], docs: Path | None = None) -> list[str]:
    """Problems with a question set: shape, the required mix, and facts absent from their pages."""
    problems: list[str] = []
    ids = [c.get("id") for c in cases]
    if len(set(ids)) != len(ids):
        problems.append("duplicate ids")
    if len(cases) < 15:
        problems.append(f"{len(cases)} questions; at least 15 are needed")
    kinds = [c.get("kind") for c in cases]
    for kind, least in (("followup", 2), ("unanswerable", 2)):
        if kinds.count(kind) < least:
            problems.append(f"{kinds.count(kind)} {kind} questions; at least {least}")
    for case in cases:
        problems.extend(_case_problems(case, docs))
    return problems


def _case_problems(case: dict[str, Any], docs: Path | None) -> list[str]:
    cid, expect = case.get("id"), case.get("expect", {})
    out = []
    if case.get("kind") not in KINDS:
        out.append(f"{cid}: kind {case.get('kind')!r} is not one of {KINDS}")
    if not case.get("message") or not case.get("reference"):
        out.append(f"{cid}: message and reference are required")
    if case.get("kind") == "followup" and not case.get("history"):
        out.append(f"{cid}: a follow-up needs history")
    if expect.get("answerable") != (case.get("kind") != "unanswerable"):
        out.append(f"{cid}: expect.answerable disagrees with kind")
    if expect.get("answerable"):
        if not expect.get("page") or not 1 <= len(expect.get("facts", [])) <= 3:
            out.append(f"{cid}: an answerable question needs page(s) and 1-3 facts")
        elif docs is not None:
            out.extend(_facts_on_pages(cid, expect, docs))
    return out


def _facts_on_pages(cid: str, expect: dict[str, Any], docs: Path) -> list[str]:
    texts = []
    for page in expect["page"]:
        path = docs / page
        if not path.is_file():
            return [f"{cid}: page {page} is not in the docs folder"]
        texts.append(normalise(path.read_text(encoding="utf-8", errors="replace")))
    return [
        f"{cid}: fact {fact!r} is on none of its pages"
        for fact in expect["facts"]
        if not any(normalise(fact) in text for text in texts)
    ]


_HANDOFF = re.compile(
    r"not enough information|don't have (enough )?information|couldn't find|could not find|"
    r"connect you with|hand (you|this) over|a (person|human|colleague|member of (our|the) team)|"
    r"support team|n'ai pas (assez d')?information|pas trouvé|une personne",
    re.IGNORECASE,
)


def says_not_covered(reply: str) -> bool:
    """Whether a reply says it lacks the answer or offers a person."""
    return bool(_HANDOFF.search(reply))


# reStructuredText left raw: a role (`:ref:`x``) or a directive line (`.. note::`)
RST_MARKERS = {
    ":role:`": re.compile(r"(?<![\w`]):[a-z][\w.+-]*(?::[\w.+-]+)?:`"),
    ".. name::": re.compile(r"^\s*\.\. [\w:.+-]+::", re.MULTILINE),
}


def markers_in(text: str) -> dict[str, int]:
    """Each leak marker found in text, with its count."""
    found = {m: text.count(m) for m in MARKERS if m in text}
    found.update({k: len(p.findall(text)) for k, p in RST_MARKERS.items() if p.search(text)})
    return found


def score_reply(case: dict[str, Any], reply: str, meta: dict[str, Any]) -> dict[str, Any]:
    """Correctness of one reply against its case's expectations."""
    expect = case["expect"]
    confidence = str(meta.get("confidence"))
    escalated = bool(meta.get("escalated"))
    if expect["answerable"]:
        text = normalise(reply)
        missing = [f for f in expect["facts"] if normalise(f) not in text]
        handed_off = escalated or confidence == "none"
        correct = not missing and not handed_off
        return {"correct": correct, "missing_facts": missing, "handed_off": handed_off}
    honest = (
        confidence == "none"
        or escalated
        or (confidence not in ("strong", "weak") and says_not_covered(reply))
    )
    return {"correct": honest, "missing_facts": [], "handed_off": escalated}


def cited_pages(meta: dict[str, Any]) -> list[str]:
    """Document ids the reply cites, in order."""
    seen: list[str] = []
    for citation in meta.get("citations") or []:
        doc = str(citation.get("docId") or citation.get("slug") or "")
        if doc and doc not in seen:
            seen.append(doc)
    return seen


def page_matches(cited: Iterable[str], expected: Iterable[str], slug_of: dict[str, str]) -> bool:
    """Whether any cited document is one of the expected source files (mapped to slugs)."""
    wanted = {slug_of.get(p, p) for p in expected}
    return any(c in wanted for c in cited)
