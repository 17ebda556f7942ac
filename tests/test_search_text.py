"""Tokenisation: identifiers survive, spaced and joined spellings still meet, stems agree."""

from __future__ import annotations

import pytest

from app.language.text import content_terms, is_code, stem, term_set, tokenize


@pytest.mark.parametrize(
    ("text", "must_contain"),
    [
        ("Getting AUTH_302 on login", {"auth_302", "auth302", "auth", "302"}),
        ("HL-RP10 pads", {"hl-rp10", "hlrp10", "hl", "rp10", "pad"}),
        ("order ORD-1042 is late", {"ord-1042", "ord1042", "1042", "order", "late"}),
        ("SCIM_409", {"scim_409", "scim409"}),
    ],
)
def test_identifiers_stay_whole_and_also_split(text: str, must_contain: set[str]) -> None:
    assert must_contain <= set(tokenize(text))


def test_spaced_joined_and_hyphenated_spellings_meet_the_underscore_form() -> None:
    doc = term_set("AUTH_302 means the signature did not verify")
    assert {"auth", "302"} <= set(tokenize("auth 302")) & doc
    for query in ("AUTH-302", "auth302", "Auth_302"):
        assert "auth302" in set(tokenize(query)) & doc, query


def test_stopwords_dropped_for_bm25_not_inside_identifiers() -> None:
    assert tokenize("How do I reset the password?") == ["how", "do", "i", "reset", "password"]
    assert "the" not in tokenize("the")
    parts = tokenize("opt-in-to-beta")
    assert parts[:2] == ["opt-in-to-beta", "optintobeta"]  # the compound itself is never dropped
    assert "to" not in parts and {"opt", "beta"} <= set(parts)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("invoices", "invoice"),
        ("rotating", "rotate"),
        ("rotated", "rotate"),
        ("signing", "sign"),
        ("users", "user"),
        ("batteries", "battery"),
        ("running", "run"),
    ],
)
def test_stemming_conflates_inflections(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_stemming_leaves_short_words_and_codes_alone() -> None:
    assert stem("sso") == "sso"
    assert stem("rp10s") == "rp10s"
    assert stem("status") == "status"
    assert stem("access") == "access"


def test_content_terms_drop_question_words_and_join_identifiers() -> None:
    assert content_terms("How do I fix AUTH_302 errors on my Okta?") == [
        "fix",
        "auth302",
        "error",
        "okta",
    ]
    assert content_terms("thanks!") == []
    assert content_terms("") == []


def test_is_code() -> None:
    assert is_code("auth302") and is_code("hlrp10") and is_code("1042")
    assert not is_code("password") and not is_code("a1")


def test_unicode_is_normalised() -> None:
    assert tokenize("Ｐａｓｓｗｏｒｄ") == tokenize("password")  # full-width letters (NFKC)
    assert "réinitialiser" in tokenize("Réinitialiser")


def test_table_rows_and_blocks() -> None:
    from app.language.text import table_blocks, table_rows

    text = (
        "Intro\n\n| | Pro | Free |\n|---|---|---|\n| Price | $9 | $0 |\n\n"
        "After\n```\n| not a table |\n```"
    )
    (table,) = table_blocks(text)
    assert table_rows(table) == ["Price — Pro: $9; Free: $0."]
    assert table_rows(["| Plan | Price |", "|---|---|", "| Pro | $9 |"]) == [
        "Plan: Pro; Price: $9."
    ]


def test_answer_sentences_read_table_rows_under_their_columns() -> None:
    from app.language.text import answer_sentences, sentences

    text = (
        "Response times depend on severity.\n\n| Severity | First response |\n|---|---|\n"
        "| Critical | 1 hour |\n| Low | 2 days |\n\n```\n| not | a table |\n```\nDone here now."
    )
    assert answer_sentences(text) == [
        "Response times depend on severity.",
        "Severity: Critical; First response: 1 hour.",
        "Severity: Low; First response: 2 days.",
        "| not | a table |",
        "Done here now.",
    ]
    prose = "One sentence here. Another one follows.\nA third line."
    assert answer_sentences(prose) == sentences(prose)


@pytest.mark.parametrize(
    ("customer", "docs"),
    [("lose", "lost"), ("forget", "forgotten"), ("pay", "paid"), ("break", "broken")],
)
def test_an_irregular_past_form_stems_to_its_verb(customer: str, docs: str) -> None:
    # "what if I lose my phone?" meets the section headed "Lost your phone or key?"
    assert stem(customer) == stem(docs)


def test_past_forms_of_another_sense_are_left_alone() -> None:
    assert stem("led") == "led" and stem("left") == "left"  # an LED; a side
