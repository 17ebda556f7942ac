"""Typo repair for routing (app/language/spelling.py): pure, table-tested on a small dictionary."""

from __future__ import annotations

import pytest

from app.language.spelling import Speller, damerau, edits1

EXEMPLARS = [
    "I want to cancel my order",
    "help me with cancelling a purchase",
    "please reimburse me",
    "delete my account",
    "I need a refund",
    "talk to someone",
]
DICTIONARY = {"update", "cancer", "correct", "order", "please", "chat", "with", "to", "my"}
DICTIONARY |= {"narrated", "the", "plot"}


@pytest.fixture
def speller() -> Speller:
    return Speller(EXEMPLARS, DICTIONARY)


@pytest.mark.parametrize(
    ("text", "repaired"),
    [
        ("I need help cancdling my order", "I need help cancelling my order"),  # two edits
        ("reimbruse me", "reimburse me"),  # a transposition
        ("delete my acount", "delete my account"),  # a deletion
        ("chat with somenoe", "chat with someone"),
        ("i need help tocancel", "i need help to cancel"),  # two words run together
        ("i cant pay", "i cant pay"),  # a contraction without its apostrophe is a word
        ("the cancer ward", "the cancer ward"),  # a dictionary word the exemplars never use
        ("updating my order", "updating my order"),  # an inflection of a dictionary word
        ("correcting my order", "correcting my order"),
        ("open a Freemium account", "open a Freemium account"),  # a name inside a sentence
        ("cancel ORD-1042 now", "cancel ORD-1042 now"),  # identifiers and capitals stay
        ("refnd", "refund"),
        ("narrate the plot", "narrate the plot"),  # the base of a listed inflection ("narrated")
        ("cancle my order", "cancel my order"),  # a typo ending in "e" is still repaired
        ("teh", "teh"),  # too short to repair safely
        ("xqzvbnmw", "xqzvbnmw"),  # nothing near: left as typed
    ],
)
def test_repair(speller: Speller, text: str, repaired: str) -> None:
    assert speller.repair(text) == repaired


def test_two_equally_good_repairs_leave_the_word_alone() -> None:
    speller = Speller(["the card", "the cart"], ())
    assert speller.repair("the carx") == "the carx"
    # the exemplars' more frequent word wins a tie in distance
    assert Speller(["card card", "cart"], ()).repair("the carx") == "the card"


@pytest.mark.parametrize(
    ("a", "b", "limit", "distance"),
    [
        ("cancel", "cancel", 2, 0),
        ("cancel", "cancle", 2, 1),  # transposition counts once
        ("cancdling", "cancelling", 2, 2),
        ("refund", "reimburse", 2, 3),  # past the limit: limit + 1
        ("a", "abcd", 1, 2),
    ],
)
def test_damerau(a: str, b: str, limit: int, distance: int) -> None:
    assert damerau(a, b, limit) == distance


def test_edits1_covers_the_four_kinds_of_typo() -> None:
    near = edits1("acount")
    assert {"account", "acunt", "caount", "amount"} <= near
    assert "acount" in near  # substituting a letter by itself


@pytest.mark.parametrize(
    ("text", "repaired"),
    [
        ("reset my pasword", "reset my password"),  # an insertion, onto a corpus word
        ("sso with okat", "sso with okta"),  # a corpus word the dictionary lacks
        ("Pasword reset", "Password reset"),  # the first letter's case is kept
        ("the wief", "the wief"),  # only the dictionary knows "wife": no passage would match it
        ("enable authentcaton", "enable authentication"),  # two edits, first letter kept
        ("enable euthentcation", "enable euthentcation"),  # two edits and another first letter
        ("the panels", "the panels"),  # a dictionary word is never touched
        ("aokta", "aokta"),  # a repair changing the first letter is too loose for a corpus
        ("potka", "potka"),
        ("apnel", "panel"),  # ... but a swap of the first two letters is a common slip
        ("the passwordpanel", "the passwordpanel"),  # a compound is a name, not two words
    ],
)
def test_repair_onto_corpus_words_only(text: str, repaired: str) -> None:
    corpus = {"password": 4, "okta": 1, "authentication": 2, "panel": 3}
    speller = Speller.from_counts(corpus, {"wife", "the", "reset", "with", "enable", "panels"})
    assert speller.repair(text) == repaired


def test_repairs_lists_each_changed_word() -> None:
    speller = Speller.from_counts({"password": 1, "okta": 1}, {"my"})
    assert speller.repairs("my pasword for okat") == {"pasword": "password", "okat": "okta"}
    assert speller.repairs("my password") == {}
    # the router's mode still falls back to a unique dictionary word
    assert Speller([], {"wife"}).repair("the wief") == "the wife"
