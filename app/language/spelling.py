"""Typo repair for routing: map a misspelt word onto a word the classifier was fitted on (pure;
how and why: docs/language.md)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from app.language.lexicon import word_list, word_set
from tuning import TUNING

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIN_LENGTH = TUNING.spelling_min_length  # tuning.py says why each is set
LONG_WORD = TUNING.spelling_long_word
# English contractions typed without the apostrophe are words, not typos ("cant" is not "want")
CONTRACTIONS = word_set("en", "contractions")
# inflections that turn a dictionary word into a word the dictionary may lack
_SUFFIXES = word_list("en", "suffixes")


def damerau(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance between a and b, or limit + 1 once it exceeds limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


def edits1(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return {
        *(a + b[1:] for a, b in splits if b),
        *(a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1),
        *(a + c + b[1:] for a, b in splits if b for c in _LETTERS),
        *(a + c + b for a, b in splits for c in _LETTERS),
    }


def _same_start(word: str, repair: str) -> bool:
    """The repair keeps the word's first letter, or swaps its first two ("ehlp" → "help")."""
    return word[:1] == repair[:1] or (word[:2] == repair[:2][::-1] and word[2:] == repair[2:])


class Speller:
    """Repairs unknown words, towards the exemplar words first; leaves known words be.

    `targets_only` (search queries onto the corpus's words, `from_counts`): only onto a target
    word, keeping the first letter (or swapping the first two), never splitting a word."""

    def __init__(
        self, targets: Iterable[str], known: Collection[str] = (), *, targets_only: bool = False
    ) -> None:
        counts = Counter(w.casefold() for t in targets for w in _WORD.findall(t))
        self._setup(counts, known, targets_only)

    @classmethod
    def from_counts(
        cls, counts: Mapping[str, int], known: Collection[str] = (), *, targets_only: bool = True
    ) -> Speller:
        """A speller whose targets are already counted words (a corpus vocabulary)."""
        speller = cls.__new__(cls)
        speller._setup(Counter(counts), known, targets_only)
        return speller

    def _setup(self, counts: Counter[str], known: Collection[str], targets_only: bool) -> None:
        self._counts = counts
        self._targets_only = targets_only
        self._by_length: dict[int, list[str]] = {}
        for w in sorted(w for w in counts if len(w) >= MIN_LENGTH):
            self._by_length.setdefault(len(w), []).append(w)
        self._known = frozenset(w.casefold() for w in known) | frozenset(counts) | CONTRACTIONS
        self._cache: dict[str, str | None] = {}

    def known(self, word: str) -> bool:
        """In the dictionary or the exemplars, or an inflection of a word that is."""
        low = word.casefold()
        if low in self._known:
            return True
        for suffix in _SUFFIXES:
            stem = low[: -len(suffix)]
            if low.endswith(suffix) and len(stem) >= 3:
                if stem in self._known or stem + "e" in self._known:
                    return True
                if len(stem) > 3 and stem[-1] == stem[-2] and stem[:-1] in self._known:
                    return True  # stopped -> stop
                if stem.endswith("i") and stem[:-1] + "y" in self._known:
                    return True  # modified -> modify
        # the base of a known inflection: a word list can hold "narrated" without "narrate"
        return (
            low.endswith("e")
            and len(low) >= 5
            and bool({low + "d", low + "s", low[:-1] + "ing"} & self._known)
        )

    def repair(self, text: str) -> str:
        """`text` with each unknown word replaced by its repair (unchanged when none is sure)."""
        return _WORD.sub(lambda m: self._fix(m.group(0), m.start() == 0), text)

    def repairs(self, text: str) -> dict[str, str]:
        """Each word of `text` that `repair` changes, with what it becomes."""
        out: dict[str, str] = {}
        for m in _WORD.finditer(text):
            fixed = self._fix(m.group(0), m.start() == 0)
            if fixed != m.group(0):
                out[m.group(0)] = fixed
        return out

    def _fix(self, word: str, at_start: bool) -> str:
        if len(word) < MIN_LENGTH or word.isupper() or self.known(word):
            return word
        if word[0].isupper() and not at_start:
            return word  # a capitalised word inside a sentence is most likely a name
        low = word.casefold()
        if low not in self._cache:
            self._cache[low] = self._repair(low)
        fixed = self._cache[low]
        if fixed is None:
            return word
        return fixed[:1].upper() + fixed[1:] if word[0].isupper() else fixed

    def _repair(self, word: str) -> str | None:
        """One edit away (a missing space is one edit too), else two from an exemplar word."""
        near = [w for w in edits1(word) if w in self._known and len(w) >= MIN_LENGTH - 1]
        if self._targets_only:
            near = [w for w in near if _same_start(word, w)]
        if near:
            ours = [w for w in near if w in self._counts]
            if ours:
                ranked = sorted(ours, key=lambda w: -self._counts[w])
                if len(ranked) > 1 and self._counts[ranked[0]] == self._counts[ranked[1]]:
                    return None  # two exemplar words equally likely: not sure which was meant
                return ranked[0]
            if self._targets_only:
                return None
            return near[0] if len(near) == 1 else None  # several dictionary words: unsure
        # a run-together pair is the router's case ("tocancel"); in a search query an unknown
        # compound is more often a name or a term ("webhooks", "multifactor")
        split = None if self._targets_only else self._split(word)
        if split is not None or len(word) < LONG_WORD:
            return split
        best: list[tuple[int, int, str]] = []
        candidates = [
            t for n in range(len(word) - 2, len(word) + 3) for t in self._by_length.get(n, ())
        ]
        for target in candidates:
            if self._targets_only and not _same_start(word, target):
                continue
            d = damerau(word, target, 2)
            if d <= 2:
                best.append((d, -self._counts[target], target))
        if not best:
            return None
        best.sort()
        if len(best) > 1 and best[1][:2] == best[0][:2]:
            return None  # two equally good repairs: not sure which word was meant
        return best[0][2]

    def _split(self, word: str) -> str | None:
        """'tocancel' -> 'to cancel': two known words, at least one of them an exemplar word."""
        for cut in range(2, len(word) - 1):
            left, right = word[:cut], word[cut:]
            if (
                self.known(left)
                and self.known(right)
                and (left in self._counts or right in self._counts)
                and max(len(left), len(right)) >= MIN_LENGTH - 1
            ):
                return f"{left} {right}"
        return None
