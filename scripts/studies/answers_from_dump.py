"""The offline answerer on a sweep dump's retrievals: MT-RAG answers without re-running retrieval.

    python -m scripts.studies.answers_from_dump DUMP.jsonl [--split tune|report] [--top 5]
        [--max-words N] [--total-words N]

DUMP.jsonl is `python -m scripts.evaluation.sweep … --dump DUMP.jsonl` (each case's reranked
passages with their text). Each case's top passages get their article's section tree (rebuilt from
the corpus, as ingest stores it) and go through the offline answerer with the strong band (the
reply's body, not its hedge); the reply is scored against the case's reference as `make eval`
scores it (reference recall, token F1, median words), per domain and overall, beside the top
passage's first 512 characters (a stand-in for the naive top window). Answering only; the
retrieval is the dump's.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from statistics import mean, median

from app.ingest.sections import build_sections
from app.providers.chat import select
from app.providers.chat.base import GenerationRequest, Passage
from app.providers.chat.offline import offline_answer
from app.providers.chat.select import section_for
from scripts.evaluation.data import load_cases, load_corpus
from scripts.evaluation.metrics import reference_recall, token_f1, word_count
from scripts.measure_condense import EVAL_DIR


def passages(row: dict, docs: dict, top: int) -> list[Passage]:
    """The dump's top reranked passages, each with its article's stored section tree."""
    out = []
    for r in row["reranked"][:top]:
        a = docs.get(r["doc"])
        title = a.title if a else ""
        tree = tuple(build_sections(a.title, a.body)) if a else ()
        crumb = " › ".join([title, r.get("heading") or ""]) if r.get("heading") else title
        p = Passage(r["passage"], r["doc"], "doc", title, crumb, r["text"], tree=tree)
        section = section_for(p, tree) if tree else None
        out.append(
            Passage(p.id, p.doc_id, p.kind, title, crumb, p.text, section=section, tree=tree)
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dump", type=Path)
    ap.add_argument("--split", default=None)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--show", type=int, default=0, help="print N replies")
    ap.add_argument("--max-words", type=int, default=None, help="override max_words")
    ap.add_argument("--total-words", type=int, default=None, help="override total_words")
    args = ap.parse_args()
    if args.max_words is not None:
        select.MAX_WORDS = args.max_words  # module constants are read at call time
    if args.total_words is not None:
        select.TOTAL_WORDS = args.total_words
    corpus = load_corpus(EVAL_DIR / "mtrag_corpus.jsonl")
    docs = {a.id: a for a in corpus.articles}
    refs = {c.id: c for c in load_cases([EVAL_DIR / "mtrag_cases.jsonl"]).cases}
    rows: dict[str, list[tuple[float, float, int, float, int]]] = defaultdict(list)
    shown = 0
    for line in args.dump.open(encoding="utf-8"):
        row = json.loads(line)
        case = refs.get(row["id"])
        if args.split and row["split"] != args.split:
            continue
        if not (case and case.answerable and case.reference and row["reranked"]):
            continue
        ps = passages(row, docs, args.top)
        q = row["condensed"]
        req = GenerationRequest(
            system="",
            messages=(),
            question=q,
            original=row["message"],
            passages=ps,
            confidence="strong",
        )
        reply = offline_answer(req)
        window = " ".join(row["reranked"][0]["text"].split())[:512]
        got = (
            reference_recall(reply, case.reference),
            token_f1(reply, case.reference),
            word_count(reply),
            reference_recall(window, case.reference),
            word_count(window),
        )
        rows[row["domain"]].append(got)
        rows["all"].append(got)
        if shown < args.show:
            shown += 1
            print(f"--- {q}\n{reply}\n")
    for k, r in sorted(rows.items()):
        print(
            f"{args.split or 'both'} {k:9s} n={len(r):3d} reply recall={mean(x[0] for x in r):.3f}"
            f" f1={mean(x[1] for x in r):.3f} words={median(x[2] for x in r):5.1f} | window "
            f"recall={mean(x[3] for x in r):.3f} words={median(x[4] for x in r):5.1f}"
        )


if __name__ == "__main__":
    main()
