"""Questions the bot could not answer well, grouped into clusters (pure: no I/O).

What counts as a gap (`gap_signals`): an answer in the weak or none band, an answer the customer
marked unhelpful, a conversation the customer said was not solved, and a handoff whose reason is
not policy. A successful tool answer (the order was found) and a policy handoff (a refund, which
the bot must never decide) are not gaps, whatever their band.

Clustering is average-linkage agglomerative over unit vectors of the condensed questions: two
groups merge while the mean cosine similarity of their members is at least `threshold`. Average
linkage does not chain the way single linkage does (two unrelated topics joined by one borderline
question) and needs no cluster count. Up to `exact_limit` questions it runs exactly (scipy's
O(n²) linkage); above that, a sample is clustered exactly and the other questions join the
cluster they are on average closest to (`cluster_labels`): 10k questions cost seconds, not
gigabytes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.intp]

POLICY_REASON = "policy"
_RUNGS = {"all": 0, "pro": 1, "enterprise": 2}
_AUDIENCE_OF_RUNG = {v: k for k, v in _RUNGS.items()}


@dataclass(frozen=True, slots=True)
class GapQuestion:
    """One unanswered question: where it was asked, by whom (rung), and why it counts."""

    key: str  # message id (or case ref): stable, identifies the question
    conversation_id: str
    question: str  # condensed question, PII masked
    at: datetime
    signals: tuple[str, ...]  # weak | none | thumbs_down | not_solved | handoff
    audience: str = "all"  # the asker's plan rung (free/anonymous → all)
    case_ref: str | None = None
    case_status: str | None = None
    resolution: str | None = None
    ticket_id: str | None = None
    locale: str = "en"


def gap_signals(
    *,
    confidence: str | None,
    escalation_reason: str | None,
    tool_found: bool,
    thumbs_down: bool,
    not_solved: bool,
    off_topic: bool = False,
) -> tuple[str, ...]:
    """Why an assistant turn is a gap; () when it is not one."""
    if escalation_reason == POLICY_REASON or off_topic:
        return ()
    signals: list[str] = []
    if confidence in ("weak", "none") and not tool_found:
        signals.append(confidence)
    if thumbs_down:
        signals.append("thumbs_down")
    if not_solved and not tool_found:
        signals.append("not_solved")
    if escalation_reason is not None:
        signals.append("handoff")
    return tuple(signals)


def _unit(vectors: Sequence[Sequence[float]] | FloatArray) -> FloatArray:
    """Rows scaled to unit length; a zero or non-finite row stays zero (similar to nothing)."""
    m = np.nan_to_num(np.asarray(vectors, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    if m.ndim != 2:
        return np.zeros((0, 0), dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.asarray(m / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _average_linkage(vectors: FloatArray, threshold: float) -> IntArray:
    """Exact average-linkage labels 0..k-1 (first appearance order) at cosine ≥ threshold."""
    n = len(vectors)
    if n <= 1:
        return np.zeros(n, dtype=np.intp)
    # cosine distances from one product (scipy's own cosine metric turns a zero row into NaN)
    dist = np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0).astype(np.float64)
    np.fill_diagonal(dist, 0.0)
    tree = linkage(squareform(dist, checks=False), method="average")
    raw = fcluster(tree, t=1.0 - threshold, criterion="distance")
    return _relabel(raw)


def _relabel(raw: npt.NDArray[np.int_]) -> IntArray:
    seen: dict[int, int] = {}
    return np.asarray([seen.setdefault(int(r), len(seen)) for r in raw], dtype=np.intp)


def cluster_labels(
    vectors: Sequence[Sequence[float]] | FloatArray,
    threshold: float,
    *,
    exact_limit: int = 3000,
    seed: int = 0,
    block: int = 4096,
) -> IntArray:
    """Cluster label per row (0..k-1, in order of first appearance).

    Above `exact_limit` rows: cluster a random sample of `exact_limit` exactly, then give every
    other row the sample cluster whose members it is most similar to on average — x · mean(C)
    is exactly x's average cosine to C's members, the quantity average linkage merges on — when
    that reaches `threshold`; rows that reach no cluster go round again (sampled from the rest),
    and the last ≤ `exact_limit` are clustered exactly. Memory O(exact_limit²), not O(n²)."""
    unit = _unit(vectors)
    n = len(unit)
    if n <= exact_limit:
        return _average_linkage(unit, threshold)
    rng = np.random.default_rng(seed)
    labels = np.full(n, -1, dtype=np.intp)
    remaining = np.arange(n, dtype=np.intp)
    offset = 0
    while len(remaining) > exact_limit:
        pick = np.sort(rng.choice(len(remaining), size=exact_limit, replace=False))
        sample = remaining[pick]
        sample_labels = _average_linkage(unit[sample], threshold)
        k = int(sample_labels.max()) + 1
        means = np.zeros((k, unit.shape[1]), dtype=np.float32)
        np.add.at(means, sample_labels, unit[sample])
        means /= np.bincount(sample_labels, minlength=k)[:, None].astype(np.float32)
        labels[sample] = offset + sample_labels
        rest = np.delete(remaining, pick)
        keep: list[IntArray] = []
        for start in range(0, len(rest), block):
            rows = rest[start : start + block]
            sims = unit[rows] @ means.T
            best = sims.argmax(axis=1)
            ok = sims[np.arange(len(rows)), best] >= threshold
            labels[rows[ok]] = offset + best[ok]
            keep.append(rows[~ok])
        offset += k
        remaining = np.concatenate(keep) if keep else np.zeros(0, dtype=np.intp)
    if len(remaining):
        labels[remaining] = offset + _average_linkage(unit[remaining], threshold)
    return _relabel(merge_clusters(unit, labels, threshold))


def merge_clusters(unit: FloatArray, labels: IntArray, threshold: float) -> IntArray:
    """Average linkage continued over existing clusters, exactly: the mean cosine between the
    members of A and B is mean(A) · mean(B), so two clusters are compared through their mean
    vectors and merged while the best pair reaches `threshold` (O(k²) memory for k clusters)."""
    k = int(labels.max()) + 1 if len(labels) else 0
    if k <= 1:
        return labels
    sums = np.zeros((k, unit.shape[1]), dtype=np.float64)
    np.add.at(sums, labels, unit)
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    means = sums / counts[:, None]
    sims = means @ means.T
    np.fill_diagonal(sims, -np.inf)
    parent = np.arange(k, dtype=np.intp)
    while True:
        flat = int(np.argmax(sims))
        i, j = divmod(flat, k)
        if sims[i, j] < threshold:
            break
        sums[i] += sums[j]
        counts[i] += counts[j]
        means[i] = sums[i] / counts[i]
        parent[j] = i
        sims[j, :] = -np.inf
        sims[:, j] = -np.inf
        row = means @ means[i]
        row[parent != np.arange(k)] = -np.inf  # merged-away clusters stay out
        row[i] = -np.inf
        sims[i, :] = row
        sims[:, i] = row
    root = parent.copy()
    while True:  # follow merges to the surviving cluster
        nxt = root[root]
        if np.array_equal(nxt, root):
            break
        root = nxt
    return np.asarray(root[labels], dtype=np.intp)


@dataclass
class GapCluster:
    id: str
    label: str
    count: int
    conversations: int
    score: float  # count, each question weighted by recency (half-life)
    first_seen: datetime
    last_seen: datetime
    audience: str  # the lowest rung among the askers: a draft for them must reach all of them
    signals: dict[str, int]
    examples: list[str]
    per_week: list[tuple[str, int]]
    cases: list[GapQuestion] = field(default_factory=list)  # the members with a handoff
    members: list[GapQuestion] = field(default_factory=list)


def truncate(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def iso_week(at: datetime) -> str:
    year, week, _ = at.isocalendar()
    return f"{year}-W{week:02d}"


def build_clusters(
    questions: Sequence[GapQuestion],
    vectors: Sequence[Sequence[float]] | FloatArray,
    *,
    now: datetime,
    threshold: float,
    half_life_days: float,
    examples: int = 5,
    example_chars: int = 160,
    label_chars: int = 90,
    exact_limit: int = 3000,
) -> list[GapCluster]:
    """Clusters ranked by recency-weighted count (then count, then latest), largest first.

    The label is the medoid (the member closest on average to the others); examples are the
    distinct questions nearest the centroid, truncated (texts arrive already PII masked)."""
    if not questions:
        return []
    unit = _unit(vectors)
    labels = cluster_labels(unit, threshold, exact_limit=exact_limit)
    groups: dict[int, list[int]] = {}
    for row, label in enumerate(labels):
        groups.setdefault(int(label), []).append(row)
    clusters = [
        _summarize(questions, unit, rows, now, half_life_days, examples, example_chars, label_chars)
        for rows in groups.values()
    ]
    clusters.sort(key=lambda c: (-c.score, -c.count, -c.last_seen.timestamp(), c.label))
    return clusters


def _summarize(
    questions: Sequence[GapQuestion],
    unit: FloatArray,
    rows: list[int],
    now: datetime,
    half_life_days: float,
    examples: int,
    example_chars: int,
    label_chars: int,
) -> GapCluster:
    members = [questions[r] for r in rows]
    vecs = unit[rows]
    centroid = vecs.mean(axis=0)
    medoid = rows[int((vecs @ vecs.T).sum(axis=1).argmax())]
    nearest = [rows[i] for i in np.argsort(-(vecs @ centroid), kind="stable")]
    shown: list[str] = []
    seen: set[str] = set()
    for r in nearest:
        text = truncate(questions[r].question, example_chars)
        if text.casefold() not in seen:
            seen.add(text.casefold())
            shown.append(text)
        if len(shown) >= examples:
            break
    ages = [max((now - m.at).total_seconds() / 86400.0, 0.0) for m in members]
    score = float(sum(0.5 ** (a / half_life_days) for a in ages)) if half_life_days > 0 else 0.0
    weeks = Counter(iso_week(m.at) for m in members)
    signals: Counter[str] = Counter(s for m in members for s in m.signals)
    rung = min(_RUNGS.get(m.audience, 0) for m in members)
    digest = hashlib.sha1(questions[medoid].key.encode()).hexdigest()[:10]
    return GapCluster(
        id=f"gc-{digest}",
        label=truncate(questions[medoid].question, label_chars),
        count=len(members),
        conversations=len({m.conversation_id for m in members}),
        score=round(score, 3),
        first_seen=min(m.at for m in members),
        last_seen=max(m.at for m in members),
        audience=_AUDIENCE_OF_RUNG[rung],
        signals=dict(sorted(signals.items())),
        examples=shown,
        per_week=sorted(weeks.items()),
        cases=[m for m in members if m.case_ref],
        members=members,
    )


def purity(labels: Sequence[int], truth: Sequence[str]) -> float:
    """Share of items whose cluster's majority true label is their own."""
    by_cluster: dict[int, Counter[str]] = {}
    for label, t in zip(labels, truth, strict=True):
        by_cluster.setdefault(int(label), Counter())[t] += 1
    total = sum(sum(c.values()) for c in by_cluster.values())
    return sum(c.most_common(1)[0][1] for c in by_cluster.values()) / total if total else 0.0


def adjusted_rand_index(labels: Sequence[int], truth: Sequence[str]) -> float:
    """ARI (Hubert & Arabie): pair agreement corrected for chance; 1 perfect, ~0 random."""
    pairs: Counter[tuple[int, str]] = Counter(zip((int(x) for x in labels), truth, strict=True))
    a: Mapping[int, int] = Counter(int(x) for x in labels)
    b: Mapping[str, int] = Counter(truth)
    n = len(truth)

    def c2(x: int) -> float:
        return x * (x - 1) / 2.0

    index = sum(c2(v) for v in pairs.values())
    sum_a = sum(c2(v) for v in a.values())
    sum_b = sum(c2(v) for v in b.values())
    expected = sum_a * sum_b / c2(n) if n > 1 else 0.0
    maximum = (sum_a + sum_b) / 2.0
    return (index - expected) / (maximum - expected) if maximum != expected else 1.0
