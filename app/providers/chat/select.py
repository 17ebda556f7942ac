"""Answers chosen from a document's structure: the best block(s) of the best section. Pure.

`select_answer` is the offline answer (`offline.extract_answer`); `passage_text` feeds the
language-model prompt with the same scoring (each numbered passage is its section's selected
blocks under its heading path).

Each passage stands for one section of its article (the stored section tree, attached by the turn;
else the tree of the passage's own text). Every block of every candidate section is scored by the
question's content terms it holds (IDF-weighted over the candidates, stemmed, through the tenant's
product names and synonyms), the terms its heading path holds, whether it shows a value of the
answer type asked for (`app.search.answer_types`; a count may be written out; a setting asked for
is a name written as code) and, for a how-to, whether it is a list of steps (and, when some block
names what the how-to asks to do, only the blocks that do); the reranker's order weighs each
passage, and of blocks that score alike the higher-ranked passage's, then the earlier block, goes
first. The best block is then quoted as its kind reads: a list whole (bounded, the rest pointed
to), the table rows the question names with their column names (or the table), the sentence holding
the asked value, a paragraph with its neighbours while they still answer (for a problem or a
how-to, its section from the start when that fits the reply), code with the line that leads into
it. Nothing is written that is not in the document except the lead-in (the section's heading
path) and its citation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from app.ingest.sections import build_sections
from app.language.lexicon import lexicon, matcher
from app.language.utterance import reports_a_problem
from app.providers.chat.base import PassageLike
from app.providers.chat.offline import ENGLISH, Reading, product_terms, synonym_terms, terms
from app.safety.screen import without_instructions
from app.search.answer_types import (
    asked_types,
    asks_for_steps,
    capability_terms,
    frame_terms,
    shows_type,
)
from app.store.models import Block
from app.text import Phrases, phrase
from tuning import TUNING

PATH_SEP = " › "
# The knobs live in tuning.py (`AnswerSelection`, with how each was chosen); bound here once.
_K = TUNING.answer_selection
MAX_WORDS, MAX_ITEMS, MAX_ROWS, MAX_CODE_LINES = (
    _K.max_words, _K.max_items, _K.max_rows, _K.max_code_lines
)  # fmt: skip
RANK_DECAY, TOTAL_WORDS, OTHER_SUPPORT, SIBLING_RANK = (
    _K.rank_decay, _K.total_words, _K.other_support, _K.sibling_rank
)  # fmt: skip
HEADING_WEIGHT, TYPE_BONUS, STEPS_BONUS, LEAD_IN_FACTOR = (
    _K.heading_weight, _K.type_bonus, _K.steps_bonus, _K.lead_in_factor
)  # fmt: skip
CLOSING_WORDS, LEAD_IN_WORDS, CODE_FACTOR, TAB_FACTOR = (
    _K.closing_words, _K.lead_in_words, _K.code_factor, _K.tab_factor
)  # fmt: skip
RUN_ON_WORDS, SUPPORT, HEADED, STEPS_SHARE = _K.run_on_words, _K.support, _K.headed, _K.steps_share
_VALUE_TYPES = ("price", "duration", "quantity", "date")

_SENTENCE = re.compile(r"(?<=[.!?])[\"'”’)]?\s+(?=[\"“(\[]?[A-Z0-9])")
_LOWER_ABBREVIATIONS = frozenset({"vs", "approx", "incl", "cf", "ca", "resp"})
_ANCHOR_LINK = re.compile(r"\]\([^)\s#]*#([\w-]+)\)")  # a link to a section (of the same page)
_CLOSED = re.compile(r"[.!?:;][\"'”’)]?\s*$")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)\s]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_LIST_LINE = re.compile(r"(?:[-*+•]|\d{1,2}[.)])\s")
_JOINER = re.compile(r"(?:[,;]|,? (?:or|and))$")  # "- at the front desk, or": a list item
_EMPHASIS = re.compile(r"\*\*|__|(?<!`)`(?!`)")


@dataclass(frozen=True)
class Candidate:
    """One passage's section: where it sits and the blocks it holds."""

    rank: float  # the passage's rank, or lower for another section of its article
    title: str
    path: tuple[str, ...]
    anchor: str
    blocks: tuple[Block, ...]
    passage: int = 0  # the passage (0-based) a citation names
    headless: bool = False  # its page has no headings: the page's title heads all of it

    @property
    def lead(self) -> str:
        """The section's heading path, under its article's title."""
        path = [p for p in self.path if p != self.title]  # a page whose heading repeats its title
        return PATH_SEP.join([self.title, *path]) if self.title else PATH_SEP.join(path)


@dataclass(frozen=True)
class Choice:
    """What the answer quotes: blocks of one candidate, table rows or one paragraph's sentences."""

    candidate: Candidate
    blocks: tuple[int, ...]
    score: float
    rows: tuple[int, ...] = ()
    sentences: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # the other causes a problem's section sits among (their headings)


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph; a period after an abbreviation, inside a version or a
    decimal ("v1.2", "3.5") ends none."""
    out: list[str] = []
    for piece in _SENTENCE.split(" ".join(text.split())):
        if out and _abbreviated(out[-1]):
            out[-1] += " " + piece
        elif piece:
            out.append(piece)
    return out


def _abbreviated(sentence: str) -> bool:
    """The piece ends in an abbreviation: a dotted one ("e.g."), a short capitalised one ("Sep.",
    "Dr.") or one of the few lower-case ones."""
    core = sentence.rsplit(" ", 1)[-1]
    if not core.endswith("."):
        return False
    core = core[:-1].lstrip("(")
    if "." in core and core.replace(".", "").isalpha():
        return True
    titled = core[:1].isupper() and core[1:].islower() and core.isalpha()
    return (titled and len(core) <= 3) or core.lower() in _LOWER_ABBREVIATIONS


def clean(text: str) -> str:
    """Markdown inline markup as a chat shows it: link text (with its URL when external), no
    images, no emphasis markers."""

    def link(m: re.Match[str]) -> str:
        target = m.group(2)
        return (
            f"{m.group(1)} ({target})" if target.startswith(("http://", "https://")) else m.group(1)
        )

    text = _EMPHASIS.sub("", _LINK.sub(link, _IMAGE.sub("", text)))
    return "\n".join(" ".join(line.split()) for line in text.splitlines()).strip()


# ----------------------------------------------------------------------------- candidates


def candidates(
    passages: Sequence[PassageLike], named: frozenset[str] = frozenset()
) -> list[Candidate]:
    """Each passage's section once (two chunks of one section are one candidate, ranked first),
    then the other sections of those articles: ranked one below their passage when their own
    headings name one of the `named` terms, else `SIBLING_RANK` below it."""
    out: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    siblings: list[Candidate] = []
    for rank, p in enumerate(passages):
        for c in _own(rank, p):
            if (p.doc_id, c.anchor or c.lead) not in seen and c.blocks:
                seen.add((p.doc_id, c.anchor or c.lead))
                out.append(c)
    for rank, p in enumerate(passages):
        for s in getattr(p, "tree", ()) or ():
            c = _sibling(rank, p, s, named)
            if (p.doc_id, c.anchor or c.lead) not in seen and c.blocks:
                seen.add((p.doc_id, c.anchor or c.lead))
                siblings.append(c)
    return out + siblings


def _screened(blocks: Sequence[Block]) -> tuple[Block, ...]:
    """Stored blocks with any instruction-like text removed, as every passage's text is."""
    out = []
    for b in blocks:
        items = [without_instructions(i) for i in b.items] if b.items else b.items
        rows = [[without_instructions(c) for c in r] for r in b.rows] if b.rows else b.rows
        text = without_instructions(b.text)
        if text.strip():
            out.append(b.model_copy(update={"text": text, "items": items, "rows": rows}))
    return tuple(out)


def _sibling(rank: int, p: PassageLike, section: Any, named: frozenset[str]) -> Candidate:
    path, blocks = tuple(section.path), _screened(section.blocks)
    says = bool(named & _terms(" ".join(path), ENGLISH))
    return Candidate(
        rank + (1 if says else SIBLING_RANK), p.title, path, section.anchor, blocks, rank
    )


def section_for(passage: PassageLike, sections: Sequence[Any]) -> Any:
    """The stored section a passage was cut from: heading path equal to its breadcrumb's (below
    the title), and of those the one whose blocks' opening words its text carries most of."""
    path = [x.strip() for x in passage.breadcrumb.split("›")[1:]]
    same = [s for s in sections if list(s.path) == path]
    if len(same) < 2:
        return same[0] if same else None
    said = " ".join(passage.text.split())

    def carried(section: Any) -> int:
        return sum(1 for b in section.blocks if " ".join(b.text.split())[:40] in said)

    return max(same, key=carried)


def _own(rank: int, p: PassageLike) -> list[Candidate]:
    """The passage's own section: the stored one, else each section of its own text."""
    section = getattr(p, "section", None)
    if section is not None:
        path, blocks = tuple(section.path), _screened(section.blocks)
        tree = getattr(p, "tree", ()) or (section,)
        headless = all(list(s.path) in ([], [p.title]) for s in tree)
        return [Candidate(rank, p.title, path, section.anchor, blocks, rank, headless)]
    crumbs = tuple(x.strip() for x in p.breadcrumb.split("›")[1:]) if p.breadcrumb else ()
    parsed = _parsed(p.kind, p.title, p.text)
    headless = not crumbs and all(not path for path, _ in parsed)
    return [
        Candidate(rank, p.title, _under(crumbs, tuple(path)), "", blocks, rank, headless)
        for path, blocks in parsed
    ]


def _under(crumbs: tuple[str, ...], path: tuple[str, ...]) -> tuple[str, ...]:
    """A passage's own heading path, placed under its breadcrumb ("Repeating orders" cut from
    "Placing an order › Repeating orders" keeps the heading above it)."""
    if not path:
        return crumbs
    return crumbs[: crumbs.index(path[0])] + path if path[0] in crumbs else path


@lru_cache(maxsize=4096)
def _parsed(
    kind: str, title: str, text: str
) -> tuple[tuple[tuple[str, ...], tuple[Block, ...]], ...]:
    """The sections of a passage's own text (a ticket's fix, or a chunk with no stored tree)."""
    reported = ""
    if kind == "ticket":  # the fix is what answers; the reported symptom says what it fixes
        reported, sep, fix = text.partition("Resolution:")
        text, reported = (fix.strip(), " ".join(reported.split())) if sep else (text, "")
    text = without_instructions(text)
    out = []
    for s in build_sections(title, text):
        blocks = tuple(
            b.model_copy(update={"label": reported}) if reported else b for b in s.blocks
        )
        if blocks:
            out.append((tuple(s.path), blocks))
    return tuple(out)


# ----------------------------------------------------------------------------- scoring


def block_text(block: Block) -> str:
    """What a block says, as plain words (a tab panel with its label)."""
    return f"{block.label} {block.text}" if block.label else block.text


@dataclass(frozen=True)
class _Asked:
    terms: frozenset[str]
    weights: dict[str, float]
    types: tuple[str, ...]
    steps: bool
    subject: frozenset[str] = frozenset()  # the tenant's products the question names
    action: str = ""  # a how-to's action, when a candidate block names it
    problem: bool = False  # the customer reports a problem ("my card keeps getting declined")

    @property
    def total(self) -> float:
        return sum(self.weights.get(t, 0.0) for t in self.terms) or 1.0

    def cover(self, said: frozenset[str]) -> float:
        return sum(self.weights.get(t, 0.0) for t in self.terms & said)

    def cover_all(self, said: frozenset[str]) -> float:
        """As `cover`, counting the words that only frame the answer type too."""
        return sum(self.weights.get(t, 0.0) for t in said)


@lru_cache(maxsize=16384)
def _terms(text: str, reading: Reading) -> frozenset[str]:
    return frozenset(terms(text, reading) | synonym_terms(text, reading))


@lru_cache(maxsize=16384)
def _said(text: str, reading: Reading) -> frozenset[str]:
    """What a passage's text covers: its terms, those of each word joined in camel case
    ("MacOS" says "Mac"), and the other verbs of each action it names (the language's
    `equivalent_actions`: "Replacing the batteries" covers "change")."""
    said = _terms(text, reading) | terms(" ".join(_camel_parts(text)), reading)
    extra = [g for g in _actions(reading.language) if g & said]
    return said.union(*extra) if extra else said


def _camel_parts(text: str) -> list[str]:
    """The parts of each word written in camel case, split where a capital follows a small
    letter ("MacOS" → "Mac", "OS"; "iPhone" is one word: a capital starts each part)."""
    out: list[str] = []
    for word in text.split():
        cuts = [i for i in range(1, len(word)) if word[i].isupper() and word[i - 1].islower()]
        if cuts and word[0].isupper():
            out += [word[a:b] for a, b in pairwise([0, *cuts, len(word)])]
    return out


@lru_cache(maxsize=8)
def _actions(language: str) -> tuple[frozenset[str], ...]:
    groups = lexicon(language).get("equivalent_actions") or []
    return tuple(frozenset(terms(g, Reading(language))) for g in groups)


def _asked(question: str, cands: Sequence[Candidate], reading: Reading) -> _Asked:
    """The question's terms, weighted by how rare they are among the candidates' blocks."""
    frame = _terms(" ".join(frame_terms(question) | capability_terms(question)), reading)
    every = _terms(question, reading)
    asked = every - frame
    # a block is read under its headings, so a word of a heading is as common as the blocks
    # it heads (a FAQ heading's "week" is no rarer than the booking steps' "desk")
    docs = [
        _terms(f"{PATH_SEP.join(c.path)} {block_text(b)}", reading) for c in cands for b in c.blocks
    ]
    n = max(len(docs), 1)
    weights = {t: math.log(1 + n / (1 + sum(1 for d in docs if t in d))) + 0.1 for t in every}
    subject = frozenset(product_terms(question, reading)) & asked
    # a problem reported ("my tracker isn't updating"), also before a question ("The printer
    # stopped printing. Any ideas?"), is answered by the steps that fix it
    problem = any(reports_a_problem(s) for s in sentences(question))
    steps = asks_for_steps(question) or problem
    # a how-to asks for steps, not a value ("book a desk for next week" asks no duration)
    asked_for = [] if asks_for_steps(question) else asked_types(question)
    types = tuple(t for t in asked_for if t in _VALUE_TYPES)
    types += ("setting",) if _SETTING.search(question) else ()
    action = _action(question, frozenset(asked), cands, reading)
    return _Asked(frozenset(asked), weights, types, steps, subject, action, problem)


def _action(
    question: str, asked: frozenset[str], cands: Sequence[Candidate], reading: Reading
) -> str:
    """What a how-to asks to do: the first word asked from where it asks how ("lance" in
    "Comment je lance …", "fix" in "… SSO fails, how do we fix it?"), when a candidate block or
    its headings name it; else ""."""
    how = _STEPS.search(question)
    if how is None:
        return ""
    words = (t for w in question[how.start() :].split() for t in sorted(terms(w, reading)))
    first = next((t for t in words if t in asked), "")
    said = (_said(f"{c.lead} {block_text(b)}", reading) for c in cands for b in c.blocks)
    return first if first and any(first in s for s in said) else ""


def _score(asked: _Asked, cand: Candidate, k: int, reading: Reading) -> float:
    block = cand.blocks[k]
    said = _said(block_text(block), reading)
    titled = _said(cand.lead, reading)
    # a page without headings is headed by its title, as a section is by its heading (on a page
    # with headings the title is every section's topic, and heads none of them more)
    path = _said(PATH_SEP.join((cand.title,) if cand.headless else cand.path), reading)
    typed = bool(asked.types) and any(_shows(t, block.text) for t in asked.types)
    # a table whose column the question names (not the product it is about, nor the headings)
    # lists what is asked
    named = _said(" ".join(block.header or []), reading) - path - asked.subject
    typed = typed or bool(asked.terms & named)
    beyond = asked.terms - asked.subject
    if asked.subject and beyond and not (said | path) & beyond and not typed:
        return 0.0  # it names the product asked about, and nothing that is asked of it
    if asked.action and asked.action not in said | titled:
        return 0.0  # a how-to is answered where what it asks to do is named (its page's title too)
    score = asked.cover(said | titled) + HEADING_WEIGHT * asked.cover_all(path)
    steps = block.ordered or (block.kind == "tab" and shows_type("procedure", block.text))
    steps = steps or (block.kind == "paragraph" and _instructs(block.text, reading))
    steps = asked.steps and (steps or _leads_into(cand, k, "list"))
    if typed and said & asked.terms:
        score += TYPE_BONUS * asked.total  # it shows the kind of value asked for
    if steps:
        score += STEPS_BONUS * asked.cover(titled)  # steps for what the section is about
    if block.kind == "code":
        score *= CODE_FACTOR  # a response body or a command supports no prose answer
    labelled = _terms(block.label or "", reading) & asked.terms
    if block.kind == "tab" and _PLATFORM.search(block.label or "") and not labelled:
        score *= TAB_FACTOR  # one platform's panel, for a question that names no platform
    if cand.blocks[k].text.rstrip().endswith(":") and _leads_into(cand, k) and not asked.steps:
        score *= LEAD_IN_FACTOR  # "… the API returns:" is said whole by a statement on a tie
    return score / asked.total / (1 + RANK_DECAY * cand.rank)


def _shows(kind: str, text: str) -> bool:
    """The text holds a value of the asked kind (`shows_type`; a setting's name is written as
    code, "`DARK_MODE=true`")."""
    if kind == "setting":
        return text.count("`") >= 2
    return shows_type(kind, text)


_STEPS = matcher("asks.steps")
_PLATFORM = matcher("platforms")  # what a tab is named by when it is one platform's variant
_SETTING = matcher("asks.setting")


def _instructs(text: str, reading: Reading) -> bool:
    """A paragraph that opens with an instruction ("Go to Settings …", "Click Export …"): a
    step written as prose, by the language's `shows.procedure` verbs."""
    opening = " ".join(clean(text).split()[:3]).casefold() + " "
    return any(opening.startswith(verb + " ") for verb in _instructions(reading.language))


@lru_cache(maxsize=8)
def _instructions(language: str) -> tuple[str, ...]:
    shown = (lexicon(language).get("shows") or {}).get("procedure") or []
    return tuple(str(v).casefold() for v in shown if not set(str(v)) & set("#/*"))


def _leads_into(cand: Candidate, k: int, *kinds: str) -> bool:
    """Block k is a line that introduces the next block: it ends with a colon ("Use these
    shortcuts:"), or it is a short paragraph opening its section right before a list ("If the
    tracker does not update, follow the steps below to check your settings.")."""
    nxt = cand.blocks[k + 1] if k + 1 < len(cand.blocks) else None
    here = cand.blocks[k]
    if here.kind != "paragraph" or nxt is None or (kinds and nxt.kind not in kinds):
        return False
    opening = k == 0 and nxt.kind == "list" and len(here.text.split()) <= LEAD_IN_WORDS
    return here.text.rstrip().endswith(":") or opening


def best_choice(
    question: str, passages: Sequence[PassageLike], reading: Reading = ENGLISH
) -> Choice | None:
    """The best block of the best section for the question, grown as its kind reads."""
    found = choices(question, passages, reading)
    return found[0] if found else None


def choices(
    question: str, passages: Sequence[PassageLike], reading: Reading = ENGLISH
) -> list[Choice]:
    """The best block of the best section, grown as its kind reads; then, while the reply stays
    within `TOTAL_WORDS`, the best prose block of each other section that scores at least
    `OTHER_SUPPORT` of it (a reference answer often joins two passages)."""
    cands = candidates(passages, _terms(question, reading))
    if not cands:
        return []
    asked = _asked(question, cands, reading)
    scored = _ranked(asked, cands, reading)
    if scored[0][0] <= 0 and asked.action:  # the blocks naming the action answer nothing else
        asked = replace(asked, action="")
        scored = _ranked(asked, cands, reading)
    best, _, _, cand, k = scored[0]
    if best <= 0:
        return []
    out = [_grown(asked, cand, k, best, reading)]
    if asked.problem and (also := _other_causes(cand, passages)):
        return [replace(out[0], also=also)]
    if out[0].rows or cand.blocks[k].kind != "paragraph":
        return out  # a list, table or code answers whole
    steps = _referred_steps(out[0], cands) if asked.steps else None
    if steps is not None:  # "… following the instructions in [Managing it](#managing-it)."
        return [*out, _grown(asked, steps[0], steps[1], best, reading, whole=False)]
    if asked.types and any(_shows(t, _quoted(out[0])) for t in asked.types):
        return out  # the value asked for, in its sentence
    words = _words(out[0])
    # what the best section's headings name of the question: another section must say it too
    # (under "Blinking yellow", the "Blinking red" section answers another question)
    named = asked.terms & _terms(PATH_SEP.join(cand.path), reading)
    for score, _, _, other, j in scored[1:]:
        if score < OTHER_SUPPORT * best:
            break
        if any(c.candidate == other for c in out) or other.blocks[j].kind != "paragraph":
            continue
        if not named <= _terms(f"{PATH_SEP.join(other.path)} {other.blocks[j].text}", reading):
            continue
        more = _grown(asked, other, j, score, reading, whole=False)
        if words + _words(more) > TOTAL_WORDS or _quoted(more) in {_quoted(c) for c in out}:
            continue  # too long, or the same text from another copy of the page
        out.append(more)
        words += _words(more)
    return out


def _other_causes(cand: Candidate, passages: Sequence[PassageLike]) -> tuple[str, ...]:
    """The headings of the other sub-sections under the chosen section's parent heading, in the
    page's order, when that heading itself reports a problem ("Why did my payment fail?") and
    at least two others sit under it, none a question: a problem's answer is the cause that
    matches and the others the page lists. () for a top-level section (a page's sections are
    its topics) and under any other heading ("Configure your DNS" heads steps, an FAQ's
    questions are topics too)."""
    if len(cand.path) < 2 or cand.passage >= len(passages):
        return ()
    if not reports_a_problem(cand.path[-2]):
        return ()
    parent = tuple(cand.path[:-1])
    tree = getattr(passages[cand.passage], "tree", ()) or ()
    heads = [
        s.path[-1]
        for s in tree
        if len(s.path) == len(cand.path) and tuple(s.path[:-1]) == parent and s.blocks
    ]
    others = [clean(h) for h in heads if h != cand.path[-1]]
    if len(others) < 2 or any(h.rstrip().endswith("?") for h in others):
        return ()
    return tuple(others[:MAX_ITEMS])


def _referred_steps(choice: Choice, cands: Sequence[Candidate]) -> tuple[Candidate, int] | None:
    """The numbered steps of another section of the same page that the chosen text links to
    (a how-to whose section says "follow the instructions in …"): (section, list block)."""
    anchors = _ANCHOR_LINK.findall(_quoted(choice))
    for c in cands:
        if c.title == choice.candidate.title and c.anchor and c.anchor in anchors:
            k = next((j for j, b in enumerate(c.blocks) if b.ordered), None)
            if k is not None and c != choice.candidate:
                return c, k
    return None


def _ranked(asked: _Asked, cands: Sequence[Candidate], reading: Reading) -> list[Any]:
    """Every block by score, best first; for a how-to, the best procedure within `STEPS_SHARE`
    of the best block goes first (a how-to is answered by its steps, not by what the feature is)."""
    scored = sorted(
        (
            (_score(asked, c, k, reading), -c.rank, -k, c, k)
            for c in cands
            for k in range(len(c.blocks))
        ),
        key=lambda s: (round(s[0], 9), *s[1:3]),
        reverse=True,
    )
    if not asked.steps or not scored or scored[0][0] <= 0:
        return scored
    for i, (score, _, _, c, k) in enumerate(scored):
        if score < STEPS_SHARE * scored[0][0]:
            break
        if _procedural(asked, c, k, reading):
            return [scored[i], *scored[:i], *scored[i + 1 :]]
    return scored


def _procedural(asked: _Asked, cand: Candidate, k: int, reading: Reading) -> bool:
    """Block k is (part of) a procedure: numbered steps, a tab panel of steps, the line leading
    into numbered steps, or a paragraph of a section written as steps in prose."""
    block = cand.blocks[k]
    if block.ordered or (block.kind == "tab" and shows_type("procedure", block.text)):
        return True
    if _leads_into(cand, k, "list") and cand.blocks[k + 1].ordered:
        return True
    return bool(_prose_procedure(asked, cand, k)) and any(
        b.kind == "paragraph" and _instructs(b.text, reading) for b in cand.blocks
    )


def _quoted(choice: Choice) -> str:
    """The words a choice quotes, for comparing two choices."""
    if choice.sentences:
        return " ".join(choice.sentences)
    return " ".join(" ".join(choice.candidate.blocks[k].text.split()) for k in choice.blocks)


def _words(choice: Choice) -> int:
    if choice.sentences:
        return sum(len(s.split()) for s in choice.sentences)
    return sum(_size(choice.candidate.blocks[k]) for k in choice.blocks)


def _size(block: Block) -> int:
    """A block's words; a list's are its items' ("1.", "-" are no words)."""
    return sum(len(i.split()) for i in block.items) if block.items else len(block.text.split())


def _grown(
    asked: _Asked, cand: Candidate, k: int, best: float, reading: Reading, whole: bool = True
) -> Choice:
    """The chosen block with what belongs to it: its lead-in line and what that line leads into,
    the rows or sentence that hold the asked value, or neighbouring paragraphs that answer too;
    the best section (`whole`) read from its start when it fits."""
    block = cand.blocks[k]
    prose = _prose_procedure(asked, cand, k)
    if prose:
        return Choice(cand, prose, best)
    # a problem or a how-to is answered by the best section from its start when it fits whole:
    # the cause comes before the fix, and a second way of doing it after the first (a tab
    # panel answers for its own platform only)
    own = _from_start(cand) if whole and asked.steps and not asked.types else ()
    if k in own and block.kind != "tab":
        return Choice(cand, own, best)
    if _leads_into(cand, k):
        return Choice(cand, (k, k + 1), best)
    if block.kind in ("list", "code", "table") and k > 0 and _leads_into(cand, k - 1):
        chosen: tuple[int, ...] = (k - 1, k)
    else:
        chosen = (k,)
    if block.ordered and _closes(cand, k + 1):
        chosen = (*chosen, k + 1)  # "The Gadget shows a green light once it is paired."
    if block.kind == "table":
        return Choice(cand, chosen, best, rows=_rows(asked, cand, block, reading))
    if block.kind != "paragraph":
        return Choice(cand, chosen, best)
    # under a heading that says what the question says (a symptom, an FAQ's question) the
    # paragraph is read from its first sentence
    headed = _headed(asked, cand.path, reading)
    said = _sentences_of(asked, block.text, reading, headed)
    if said:
        return Choice(cand, chosen, best, sentences=said)
    chosen = _neighbours(asked, cand, k, best, reading)
    if _asks(block) and k + 1 < len(cand.blocks) and chosen[-1] == k:
        chosen = (*chosen, k + 1)  # an FAQ's question: its answer is the block under it
    if _leads_into(cand, chosen[-1]):  # the paragraphs end in "… the shortcuts are:"
        chosen = (*chosen, chosen[-1] + 1)
    elif headed and chosen[0] == 0 and (more := _continued(cand, chosen)):
        # the heading asks what the customer asks: its answer reads on from the start while it
        # fits, into the next paragraph's opening sentences
        said = tuple(s for j in chosen for s in sentences(cand.blocks[j].text))
        return Choice(cand, chosen, best, sentences=(*said, *more))
    return Choice(cand, chosen, best)


def _continued(cand: Candidate, chosen: tuple[int, ...]) -> tuple[str, ...]:
    """The opening sentences of the paragraph after `chosen` that fit `MAX_WORDS` with it."""
    j = chosen[-1] + 1
    if j >= len(cand.blocks) or cand.blocks[j].kind != "paragraph":
        return ()
    words = sum(_size(cand.blocks[i]) for i in chosen)
    out: list[str] = []
    for s in sentences(cand.blocks[j].text):
        words += len(s.split())
        if words > MAX_WORDS:
            break
        out.append(s)
    return tuple(out)


def _headed(asked: _Asked, path: Sequence[str], reading: Reading) -> bool:
    return asked.cover(_terms(PATH_SEP.join(path), reading)) >= HEADED * asked.total


def _from_start(cand: Candidate) -> tuple[int, ...]:
    """The section's opening that fits `TOTAL_WORDS` (`_opening`); () when the section is its
    article's only one (its heading the title)."""
    if not cand.path or cand.path[-1] == cand.title:
        return ()
    return _opening(cand, TOTAL_WORDS)


def _prose_procedure(asked: _Asked, cand: Candidate, k: int) -> tuple[int, ...]:
    """A how-to answered by a section with no numbered steps reads it in the document's order:
    its blocks from the first while they fit `MAX_WORDS` ("Click on “New” … Enter a name …"),
    when they reach the best block k (else () and the block is grown as its kind reads)."""
    if not asked.steps or any(
        b.ordered or b.kind in ("code", "table", "tab") or _asks(b) for b in cand.blocks
    ):
        return ()  # numbered steps, code, tables, tabs and FAQ questions are read as they are
    chosen = _opening(cand, MAX_WORDS)
    return chosen if k in chosen else ()


def _opening(cand: Candidate, limit: int) -> tuple[int, ...]:
    """The section's blocks from its first, in the document's order, while they fit `limit`
    words; () when that is a single block."""
    chosen, words = [], 0
    for j, b in enumerate(cand.blocks):
        words += _size(b)
        if words > limit:
            break
        chosen.append(j)
    if chosen and chosen[-1] + 1 < len(cand.blocks) and _leads_into(cand, chosen[-1]):
        chosen.pop()  # "To reset it instead:" without the list it introduces says nothing
    return tuple(chosen) if len(chosen) > 1 else ()


def _asks(block: Block) -> bool:
    """A one-line paragraph that is a question: an FAQ entry's heading written as text."""
    text = block.text.strip()
    return block.kind == "paragraph" and "\n" not in text and text.endswith("?")


def _closes(cand: Candidate, k: int) -> bool:
    """Block k is a short last paragraph after a procedure: what happens once it is done."""
    last = k == len(cand.blocks) - 1
    block = cand.blocks[k] if k < len(cand.blocks) else None
    return (
        block is not None
        and last
        and block.kind == "paragraph"
        and (len(block.text.split()) <= CLOSING_WORDS)
    )


def _sentences_of(
    asked: _Asked, text: str, reading: Reading, from_start: bool = False
) -> tuple[str, ...]:
    """For a value question, the sentence holding a value of the asked type that says most of
    the question; for a paragraph too long to quote, the run of sentences from the best one (or
    `from_start`, from its first)."""
    parts = sentences(text)
    if len(parts) < 2:
        return ()
    scored = [(asked.cover(_terms(s, reading)), -i) for i, s in enumerate(parts)]
    if asked.types:
        typed = [i for i, s in enumerate(parts) if any(_shows(t, s) for t in asked.types)]
        if typed:
            i = max(typed, key=lambda i: scored[i])
            return (parts[i],)
    if len(text.split()) <= MAX_WORDS:
        return ()
    start = 0 if from_start else -max(scored)[1]
    run: list[str] = []
    for s in parts[start:]:
        if run and sum(len(x.split()) for x in run) + len(s.split()) > MAX_WORDS:
            break
        run.append(s)
    return tuple(run)


def _neighbours(
    asked: _Asked, cand: Candidate, k: int, best: float, reading: Reading
) -> tuple[int, ...]:
    """Paragraph k and the paragraphs next to it that score at least `SUPPORT` of it, while the
    quote stays within `MAX_WORDS` (a page converted to text puts each paragraph on a line)."""
    chosen = [k]
    words = len(cand.blocks[k].text.split())
    for step in (1, -1):
        j = k + step
        while 0 <= j < len(cand.blocks) and cand.blocks[j].kind == "paragraph":
            n = len(cand.blocks[j].text.split())
            if n > RUN_ON_WORDS and not _CLOSED.search(cand.blocks[j].text):
                j += step  # a flattened table or infobox between two paragraphs: passed over
                continue
            if words + n > MAX_WORDS or _score(asked, cand, j, reading) < SUPPORT * best:
                break
            chosen.append(j)
            words += n
            j += step
    return tuple(sorted(chosen))


def _rows(asked: _Asked, cand: Candidate, table: Block, reading: Reading) -> tuple[int, ...]:
    """The rows the question names best, by the asked terms neither the section's headings nor
    the table's header name, each weighing by how few rows hold it (a light bar's "solid red",
    not the "room" every row is about), plus a value of the asked type; every row tied at the top
    (two plans compared are two rows); () for the whole table when no row is named."""
    rows = table.rows or []
    said = [_terms(" ".join(row), reading) for row in rows]
    about = _terms(" ".join([cand.lead, *(table.header or [])]), reading)
    held = {t: sum(1 for r in said if t in r) for t in asked.terms - about}
    weight = {t: math.log(len(rows) / n) for t, n in held.items() if n}
    scores = [
        sum(weight.get(t, 0.0) for t in r)
        + (1.0 if any(_shows(t, " ".join(row)) for t in asked.types) else 0.0)
        for r, row in zip(said, rows, strict=True)
    ]
    top = max(scores, default=0.0)
    if top <= 0:
        return tuple(range(MAX_ROWS)) if len(rows) > MAX_ROWS else ()
    return tuple(i for i, v in enumerate(scores) if v >= top - 1e-9)


# ----------------------------------------------------------------------------- rendering


def render(choice: Choice, n: int, ph: Phrases | None = None) -> str:
    """The reply: the heading path cited `[n]`, then the chosen blocks as they read."""
    cand = choice.candidate
    parts: list[str] = []
    said = False  # the sentences (of one paragraph, or read on across paragraphs) said once
    for k in choice.blocks:
        block = cand.blocks[k]
        if choice.sentences and block.kind == "paragraph":
            if not said:
                parts.append(clean(" ".join(choice.sentences)))
            said = True
        elif block.kind == "table":
            parts.append(_table(block, choice.rows, cand, ph))
        else:
            parts.append(_block(block, cand, ph))
    if choice.also:
        where = PATH_SEP.join([cand.title, *cand.path[:-1]])
        items = "; ".join(choice.also)
        parts.append(
            phrase(ph, "also_lists", "“{where}” also lists: {items}.", where=where, items=items)
        )
    body = "\n".join(p for p in parts if p)
    return f"{cand.lead} [{n}]:\n{body}"


def _block(block: Block, cand: Candidate, ph: Phrases | None) -> str:
    if block.kind == "list":
        return _list(block, cand, ph)
    if block.kind == "code":
        lines = block.text.splitlines()[:MAX_CODE_LINES]
        return "```\n" + "\n".join(lines) + "\n```"
    if block.kind in ("callout", "tab") and block.label:
        inner = _unwrapped(block.text)
        return f"{clean(block.label)}:" + ("\n" if _LIST_LINE.match(inner) else " ") + inner
    return _unwrapped(block.text)


def _unwrapped(text: str) -> str:
    """A callout's or tab's text with its hard-wrapped lines joined; list lines and paragraphs
    stay lines."""
    out: list[str] = []
    gap = False  # a blank line before: a new paragraph, whatever the line before ends with
    for raw in text.splitlines():
        line = clean(raw.strip().lstrip("> ").strip())
        if not line:
            gap = True
            continue
        if out and not gap and not _LIST_LINE.match(line) and not _CLOSED.search(out[-1]):
            out[-1] += " " + line  # the sentence goes on: the source wrapped it at a width
        else:
            out.append(line)
        gap = False
    return "\n".join(out)


def _list(block: Block, cand: Candidate, ph: Phrases | None) -> str:
    items = block.items or []
    lines = []
    for i, item in enumerate(items[:MAX_ITEMS], 1):
        first, *rest = item.splitlines()
        first = _JOINER.sub("", clean(first)) if not rest else clean(first)
        lines.append(f"{i}. {first}" if block.ordered else f"- {first}")
        lines.extend(f"   {clean(line.strip())}" for line in rest if line.strip())
    if len(items) > MAX_ITEMS:
        lines.append(_rest(cand, ph))
    return "\n".join(lines)


def _table(block: Block, rows: Sequence[int], cand: Candidate, ph: Phrases | None) -> str:
    header = [clean(h) for h in block.header or []]
    all_rows = block.rows or []
    if rows:
        return "\n".join(
            "- "
            + "; ".join(
                f"{h}: {clean(v)}" if h else clean(v)
                for h, v in zip(header, all_rows[i], strict=False)
                if v
            )
            for i in rows
        )
    shown = all_rows[:MAX_ROWS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in shown]
    if len(all_rows) > MAX_ROWS:
        lines.append(_rest(cand, ph))
    return "\n".join(lines)


def _rest(cand: Candidate, ph: Phrases | None) -> str:
    return phrase(ph, "rest_in", "The rest is in “{where}”.", where=cand.lead)


def select_answer(
    question: str,
    passages: Sequence[PassageLike],
    reading: Reading = ENGLISH,
    ph: Phrases | None = None,
) -> str:
    """The selected answer, rendered and cited ("" when no block shares a term with it)."""
    return "\n".join(
        render(c, c.candidate.passage + 1, ph) for c in choices(question, passages, reading)
    )


def passage_text(
    question: str, passage: PassageLike, reading: Reading = ENGLISH
) -> tuple[str, str]:
    """A passage as a language model should read it, with its heading path: its section's
    blocks whole when the section is short, else the chosen block(s) of it (a procedure whole,
    a table with its header). Only the passage's own section: the citation names it."""
    own = _own(0, passage)
    if not own:
        return passage.breadcrumb, passage.text
    asked = _asked(question, own, reading)
    scored = [(_score(asked, c, k, reading), -k, c, k) for c in own for k in range(len(c.blocks))]
    best, _, cand, k = max(scored, key=lambda s: s[:2])
    if sum(len(b.text.split()) for b in cand.blocks) <= 2 * MAX_WORDS or best <= 0:
        choice = Choice(cand, tuple(range(len(cand.blocks))), best)
    else:
        choice = _grown(asked, cand, k, best, reading)
    return cand.lead, render(choice, 0).split("\n", 1)[1]
