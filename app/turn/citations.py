"""Citation check (pure): every `[n]` in an answer must name a passage that was actually supplied.

A citation *run* is one or more adjacent bracket groups of numbers: `[2]`, `[1, 3]`, `[1][3]`,
`[1] [3]`, with numbers of up to three digits (`[2026]` is a year, not a citation). Numbers
outside 1..len(passages) are removed and counted; a run left empty disappears together with the
space before it, so "works [7]." becomes "works." and never "works ." A bracket group followed by
`(` is a Markdown link, not a citation.

`CitationStreamFilter` applies the same check to a stream of text deltas: it holds back only what
could still change (trailing spaces, a trailing or half-written run), so the concatenation of
what it emits equals `check_citations(full_text).text` exactly.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_GROUP = r"\[[ \t]*\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*[ \t]*\]"
_RUN = re.compile(rf"{_GROUP}(?:[ \t]*{_GROUP})*(?!\()")
_NUMBER = re.compile(r"\d+")
_GROUP_ONLY = re.compile(_GROUP)
_HSPACE = " \t"
_PARTIAL_GROUP = re.compile(r"\[[\d \t,]*$")
_PARTIAL_TAIL = re.compile(r"[ \t]*\[[\d \t,]*$")


class CitationCheck(NamedTuple):
    text: str  # the answer with invalid citations removed
    valid: list[int]  # distinct valid passage numbers, in order of first use
    invalid: int  # how many invalid citation numbers were removed


def _clean(text: str, passage_count: int, prev: str = "") -> CitationCheck:
    """`prev` is the character just before `text` ("" at the start of the answer)."""
    out: list[str] = []
    valid: list[int] = []
    invalid = 0
    pos = 0
    for match in _RUN.finditer(text):
        numbers = [int(n) for n in _NUMBER.findall(match.group(0))]
        keep: list[int] = []
        for n in numbers:
            if not 1 <= n <= passage_count:
                invalid += 1
            elif n not in keep:
                keep.append(n)
        valid.extend(n for n in keep if n not in valid)
        before = text[pos : match.start()]
        pos = match.end()
        if keep and len(keep) == len(numbers):
            out.append(before + match.group(0))  # untouched: keep the writer's formatting
        elif keep:
            several = len(_GROUP_ONLY.findall(match.group(0))) > 1
            run = "".join(f"[{n}]" for n in keep) if several else f"[{', '.join(map(str, keep))}]"
            out.append(before + run)
        else:
            stripped = before.rstrip(_HSPACE)
            out.append(stripped)
            if stripped == before and _last_char(out, prev) in ("", "\n", "\r"):
                # the run opened a line: drop the space after it instead of the one before
                while pos < len(text) and text[pos] in _HSPACE:
                    pos += 1
    out.append(text[pos:])
    return CitationCheck("".join(out), valid, invalid)


def _last_char(parts: list[str], prev: str) -> str:
    for part in reversed(parts):
        if part:
            return part[-1]
    return prev


def check_citations(text: str, passage_count: int) -> CitationCheck:
    """Keep citations within 1..passage_count, remove the rest cleanly, count what was removed."""
    return _clean(text, passage_count)


class CitationStreamFilter:
    """`check_citations` over a stream: `feed` each delta, then `flush` once at the end."""

    def __init__(self, passage_count: int) -> None:
        self.passage_count = passage_count
        self._pending = ""
        self._prev = ""  # last raw character already released

    def _settled_length(self, text: str) -> int:
        """Length of the prefix of `text` that later text can no longer change."""
        end = len(text)
        while end:
            trimmed = text[:end].rstrip()
            if len(trimmed) != end:
                end = len(trimmed)
                continue
            partial = _PARTIAL_GROUP.search(trimmed)
            if partial:
                end = partial.start()
                continue
            if trimmed.endswith("]"):
                start = trimmed.rfind("[")
                if start >= 0 and _GROUP_ONLY.fullmatch(trimmed[start:]):
                    end = start
                    continue
            break
        return end

    def feed(self, delta: str) -> str:
        self._pending += delta
        cut = self._settled_length(self._pending)
        if cut == 0:
            return ""
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        cleaned = _clean(ready, self.passage_count, self._prev).text
        self._prev = ready[-1]
        return cleaned

    def drop_partial(self) -> str:
        """Forget a half-written citation at the end (the stream broke off); returns what went."""
        match = _PARTIAL_TAIL.search(self._pending)
        if not match:
            return ""
        self._pending = self._pending[: match.start()]
        return match.group(0)

    def flush(self) -> str:
        ready, self._pending = self._pending, ""
        if not ready:
            return ""
        cleaned = _clean(ready, self.passage_count, self._prev).text
        self._prev = ready[-1]
        return cleaned
