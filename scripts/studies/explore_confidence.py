"""Which answerability features separate answerable from unanswerable cases, and do they hold
across domains? Exploration on a sweep `--dump` (per-case retrievals), no retrieval re-run.

    python -m scripts.studies.explore_confidence reports/dump.jsonl \
        --corpus ../shared/eval/mtrag_corpus.jsonl [--features a,b,c ...]

Prints each candidate feature's rank AUC (all cases, per domain, per split) and, for feature
sets, a logistic model's held-out results under two protocols: fit on `tune` → report on
`report`, and leave-one-domain-out (fit on every other domain, report on the held-out one).
Held-out numbers use the threshold chosen on the fitted part (the lowest one at which at most
`--max-unanswerable-strong` of its unanswerable cases are strong); `halves` averages
`--halves` random conversation halves (fit on one, read the other), since one split's luck is a
case or two either way. The sentence-level candidates (`--sentences` top passages, default 10)
include self-normalising ones: the best sentence's margin over the question's own background
among the retrieved passages (`bg_*`), which do not depend on how closely a collection's texts
match questions in general.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.language.text import content_terms, sentences, term_set
from app.search.answer_types import asked_types, named_terms, shows_type
from scripts.evaluation.data import load_corpus
from scripts.evaluation.fit_confidence import fit_logistic

PRONOUNS = frozenset({"it", "its", "they", "them", "their", "this", "that", "these", "those"})


def auc(x: np.ndarray, y: np.ndarray) -> float:
    pos, neg = x[y == 1], x[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    gt = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(gt / (len(pos) * len(neg)))


async def sentence_cosines(rows: list[dict[str, Any]], top: int, coverage: float) -> None:
    """Adds the sentence-level candidates: every sentence of the top `top` passages scored as
    the `sentence` feature scores it (MiniLM cosine with the standalone question + `coverage` ×
    share of its content terms in the sentence or its heading), and

    sent_best_c/_m  best sentence of the best passage (condensed question / message as written)
    sent_top_c/_m   best sentence of the top `top` passages (cosine only)
    sent3           the `sentence` feature as the turn computes it (top 3 passages)
    sent3_ctx       the same with each sentence embedded after its heading ("Title: sentence")
    bg_weakest      sent3 minus the weakest of the top `top` passages' best sentences: a margin
                    over the question's own background in this collection (self-normalising)
    bg_median       sent3 minus the median passage's best sentence
    bg_mean         sent3 minus the mean over every sentence of the top `top` passages
    bg_top3_mean    sent3 minus the mean over the top 3 passages' sentences (no extra vectors)
    """
    from app.providers.embeddings import build_embedder
    from scripts.evaluation.runner import eval_settings
    from tuning import TUNING

    embedder = build_embedder(eval_settings(), TUNING)
    texts: list[str] = []
    for r in rows:
        for i, p in enumerate(r["reranked"][:top]):
            ss = sentences(p["text"])
            texts += ss
            if i < 3:
                texts += [f"{p['heading']}: {s}" for s in ss]
    uniq = list(dict.fromkeys(texts))
    print(f"embedding {len(uniq)} sentences", file=sys.stderr, flush=True)
    vecs: dict[str, np.ndarray] = {}
    for i in range(0, len(uniq), 128):
        batch = uniq[i : i + 128]
        for t, v in zip(batch, await embedder.embed_documents(batch), strict=True):
            vecs[t] = np.asarray(v) / (np.linalg.norm(v) or 1.0)
        if i % 1280 == 0:
            print(f"  {i}", file=sys.stderr, flush=True)
    if hasattr(embedder, "save"):
        embedder.save()
    for r in rows:
        terms = content_terms(r["condensed"])
        f = r["f"]
        for key, q in (("c", r["condensed"]), ("m", r["message"])):
            qv = np.asarray(await embedder.embed_query(q))
            qv = qv / (np.linalg.norm(qv) or 1.0)
            best_cos = [
                max((float(vecs[s] @ qv) for s in sentences(p["text"])), default=0.0)
                for p in r["reranked"][:top]
            ]
            f[f"sent_best_{key}"] = best_cos[0] if best_cos else 0.0
            f[f"sent_top_{key}"] = max(best_cos, default=0.0)
            if key != "c":
                continue
            per_passage: list[float] = []
            every: list[float] = []
            top3: list[float] = []
            ctx = 0.0
            for i, p in enumerate(r["reranked"][:top]):
                heading = term_set(p["heading"] or "")
                scores = []
                for s in sentences(p["text"]):
                    held = term_set(s) | heading
                    share = sum(1 for t in terms if t in held) / len(terms) if terms else 0.0
                    scores.append(float(vecs[s] @ qv) + coverage * share)
                    if i < 3:
                        ctx = max(ctx, float(vecs[f"{p['heading']}: {s}"] @ qv) + coverage * share)
                per_passage.append(max(scores, default=0.0))
                every += scores
                top3 += scores if i < 3 else []
            sent3 = max(per_passage[:3], default=0.0)
            f["sent3"] = sent3
            f["sent3_ctx"] = ctx
            f["bg_weakest"] = sent3 - min(per_passage, default=0.0)
            f["bg_median"] = sent3 - float(np.median(per_passage)) if per_passage else 0.0
            f["bg_mean"] = sent3 - float(np.mean(every)) if every else 0.0
            f["bg_top3_mean"] = sent3 - float(np.mean(top3)) if top3 else 0.0


def idf_table(corpus: Path) -> tuple[dict[str, float], float]:
    loaded = load_corpus(corpus)
    df: dict[str, int] = {}
    for a in loaded.articles:
        for t in term_set(f"{a.title}\n{a.body}"):
            df[t] = df.get(t, 0) + 1
    n = len(loaded.articles)
    return {t: math.log((n + 1) / (d + 0.5)) for t, d in df.items()}, math.log((n + 1) / 0.5)


def features(r: dict[str, Any], idf: dict[str, float], unseen: float) -> dict[str, float]:
    q = r["condensed"]
    rr = r["reranked"]
    scores = [p["rerank"] or 0.0 for p in rr]
    top = scores[0] if scores else 0.0
    f: dict[str, float] = dict(r["features"])
    f["top"] = top
    f["gap5"] = top - (scores[4] if len(scores) > 4 else 0.0)
    f["second"] = scores[1] if len(scores) > 1 else 0.0
    terms = content_terms(q)
    best = f"{rr[0]['heading']}\n{rr[0]['text']}" if rr else ""
    top5 = "\n".join(f"{p['heading']}\n{p['text']}" for p in rr[:5])
    bset, tset = term_set(best), term_set(top5)
    w = {t: idf.get(t, unseen) for t in terms}
    tot = sum(w.values()) or 1.0
    f["idf_cov_best"] = sum(w[t] for t in terms if t in bset) / tot if terms else 0.0
    f["idf_cov_top5"] = sum(w[t] for t in terms if t in tset) / tot if terms else 0.0
    miss_b = [w[t] for t in terms if t not in bset]
    miss_t = [w[t] for t in terms if t not in tset]
    f["miss_idf_best"] = -max(miss_b, default=0.0)
    f["miss_idf_top5"] = -max(miss_t, default=0.0)
    f["miss_idf_best_n"] = -max(miss_b, default=0.0) / (max(w.values(), default=1.0) or 1.0)
    f["n_terms_c"] = float(len(terms))
    f["breadth"] = math.log1p(len(terms))  # how many separate things the question asks about
    f["n_terms_m"] = float(len(content_terms(r["message"])))
    f["cond_changed"] = float(r["condensed"].strip() != r["message"].strip())
    dense, bm25 = r["dense"], r["bm25"]
    f["dense_top"] = dense[0]["score"] if dense else 0.0
    f["dense_gap"] = (dense[0]["score"] - dense[4]["score"]) if len(dense) > 4 else 0.0
    f["dense_bg"] = dense[-1]["score"] if dense else 0.0  # the 10th dense chunk: background
    f["agree_top1"] = float(bool(dense and bm25 and dense[0]["doc"] == bm25[0]["doc"]))
    f["agree_top5"] = len({h["doc"] for h in dense[:5]} & {h["doc"] for h in bm25[:5]}) / 5
    words = {w.strip(".,;:!?").lower() for w in r["message"].split()}
    f["pronoun_m"] = float(bool(words & PRONOUNS))
    f["best_in_dense1"] = float(bool(dense and rr and dense[0]["doc"] == rr[0]["doc"]))
    f["best_in_bm251"] = float(bool(bm25 and rr and bm25[0]["doc"] == rr[0]["doc"]))
    docs5 = [p["doc"] for p in rr[:5]]
    f["doc_repeat"] = docs5.count(docs5[0]) / 5 if docs5 else 0.0
    ents = named_terms(q)
    f["ent_cov_top5"] = sum(1 for t in ents if t in tset) / len(ents) if ents else 1.0
    asked = asked_types(q)
    f["type_top5"] = sum(1.0 for k in asked if shows_type(k, top5)) / len(asked) if asked else 0.5
    return f


def choose(p: np.ndarray, y: np.ndarray, cap: float) -> float:
    for t in np.round(np.arange(0.05, 0.99, 0.005), 3):
        if (p[y == 0] >= t).mean() <= cap:
            return float(t)
    return 0.99


def standardise(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    mu, sd = ref.mean(axis=0), ref.std(axis=0)
    return (x - mu) / np.where(sd > 0, sd, 1.0)


def evaluate(
    rows: Sequence[dict[str, Any]], names: Sequence[str], cap: float, l2: float
) -> dict[str, Any]:
    x = np.array([[r["f"][n] for n in names] for r in rows], dtype=float)
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    out: dict[str, Any] = {}
    protocols: list[tuple[str, np.ndarray, np.ndarray]] = [
        (
            "tune→report",
            np.array([r["split"] == "tune" for r in rows]),
            np.array([r["split"] == "report" for r in rows]),
        )
    ]
    for d in sorted({r["domain"] for r in rows}):
        dom = np.array([r["domain"] == d for r in rows])
        protocols.append((f"→{d}", ~dom, dom))
    for name, fit, test in protocols:
        b0, w = fit_logistic(x[fit], y[fit], l2)
        p = 1 / (1 + np.exp(-(b0 + x @ w)))
        t = choose(p[fit], y[fit], cap)
        yt, pt = y[test], p[test]
        out[name] = {
            "auc": round(auc(pt, yt), 3),
            "thr": t,
            "strong_ans": round(float((pt[yt == 1] >= t).mean()), 3),
            "strong_unans": round(float((pt[yt == 0] >= t).mean()), 3),
            "fit_strong_ans": round(float((p[fit][y[fit] == 1] >= t).mean()), 3),
        }
    return out


def random_halves(
    rows: Sequence[dict[str, Any]], names: Sequence[str], cap: float, l2: float, n: int
) -> dict[str, float]:
    """Fit on a random half of the conversations, read the other half, `n` times: one split's
    luck is a case or two either way, so compare feature sets on the average (and on how often
    both targets, strong/answerable ≥ 0.60 and strong/unanswerable ≤ 0.10, are met)."""
    x = np.array([[r["f"][k] for k in names] for r in rows], dtype=float)
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    conversation = np.array([r["id"].split("<::>")[0] for r in rows])
    ids = np.unique(conversation)
    rng = np.random.default_rng(0)
    got: dict[str, list[float]] = {"auc": [], "strong_ans": [], "strong_unans": [], "met": []}
    for _ in range(n):
        fit = np.isin(conversation, rng.choice(ids, size=len(ids) // 2, replace=False))
        b0, w = fit_logistic(x[fit], y[fit], l2)
        p = 1 / (1 + np.exp(-(b0 + x @ w)))
        t = choose(p[fit], y[fit], cap)
        yt, pt = y[~fit], p[~fit]
        sa, su = float((pt[yt == 1] >= t).mean()), float((pt[yt == 0] >= t).mean())
        got["auc"].append(auc(pt, yt))
        got["strong_ans"].append(sa)
        got["strong_unans"].append(su)
        got["met"].append(float(sa >= 0.6 and su <= 0.1))
    return {k: round(float(np.mean(v)), 3) for k, v in got.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.studies.explore_confidence")
    parser.add_argument("dump", type=Path)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=10, help="top passages for sent_*")
    parser.add_argument("--coverage", type=float, default=0.3, help="`sentence` coverage weight")
    parser.add_argument("--max-unanswerable-strong", type=float, default=0.075)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--sets", nargs="*", default=[], help="comma-separated feature sets")
    parser.add_argument("--halves", type=int, default=200, help="random conversation halves")
    parser.add_argument("--save", type=Path, default=None, help="write rows with features")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.dump.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["answerable"] is not None]
    idf, unseen = idf_table(args.corpus)
    for r in rows:
        r["f"] = features(r, idf, unseen)
    if args.sentences:
        asyncio.run(sentence_cosines(rows, args.sentences, args.coverage))
    if args.save:
        args.save.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    groups = {"all": np.ones(len(rows), bool)}
    for key in ("domain", "split"):
        for v in sorted({r[key] for r in rows}):
            groups[v] = np.array([r[key] == v for r in rows])
    print("feature".ljust(18) + "".join(g.rjust(10) for g in groups))
    for name in sorted(rows[0]["f"]):
        x = np.array([r["f"][name] for r in rows], dtype=float)
        print(name.ljust(18) + "".join(f"{auc(x[m], y[m]):10.3f}" for m in groups.values()))
    for spec in args.sets:
        names = spec.split(",")
        print(f"\n{spec}")
        for proto, res in evaluate(rows, names, args.max_unanswerable_strong, args.l2).items():
            print(f"  {proto:14} {res}")
        if args.halves:
            halves = random_halves(rows, names, args.max_unanswerable_strong, args.l2, args.halves)
            print(f"  {'halves':14} {halves}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
