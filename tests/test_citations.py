"""Citation check: a table of answers, and the streaming filter agreeing with it on every split."""

from __future__ import annotations

import random

import pytest

from app.turn.citations import CitationStreamFilter, check_citations

CASES = [
    # (answer, passages supplied, clean text, valid, invalid count)
    ("Rotate the certificate [1].", 3, "Rotate the certificate [1].", [1], 0),
    ("Rotate it [7].", 3, "Rotate it.", [], 1),
    ("Rotate it [0].", 3, "Rotate it.", [], 1),
    ("A [1, 7] and B [2][9].", 3, "A [1] and B [2].", [1, 2], 2),
    ("A [1][2] B [3, 1].", 3, "A [1][2] B [3, 1].", [1, 2, 3], 0),
    ("A [1] [4] B.", 3, "A [1] B.", [1], 1),
    ("[9] Start of line.", 3, "Start of line.", [], 1),
    ("One.\n[9] Next line [2].", 2, "One.\nNext line [2].", [2], 1),
    ("done.[9] Next", 3, "done. Next", [], 1),
    ("No citations at all.", 0, "No citations at all.", [], 0),
    ("Any citation with nothing supplied [1].", 0, "Any citation with nothing supplied.", [], 1),
    (
        "See [the guide](https://x.test/a) and [2](https://x.test/b).",
        1,
        "See [the guide](https://x.test/a) and [2](https://x.test/b).",
        [],
        0,
    ),
    (
        "Array items[1] look like citations [1].",
        1,
        "Array items[1] look like citations [1].",
        [1],
        0,
    ),
    ("Duplicates [2, 2] collapse.", 2, "Duplicates [2] collapse.", [2], 0),
    ("Huge [999] number.", 5, "Huge number.", [], 1),
    ("A year [2026] is not a citation.", 5, "A year [2026] is not a citation.", [], 0),
    ("Spaced [ 1 , 3 ] group.", 2, "Spaced [1] group.", [1], 1),
    ("Not a citation [A] or [1a].", 2, "Not a citation [A] or [1a].", [], 0),
]


@pytest.mark.parametrize(("text", "count", "clean", "valid", "invalid"), CASES)
def test_check_citations(text: str, count: int, clean: str, valid: list[int], invalid: int) -> None:
    result = check_citations(text, count)
    assert result.text == clean
    assert result.valid == valid
    assert result.invalid == invalid
    text_out, valid_out, invalid_out = result  # a plain tuple too
    assert (text_out, valid_out, invalid_out) == (clean, valid, invalid)


def _stream(text: str, count: int, cuts: list[int]) -> str:
    f = CitationStreamFilter(count)
    out, last = [], 0
    for cut in [*cuts, len(text)]:
        out.append(f.feed(text[last:cut]))
        last = cut
    out.append(f.flush())
    return "".join(out)


@pytest.mark.parametrize(("text", "count", "clean", "valid", "invalid"), CASES)
def test_stream_filter_equals_batch_check_on_every_split(
    text: str, count: int, clean: str, valid: list[int], invalid: int
) -> None:
    for cut in range(len(text) + 1):
        assert _stream(text, count, [cut]) == clean, cut
    assert _stream(text, count, list(range(1, len(text)))) == clean  # one character at a time


def test_stream_filter_random_answers() -> None:
    rng = random.Random(7)
    pieces = ["Step one", " [1]", "[9]", " [2, 8]", ".", " ", "\n", "[4]", " text", "(x)", "[", "]"]
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        cuts = sorted(rng.sample(range(len(text) + 1), k=min(4, len(text) + 1)))
        assert _stream(text, 3, cuts) == check_citations(text, 3).text, (text, cuts)


def test_stream_filter_holds_back_only_what_can_change() -> None:
    f = CitationStreamFilter(2)
    assert f.feed("Rotate the certificate") == "Rotate the certificate"
    assert f.feed(" [") == ""  # could become a citation
    assert f.feed("7]") == ""  # a complete run could still grow: "[7][1]"
    assert f.feed(".") == "."  # settled: the invalid run and its space are gone
    assert f.flush() == ""


def test_drop_partial_forgets_a_half_written_citation() -> None:
    f = CitationStreamFilter(2)
    assert f.feed("the signature [1") == "the signature"
    assert f.drop_partial() == " [1"
    assert f.drop_partial() == ""
    assert f.feed(" ends.") == " ends."
