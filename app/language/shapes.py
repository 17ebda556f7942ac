"""Utterance shapes as labelled rows (`shapes.yaml`) that the router's classifier learns from
(docs/language.md, "Shapes"). Pure: text and vectors in, text and vectors out."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import yaml

from app.language.lexicon import LANGUAGES, word_set
from tuning import TUNING

SHAPES_FILE = Path(__file__).with_name("shapes.yaml")
REQUEST = "request"  # the shape that may carry an escalating intent
Matrix = npt.NDArray[np.float64]
# the lexicons' lists a skeleton keeps (a language without one of them reads it as empty)
FUNCTION_LISTS = (
    "function_words",
    "stopwords",
    "lucene_stopwords",
    "query_stopwords",
    "shape_words",
)


class ShapeRow(NamedTuple):
    message: str
    shape: str


@functools.cache
def shape_rows(path: Path = SHAPES_FILE) -> tuple[ShapeRow, ...]:
    """Every labelled row of the shapes file, in file order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: expected shape -> list of messages")
    rows = [ShapeRow(str(m), str(shape)) for shape, ms in data.items() for m in ms or ()]
    seen: dict[str, str] = {}
    for row in rows:
        if seen.setdefault(row.message.casefold(), row.shape) != row.shape:
            raise ValueError(f"{path.name}: {row.message!r} is listed under two shapes")
    return tuple(rows)


def _function_words() -> frozenset[str]:
    """The closed-class words of every language the lexicons hold: what a shape is made of."""
    return frozenset(w for lang in LANGUAGES for key in FUNCTION_LISTS for w in word_set(lang, key))


_KEEP = _function_words()
_TOKEN = re.compile(r"\w+|\?")


def skeleton(text: str) -> str:
    """The message with every content word as "thing": "can I cancel my plan?" -> "can i thing
    my thing ?". Its embedding carries the message's shape, not its topic."""
    tokens = _TOKEN.findall(text.casefold().replace("’", "'"))
    return " ".join(t if t in _KEEP or t == "?" else "thing" for t in tokens)


def features(message: Matrix, shape: Matrix) -> Matrix:
    """One unit vector from the unit embeddings of a message and of its skeleton."""
    joined = np.concatenate([TUNING.shape_message_weight * message, shape], axis=-1)
    norm = np.linalg.norm(joined, axis=-1, keepdims=True)
    result: Matrix = joined / np.where(norm == 0, 1.0, norm)
    return result
