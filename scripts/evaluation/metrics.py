"""The metric functions of the eval harness: pure, no I/O, unit-tested with hand-computed values.

Conventions:
- A metric over zero cases is `None` (JSON null), never 0: "nothing to measure" is not "bad".
- Ranked lists are lists of source document ids, best first. They are de-duplicated in rank
  order before a cutoff is applied (`dedupe`), so two chunks of one article count once and the
  second does not push a different document out of the top k.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

H = TypeVar("H", bound=Hashable)


def dedupe(items: Iterable[H]) -> list[H]:
    """Items in first-seen order, each once."""
    return list(dict.fromkeys(items))


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int = 5) -> float | None:
    """|relevant ∩ top-k of dedupe(ranked)| / |relevant|; None when `relevant` is empty."""
    gold = set(relevant)
    if not gold:
        return None
    top = dedupe(ranked)[:k]
    return sum(1 for doc in top if doc in gold) / len(gold)


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str], k: int = 10) -> float | None:
    """1 / rank of the first relevant id within the top k of dedupe(ranked), else 0.

    Averaged over cases this is MRR@k. None when `relevant` is empty.
    """
    gold = set(relevant)
    if not gold:
        return None
    for rank, doc in enumerate(dedupe(ranked)[:k], start=1):
        if doc in gold:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the non-None values; None when there are none."""
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def share(flags: Iterable[bool]) -> float | None:
    """Fraction of True values; None for an empty input."""
    items = list(flags)
    return sum(1 for f in items if f) / len(items) if items else None


def accuracy(predicted: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of positions where the prediction equals the gold label."""
    _same_length(predicted, gold)
    return share(p == g for p, g in zip(predicted, gold, strict=True))


def f1_per_label(predicted: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """F1 of every label that occurs in `gold` (one-vs-rest; 0 when it is never predicted right).

    A prediction of a label absent from gold is a false negative for that case's gold label;
    it does not add a class of its own.
    """
    _same_length(predicted, gold)
    out: dict[str, float] = {}
    for label in sorted(set(gold)):
        tp = sum(1 for p, g in zip(predicted, gold, strict=True) if p == label and g == label)
        fp = sum(1 for p, g in zip(predicted, gold, strict=True) if p == label and g != label)
        fn = sum(1 for p, g in zip(predicted, gold, strict=True) if p != label and g == label)
        out[label] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def macro_f1(predicted: Sequence[str], gold: Sequence[str]) -> float | None:
    """Unweighted mean of `f1_per_label` over the gold labels; None for no cases."""
    return mean(f1_per_label(predicted, gold).values())


def precision_recall(
    predicted: Sequence[bool], gold: Sequence[bool]
) -> tuple[float | None, float | None]:
    """(precision, recall) of the positive class; each None when its denominator is 0."""
    _same_length(predicted, gold)
    pairs = list(zip(predicted, gold, strict=True))
    tp = sum(1 for p, g in pairs if p and g)
    fp = sum(1 for p, g in pairs if p and not g)
    fn = sum(1 for p, g in pairs if not p and g)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's
    default); None for no values."""
    data = sorted(float(v) for v in values)
    if not data:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    pos = (len(data) - 1) * q / 100.0
    low = math.floor(pos)
    high = math.ceil(pos)
    return data[low] + (data[high] - data[low]) * (pos - low)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is zero."""
    if len(a) != len(b):
        raise ValueError(f"vectors of width {len(a)} and {len(b)}")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} predictions for {len(b)} gold labels")


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]")
_CITATION = re.compile(r"\[\d+\]")


def answer_tokens(text: str) -> list[str]:
    """SQuAD normalisation: lower-case, citation markers and punctuation removed, articles
    dropped, whitespace split."""
    text = _CITATION.sub(" ", text.lower())
    text = _PUNCT.sub(" ", text)
    return _ARTICLES.sub(" ", text).split()


def token_f1(answer: str, reference: str) -> float:
    """SQuAD-style token F1 of an answer against one reference (bag-of-tokens overlap).

    Both empty scores 1; one empty scores 0.
    """
    got, gold = answer_tokens(answer), answer_tokens(reference)
    if not got or not gold:
        return float(got == gold)
    common = sum((Counter(got) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(gold)
    return 2 * precision * recall / (precision + recall)


_FUNCTION_WORDS = (
    "a an and are as at be but by can do for from has have i if in is it its of on or so that "
    "the their then there these they this to was we were what when which will with you your"
)
_REFERENCE_STOP = frozenset(_FUNCTION_WORDS.split())


def content_words(text: str) -> set[str]:
    """The distinct content words of a text (answer tokens without common function words)."""
    return {t for t in answer_tokens(text) if t not in _REFERENCE_STOP}


def reference_recall(answer: str, reference: str) -> float:
    """Share of the reference answer's content words that the answer contains (1 for a
    reference without content words)."""
    gold = content_words(reference)
    if not gold:
        return 1.0
    return len(gold & content_words(answer)) / len(gold)


def word_count(text: str) -> int:
    """Words in a reply as a reader counts them (citation markers are not words)."""
    return sum(1 for w in _CITATION.sub(" ", text).split() if any(c.isalnum() for c in w))
