"""The language layer's rules can only go down: each ceiling is the count at the last change."""

from __future__ import annotations

import textwrap
from pathlib import Path

from scripts.count_rules import count, count_file

# Lower these when a change removes rules; never raise them. Before issue 40 the layer as counted
# now (the ten files plus the tokeniser, analyzer and identifiers that moved into app/language)
# held 5,869 lines, 155 regexes, 2,043 branches and 1,144 listed words (the ten files alone:
# 5,203, 142, 2,027 and 901). Since then app/language/normalize.py (the one normalisation entry
# point, 119 lines, 4 regexes, 4 branches, 156 listed words) is counted too. The question
# shapes the router once matched with six patterns (404 branches: five question shapes and the
# people a request for a person names) are rows of app/language/shapes.yaml that its shape model
# learns from. The offline answerer's sentence extractor (about 720 lines of offline.py) gave
# way to the block selector of issue 38 (app/providers/chat/select.py, reading the section
# tree; not counted here: it holds no word lists and 7 small regexes).
CEILING = {"lines": 3690, "regexes": 78, "branches": 155, "words": 161}


def test_the_layer_does_not_grow() -> None:
    totals = count()["total"]
    over = {k: (totals[k], cap) for k, cap in CEILING.items() if totals[k] > cap}
    assert not over, f"the language layer grew above its ratchet (count, ceiling): {over}"


def test_the_counter_sees_branches_words_and_regexes(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        import re
        _A = re.compile(r"\\b(?:one|two|three)\\b")
        _B = {"alpha", "beta", "x1"}
        _C = "red green blue".split()
        """
    )
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert count_file(path) == {"lines": 5, "regexes": 1, "branches": 3, "words": 5}
