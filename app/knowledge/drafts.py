"""Draft help articles from a gap cluster's resolutions (pure: no I/O).

The offline draft is extractive: the title is the cluster's label (its most central question),
"What customers asked" lists a few of the askers' questions, and "What to do" keeps the agents'
resolution sentences in the order agents wrote them, dropping near-duplicates (two agents often
give the same fix) and ranking nothing away: a person reads and edits every draft before it is
published. A language model, when configured, writes the body from the same material; the front
matter is always ours (`status: draft`, the audience of the askers), never the model's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import yaml

from app.language.text import tokenize

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        out.extend(s.strip() for s in _SENTENCE.split(para) if s.strip())
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def distinct_sentences(texts: Sequence[str], overlap: float = 0.6) -> list[str]:
    """Every sentence of `texts` in order, minus those mostly repeating an earlier one."""
    kept: list[tuple[str, set[str]]] = []
    for text in texts:
        for sentence in split_sentences(text):
            terms = set(tokenize(sentence))
            if not terms or any(_jaccard(terms, t) >= overlap for _, t in kept):
                continue
            kept.append((sentence, terms))
    return [s for s, _ in kept]


def draft_title(label: str) -> str:
    title = " ".join(label.split()).rstrip(" ?.!…")
    return (title[:1].upper() + title[1:]) if title else "Untitled draft"


def draft_slug(title: str, suffix: str) -> str:
    base = _NON_SLUG.sub("-", title.lower()).strip("-")[:60].strip("-") or "draft"
    return f"{base}-{suffix}"


def front_matter(
    *,
    title: str,
    slug: str,
    audience: str,
    locale: str,
    summary: str,
    case_refs: Sequence[str],
    now: datetime,
) -> str:
    meta = {
        "title": title,
        "slug": slug,
        "status": "draft",
        "audience": audience,
        "locale": locale,
        "category": "troubleshooting",
        "summary": summary,
        "tags": ["from-resolutions"],
        "sources": list(case_refs),
        "updatedAt": now.date().isoformat(),
    }
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{dumped}---\n"


def extractive_body(questions: Sequence[str], resolutions: Sequence[str]) -> str:
    asked = "\n".join(f"- {q}" for q in dict.fromkeys(q.strip() for q in questions if q.strip()))
    steps = distinct_sentences(resolutions)
    what = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) or "_(no resolution text)_"
    return f"## What customers asked\n\n{asked}\n\n## What to do\n\n{what}\n"


def extractive_draft(
    *,
    label: str,
    questions: Sequence[str],
    resolutions: Sequence[str],
    audience: str,
    locale: str,
    case_refs: Sequence[str],
    suffix: str,
    now: datetime,
) -> tuple[str, str]:
    """(title, markdown with front matter) for a cluster's resolutions."""
    title = draft_title(label)
    steps = distinct_sentences(resolutions)
    summary = steps[0] if steps else title
    body = extractive_body(questions, resolutions)
    head = front_matter(
        title=title,
        slug=draft_slug(title, suffix),
        audience=audience,
        locale=locale,
        summary=summary[:200],
        case_refs=case_refs,
        now=now,
    )
    return title, f"{head}\n# {title}\n\n{body}"


def with_body(markdown_head: str, title: str, body: str) -> str:
    """Front matter (ours) + a body a language model wrote."""
    return f"{markdown_head}\n# {title}\n\n{body.strip()}\n"
