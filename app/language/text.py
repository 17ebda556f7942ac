"""Tokenisation shared by the local BM25 indexes, chunk picking and the offline reranker:
identifiers survive as compounds (rules in docs/language.md)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from app.language.lexicon import word_map, word_set

# Lucene's EnglishAnalyzer stop set: what Atlas `lucene.english` drops too.
LUCENE_STOPWORDS = word_set("en", "lucene_stopwords")

# A wider set for measuring how much of a *question* a passage covers: question words and
# pronouns carry no topic, and counting them would reward any passage written in English.
QUERY_STOPWORDS = LUCENE_STOPWORDS | word_set("en", "query_stopwords")

TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
DIGIT = re.compile(r"\d")


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


# irregular past forms and their verb: "Lost your phone?" heads the section that answers "what
# if I lose my phone?", which no suffix rule can join
_IRREGULAR_PAST: Final = word_map("en", "irregular_past")
# plural endings with what each leaves ("ponies" → "pony", "boxes" → "box"), in order
_PLURAL_ENDINGS: Final = word_map("en", "plural_endings")


@lru_cache(maxsize=65_536)  # pure, called for every word of every passage a turn reranks
def stem(word: str) -> str:
    """A light, deterministic English suffix stripper (documents and queries alike); an
    irregular past form becomes its verb first (`_IRREGULAR_PAST`)."""
    word = _IRREGULAR_PAST.get(word, word)
    if len(word) <= 3 or DIGIT.search(word):
        return word
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, repl in _PLURAL_ENDINGS.items():
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)] + repl
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and re.search(r"[aeiouy]", base):
            word = base
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running → runn → run
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def is_code(token: str) -> bool:
    """An identifier-like token: error codes, SKUs, order refs (has a digit, e.g. auth_302)."""
    return bool(DIGIT.search(token)) and len(token) >= 3


def tokenize(text: str, stopwords: frozenset[str] = LUCENE_STOPWORDS) -> list[str]:
    """Index/query tokens in order, compounds expanded (see the module docstring)."""
    out: list[str] = []
    for match in TOKEN.finditer(normalize(text)):
        token = match.group(0)
        parts = re.split(r"[_-]", token)
        if len(parts) == 1:
            if token not in stopwords:
                out.append(stem(token))
            continue
        out.append(token)
        out.append("".join(parts))
        out.extend(stem(p) for p in parts if p not in stopwords)
    return out


def content_terms(text: str) -> list[str]:
    """Distinct topic-bearing terms of a question, in order (compounds joined, parts dropped)."""
    seen: dict[str, None] = {}
    for match in TOKEN.finditer(normalize(text)):
        token = match.group(0)
        if "_" in token or "-" in token:
            # the joined form: AUTH_302, AUTH-302 and AUTH302 are the same identifier
            seen.setdefault(re.sub(r"[_-]", "", token), None)
        elif token not in QUERY_STOPWORDS and (len(token) > 1 or token.isdigit()):
            seen.setdefault(stem(token), None)
    return list(seen)


def term_set(text: str) -> set[str]:
    """Every token a passage could match a question term with (compounds and their parts)."""
    return set(_term_set(text))


@lru_cache(maxsize=8192)  # passages come from a fixed corpus: each is tokenised once, not per turn
def _term_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text, stopwords=frozenset()))


def unique(tokens: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(tokens))


# a sentence ends at . ! ? before a capital, a digit or an opening quote/bracket; a line break
# always ends one (list items, headings and table rows stand alone)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")


def sentences(text: str, min_words: int = 3) -> list[str]:
    """A passage's sentences (whitespace collapsed), those of fewer than `min_words` dropped:
    the units the answerability check compares with the question."""
    out = []
    for piece in _SENTENCE_BREAK.split(text):
        sentence = " ".join(piece.split())
        if len(sentence.split()) >= min_words:
            out.append(sentence)
    return out


TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")  # a Markdown table's |---|---| line


def table_rows(lines: list[str]) -> list[str]:
    """A Markdown table as one sentence per row ("Row — Column: value; …" or "Column: value; …")."""
    cells = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]
    cells = [row for row, ln in zip(cells, lines, strict=True) if not TABLE_RULE.match(ln)]
    if len(cells) < 2:
        return [" ".join(c for row in cells for c in row if c)]
    header, rows = cells[0], cells[1:]
    out = []
    for row in rows:
        if not header[0] and row:  # first column names the row
            pairs = [f"{h}: {v}" for h, v in zip(header[1:], row[1:], strict=False) if h and v]
            text = f"{row[0]} — {'; '.join(pairs)}" if pairs else row[0]
        else:
            text = "; ".join(
                f"{h}: {v}" if h else v for h, v in zip(header, row, strict=False) if v
            )
        if text:
            out.append(text + ".")
    return out


def _segments(text: str) -> list[tuple[bool, list[str]]]:
    """`text` in order as (is a Markdown table, its lines): each table one segment, every other
    line a segment of its own (a "|" line inside fenced code is no table)."""
    out: list[tuple[bool, list[str]]] = []
    current: list[str] = []
    fenced = False
    for line in [*text.splitlines(), ""]:
        if line.strip().startswith("```"):
            fenced = not fenced
        if line.strip().startswith("|") and not fenced:
            current.append(line)
            continue
        if current:
            out.append((True, current))
            current = []
        out.append((False, [line]))
    return out


def table_blocks(text: str) -> list[list[str]]:
    """The Markdown tables of `text`, each as its lines (outside fenced code)."""
    return [lines for is_table, lines in _segments(text) if is_table]


def answer_sentences(text: str, min_words: int = 3) -> list[str]:
    """`sentences`, each Markdown table row read under its column names (`table_rows`): a row
    answers a question only with its header."""
    out: list[str] = []
    for is_table, lines in _segments(text):
        if is_table:
            out.extend(r for r in table_rows(lines) if len(r.split()) >= min_words)
        else:
            out.extend(sentences(lines[0], min_words))
    return out
