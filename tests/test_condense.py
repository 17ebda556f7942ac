"""Condense + classify: identifiers, follow-up resolution, tools, and the model path's fallbacks."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path as _Path
from typing import Any

import pytest

from app.language.identifiers import Identifiers
from app.providers.embeddings.fake import FakeEmbedder
from app.providers.errors import ProviderError
from app.tenant import load_tenant
from app.turn.clamp import INTENTS
from app.turn.condense import (
    CONDENSE_SCHEMA,
    SYSTEM_PROMPT,
    Turn,
    carry_first_topic,
    condense,
    conversation_topic,
    resolve_followup,
    subject_of,
    the_open_order,
    topic_phrases,
    trim_discourse_markers,
    with_previous_subject,
)
from app.turn.router import RouteDetail, Router

SEED_TENANT = load_tenant(_Path(__file__).resolve().parent.parent / "seed")
INTENT_EXEMPLARS = SEED_TENANT.training_exemplars()
SENTIMENT_EXEMPLARS = SEED_TENANT.sentiment_exemplars


class ScriptedChatModel:
    """Replies from a queue (a value to return or an exception to raise); records every call."""

    def __init__(self, *replies: object) -> None:
        self.replies: deque[object] = deque(replies)
        self.calls: list[dict[str, Any]] = []

    async def complete_json(
        self, system: str, messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> dict[str, Any]:
        self.calls.append({"system": system, "messages": messages, "schema": schema})
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        return reply  # type: ignore[return-value]  # garbage on purpose in some tests


@pytest.fixture
def router() -> Router:
    return Router(FakeEmbedder(), tenant=SEED_TENANT, tool_exemplars={})  # tools by model: MiniLM


# --- identifiers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("Where is ORD-1042?", "ORD-1042"),
        ("How do I mount the Room Panel on glass?", "the Room Panel"),
        ("Does Harborline Workspace support Okta?", "Harborline Workspace"),
        ("How can I reset a desk tag?", "the desk tag"),
        # the phrase ends where the clause's verb or adverb starts
        ("My room panel shows Not connected", "My room panel"),
        ("the email never arrives", "the email"),
        ("the page loads slowly", "the page"),
        ("Is the calendar sync on?", "the calendar sync"),  # a noun as often as a verb
        ("What are the different types?", None),
        ("hello there", None),
    ],
)
def test_subject_of(question: str, subject: str | None) -> None:
    assert subject_of(question) == subject


# --- follow-up resolution ------------------------------------------------------------------------

REWRITES = [
    # pronouns the previous question makes unambiguous
    ("when will it arrive?", ["Where is ORD-1042?"], "when will ORD-1042 arrive?"),
    ("what does it mean?", ["I get AUTH_302 at sign-in"], "what does AUTH_302 mean?"),
    ("Does it support Outlook?", ["Can I mount the Room Panel on glass?"],
     "Does the Room Panel support Outlook?"),
    ("how do I pair them?", ["I bought the new desk tags"], "how do I pair the new desk tags?"),
    # a measure of a thing is not what the pronoun goes on to talk about
    ("does it need PoE?", ["what's the price of the kiosk?"], "does the kiosk need PoE?"),
    # a contraction typed without its apostrophe ends the noun phrase like the real one
    ("i already restarted it", ["the room panel wont connect to wifi"],
     "i already restarted the room panel"),
    ("What is its battery life?", ["Tell me about the Visitor Kiosk"],
     "What is the Visitor Kiosk's battery life?"),
    # "it's" is "it is" (or "it has"), not a possessive, once "it" is a name
    ("it's on wifi", ["My room panel shows Not connected"], "My room panel is on wifi"),
    ("it's been offline all day", ["Can I mount the Room Panel on glass?"],
     "The Room Panel has been offline all day"),
    # "it" never means a plural subject
    ("Is it waterproof?", ["What are the different desk tags?"], "Is it waterproof?"),
    # a pronoun the message's own noun phrase cannot mean still points back
    ("I meant the issues when installing it with Carthage",
     ["Should we switch how we install the mobile SDK?"],
     "I meant the issues when installing the mobile SDK with Carthage"),
    # a plural pronoun never means one named thing
    ("which languages are supported for them?", ["Is the Visitor Kiosk available in English?"],
     "which languages are supported for them?"),
    # "do that": the previous question's action, not one of its nouns
    ("and how do I do that on the mobile app?", ["How do I check in to my desk booking?"],
     "and how do I check in to my desk booking on the mobile app?"),
    ("can I do it from my phone?", ["how can I reset my password?"],
     "can I reset my password from my phone?"),
    ("and how do I do that on the mobile app?", ["What is the check-in window?"],
     "and how do I do that on the mobile app?"),
    ("what does it cost?", ["How do I add seats to the pro plan?"],
     "what does the pro plan cost?"),
    # a time is no thing a pronoun stands for
    ("when will it arrive?", ["What did I order last month?"], "when will it arrive?"),
    # actions take time, things do not: "that" in "how long does that take?" is the action
    ("and how long will that take?", ["How do I update the firmware on a Desk Tag?"],
     "and how long will it take to update the firmware on a Desk Tag?"),
    ("what does that cost?", ["How do I add seats to the pro plan?"],
     "what does it cost to add seats to the pro plan?"),
    ("how long will it take for the refund?", ["How do I return a panel?"],
     "how long will it take for the refund?"),  # it says what takes the time
    # no rule guesses what an ellipsis or a subjectless report is about
    ("and for pro?", ["Can I set up SSO on the enterprise plan?"], "and for pro?"),
    # a bare condition asks the previous question again under it
    ("what if we pay annually?", ["When does my subscription renew?"],
     "When does my subscription renew if we pay annually?"),
    ("and if I use SSO?", ["How do I change my password?"],
     "How do I change my password if I use SSO?"),
    ("what if I cancel?", ["hello"], "what if I cancel?"),  # no question to ask again
    ("what if the tag just says Searching?", ["How do I pair a tag?"],
     "what if the tag just says Searching?"),  # a subject of its own: a new question
    ("it says access denied", ["I can't sign in to the Room Panel"], "it says access denied"),
    # nothing to resolve, or not ours to guess: the message stays as written
    ("what about security?", ["Tell me about the Room Panel"], "what about security?"),
    ("how much does it cost?", ["hello"], "how much does it cost?"),
    ("my desk tag is blank, is it broken?", ["How do I book a room?"],
     "my desk tag is blank, is it broken?"),
    ("is it possible to export bookings?", ["How do I add the Visitor Kiosk?"],
     "is it possible to export bookings?"),
    ("are they waterproof?", ["Can I mount the panel outside?"], "are they waterproof?"),
    ("Does the Room Panel need PoE or is it battery powered?", ["Tell me about the Room Panel"],
     "Does the Room Panel need PoE or is it battery powered?"),
    ("That is great news", ["Can I mount the Room Panel on glass?"], "That is great news"),
    ("how do I book a desk?", ["Where is ORD-1042?"], "how do I book a desk?"),
    ("when will it arrive?", [], "when will it arrive?"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "earlier", "expected"), REWRITES)
def test_resolve_followup(message: str, earlier: list[str], expected: str) -> None:
    assert resolve_followup(message, next(iter(earlier), None)).text == expected


@pytest.mark.parametrize(("message", "earlier", "expected"), REWRITES)
def test_rewrites_only_use_words_the_conversation_said(
    message: str, earlier: list[str], expected: str
) -> None:
    said = {w.lower() for w in re.findall(r"[\w-]+", " ".join([message, *earlier]))}
    rewrite = resolve_followup(message, next(iter(earlier), None)).text
    out = {w.lower() for w in re.findall(r"[\w-]+", rewrite)}
    assert out - said <= {"the", "regarding", "s", "it", "to", "is", "has"}  # never a new fact


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Ok. How do I get started?", "How do I get started?"),
        ("Great! One last thing, where can I find the SDK?", "Where can I find the SDK?"),
        ("Thanks, and how do I reset it?", "How do I reset it?"),
        ("No, I meant the wall mount.", "I meant the wall mount."),
        ("et où en est ma commande ?", "Où en est ma commande ?"),
        # not markers: "No one", "Well known"; too little left: "and for pro?"
        ("No one can log in to the panel", "No one can log in to the panel"),
        ("Well known issue with panels?", "Well known issue with panels?"),
        ("and for pro?", "and for pro?"),
        ("Okay", "Okay"),
    ],
)
def test_trim_discourse_markers(message: str, expected: str) -> None:
    assert trim_discourse_markers(message) == expected


async def test_standalone_drops_leading_acknowledgment(router: Router) -> None:
    c = await condense("Thanks! How do I book a desk?", [], chat_model=None, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.standalone_question == "How do I book a desk?"
    assert c.needs_retrieval


# --- carrying the conversation's topic ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("How do I update a classic worker node?", ["classic worker node"]),
        ("I just look through the catalog for Desk Tags?", ["Desk Tags", "catalog"]),
        ("what is the difference between lite and standard plans?", ["lite", "standard plans"]),
        ("thanks, that is all", []),
        # a common verb, a trailing participle or loose adjective ends the phrase
        ("Where is the wall mount stored when the kiosk is shipped?", ["wall mount", "kiosk"]),
        ("Are the Desk Tags plans available for teams?", ["Desk Tags", "Desk Tags plans", "teams"]),
        ("Is the data store backed up regularly?", ["data store"]),  # "store" a noun after "data"
        ("we got two labels at once", ["two labels"]),  # "once": an adverb, no topic
    ],
)
def test_topic_phrases_are_noun_phrases(text: str, phrases: list[str]) -> None:
    assert topic_phrases(text) == phrases


@pytest.mark.parametrize(
    ("message", "standalone"),
    [
        ("Is it free?", "Is the Room Panel free?"),  # "it" is the panel
        ("Is it free to cancel?", "Is it free to cancel?"),  # "it" is cancelling
        ("Is it possible?", "Is it possible?"),
    ],
)
def test_it_before_an_adjective_is_a_thing_unless_a_clause_follows(
    message: str, standalone: str
) -> None:
    assert resolve_followup(message, "How do I mount the Room Panel?").text == standalone


@pytest.mark.parametrize(
    ("message", "earlier", "topic"),
    [
        # a name in the first turn beats a common noun phrase
        ("Is it free?", ["Which kiosk plans does Room Panel have?", "And the prices?"],
         "Room Panel"),
        # no name: the phrase whose head the later turns repeat
        ("Can I move it?", ["How do I mount a wall bracket on glass?", "is the bracket heavy?"],
         "wall bracket"),
        # what the message already names is not carried
        ("Does the Room Panel need it?", ["Is Room Panel sold with PoE?"], "PoE"),
        ("Is it free?", [], None),
        ("thanks", ["thank you"], None),
    ],
)  # fmt: skip
def test_conversation_topic(message: str, earlier: list[str], topic: str | None) -> None:
    assert conversation_topic(message, earlier) == topic


@pytest.mark.parametrize(
    ("message", "earlier", "carried"),
    [
        ("Is it waterproof?", ["What is Room Panel?", "How many colours?"],
         "Is Room Panel waterproof?"),
        ("can they be recycled?", ["Tell me about desk tags", "How long do batteries last?"],
         "can desk tags be recycled?"),
        # the pronoun must agree: "it" is not "desk tags"
        ("can it be recycled?", ["Tell me about desk tags"], None),
        # a person, a possessive or a demonstrative is never filled with the topic
        ("what did he say?", ["What is Room Panel?"], None),
        ("what is its price?", ["What is Room Panel?"], None),
        ("why is that?", ["What is Room Panel?"], None),
        # a pronoun the message resolves itself, no pronoun at all, a new aspect
        ("If the kiosk breaks, can I fix it?", ["What is Room Panel?"], None),
        ("Is the kiosk free?", ["What is Room Panel?"], None),
    ],
)  # fmt: skip
def test_carry_first_topic(message: str, earlier: list[str], carried: str | None) -> None:
    assert carry_first_topic(message, earlier) == carried


@pytest.mark.parametrize(("message", "standalone"), [("refund", "refund"), ("human", "human")])
async def test_a_fragment_read_as_a_request_keeps_its_word(
    router: Router, message: str, standalone: str
) -> None:
    c = await condense(message, [], chat_model=None, router=router, prev_standalone=None)
    assert c.intent in {"refund_request", "human_handoff"}
    assert c.standalone_question == standalone


async def test_a_topic_fragment_is_searched_as_written(router: Router) -> None:
    earlier = [Turn("user", "How do I export my booking data?")]
    c = await condense("backups.", earlier, chat_model=None, router=router, prev_standalone=None)
    assert c.standalone_question == "backups."
    assert c.needs_retrieval


# --- offline condensation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "intent"),
    [
        # read as an order question, but it names no order: the router's next reading
        ((("order_status", 0.6), ("troubleshooting", 0.2), ("how_to", 0.1)), "troubleshooting"),
        # a person-only intent or an acknowledgment is never taken as second best
        ((("order_status", 0.6), ("refund_request", 0.3), ("feature_question", 0.1)),
         "feature_question"),
        ((("order_status", 0.6), ("acknowledgment", 0.3), ("account", 0.1)), "account"),
        ((("order_status", 0.8), ("cancellation", 0.1), ("acknowledgment", 0.1)), "how_to"),
    ],
)  # fmt: skip
async def test_an_order_reading_that_names_no_order_takes_the_next_reading(
    router: Router, monkeypatch: pytest.MonkeyPatch, top: tuple[tuple[str, float], ...], intent: str
) -> None:
    async def route(text: str) -> RouteDetail:
        return RouteDetail(top[0][0], top[0][1], "neutral", None, None, top)

    monkeypatch.setattr(router, "route", route)
    message = "The screen keeps a faint copy of the last picture"
    c = await condense(message, [], chat_model=None, router=router, prev_standalone=None)
    assert c.intent == intent, c
    named = await condense(
        "Where is ORD-1042?", [], chat_model=None, router=router, prev_standalone=None
    )
    assert named.intent == "order_status"  # an order reference keeps the order reading


async def test_empty_message(router: Router) -> None:
    c = await condense("   ", [], chat_model=None, router=router, prev_standalone=None)
    assert (c.intent, c.needs_retrieval, c.needs_tools) == ("other", False, ())


@pytest.mark.parametrize(
    ("message", "intent"), [("thanks!", "acknowledgment"), ("that fixed it", "acknowledgment"),
                            ("hello", "other")]
)  # fmt: skip
async def test_social_turns_skip_retrieval(router: Router, message: str, intent: str) -> None:
    history = [Turn("user", "where is ORD-1042?"), Turn("assistant", "It shipped today.")]
    c = await condense(
        message, history, chat_model=None, router=router, prev_standalone="Where is ORD-1042?"
    )
    assert (c.intent, c.needs_retrieval, c.needs_tools) == (intent, False, ())
    assert c.standalone_question == message  # not rewritten into the previous question
    assert c.mentioned_order_id is None


async def test_follow_up_carries_the_order_reference(router: Router) -> None:
    history = [Turn("user", "where is ord-1042?"), Turn("assistant", "It shipped on Monday.")]
    c = await condense(
        "when will it arrive?",
        history,
        chat_model=None,
        router=router,
        prev_standalone="where is ORD-1042?",
    )
    assert c.standalone_question == "when will ORD-1042 arrive?"
    assert c.mentioned_order_id == "ORD-1042"
    assert c.needs_tools == ("lookupOrder",)
    assert c.source == "offline" and c.fallback_reason is None


async def test_without_prev_standalone_the_last_user_turn_is_used(router: Router) -> None:
    history = [Turn("user", "Has ORD-2000 shipped?"), Turn("assistant", "Yes.")]
    c = await condense("when will it arrive?", history, chat_model=None, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.standalone_question == "when will ORD-2000 arrive?"
    assert c.mentioned_order_id == "ORD-2000"


@pytest.mark.parametrize(
    ("message", "tools"),
    [
        ("status of ORD-1042 please", ("lookupOrder",)),
        ("where is my order", ("listRecentOrders",)),
        ("any news on CASE-7F3K2Q?", ("lookupCase",)),
        ("how do I mount the panel", ()),
    ],
)
async def test_tools_for_identifiers(router: Router, message: str, tools: tuple[str, ...]) -> None:
    c = await condense(message, [], chat_model=None, router=router, prev_standalone=None)
    assert c.needs_tools == tools


async def test_identifiers_and_case_ref(router: Router) -> None:
    c = await condense(
        "CASE-7F3K2Q: HL-RP10 shows AUTH_302", [], chat_model=None, router=router,
        prev_standalone=None,
    )  # fmt: skip
    assert c.identifiers == ("CASE-7F3K2Q", "HL-RP10", "AUTH_302")
    assert c.mentioned_case_ref == "CASE-7F3K2Q"


async def test_explicit_human_request(router: Router) -> None:
    c = await condense("I want to talk to a human", [], chat_model=None, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.explicit_human_request and c.intent == "human_handoff"
    c = await condense(
        "I want a refund, let me speak to a person", [], chat_model=None, router=router,
        prev_standalone=None,
    )  # fmt: skip
    assert c.explicit_human_request and c.intent in ("refund_request", "human_handoff")
    c = await condense("add a person to our workspace", [], chat_model=None, router=router,
                       prev_standalone=None)  # fmt: skip
    assert not c.explicit_human_request


async def test_policy_question_vs_request(router: Router) -> None:
    ask = await condense("what is your refund policy?", [], chat_model=None, router=router,
                         prev_standalone=None)  # fmt: skip
    want = await condense("I want my money back", [], chat_model=None, router=router,
                          prev_standalone=None)  # fmt: skip
    assert ask.intent == "billing_question" and want.intent == "refund_request"


async def test_sentiment_comes_from_the_customers_words(router: Router) -> None:
    c = await condense(
        "WHY IS IT STILL NOT SHIPPED", [Turn("user", "where is ORD-1042")], chat_model=None,
        router=router, prev_standalone="where is ORD-1042",
    )  # fmt: skip
    assert c.sentiment == "angry"
    assert c.mentioned_order_id == "ORD-1042"


# --- the model path ------------------------------------------------------------------------------

GOOD = {
    "standaloneQuestion": "When will order ORD-1042 arrive?",
    "intent": "order_status",
    "needsRetrieval": True,
    "needsTools": ["lookupOrder"],
    "sentiment": "neutral",
    "mentionedOrderId": "ORD-1042",
    "explicitHumanRequest": False,
}
HISTORY = [Turn("user", "where is ORD-1042?"), Turn("assistant", "It shipped on Monday.")]


async def test_model_output_is_used_and_the_prompt_is_complete(router: Router) -> None:
    model = ScriptedChatModel(GOOD)
    c = await condense("when will it arrive?", HISTORY, chat_model=model, router=router,
                       prev_standalone="where is ORD-1042?")  # fmt: skip
    assert c.source == "model" and c.fallback_reason is None
    assert c.standalone_question == "When will order ORD-1042 arrive?"
    assert (c.intent, c.needs_tools, c.mentioned_order_id) == (
        "order_status", ("lookupOrder",), "ORD-1042",
    )  # fmt: skip
    assert c.clamped_fields == ()
    (call,) = model.calls
    assert call["system"] == SYSTEM_PROMPT and call["schema"] == CONDENSE_SCHEMA
    content = call["messages"][-1]["content"]
    assert "<latest>\nwhen will it arrive?\n</latest>" in content
    assert "customer: where is ORD-1042?" in content and "assistant: It shipped" in content
    for rule in ("never answer", "Do not add any constraint", "do not guess", "JSON"):
        assert rule in SYSTEM_PROMPT
    for intent in INTENTS:
        assert intent in SYSTEM_PROMPT


async def test_unknown_intent_is_clamped_not_trusted(router: Router) -> None:
    model = ScriptedChatModel(dict(GOOD, intent="escalate_immediately", sentiment="livid"))
    c = await condense("when will it arrive?", HISTORY, chat_model=model, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.source == "model"
    assert (c.intent, c.sentiment) == ("other", "neutral")
    assert {"intent", "sentiment"} <= set(c.clamped_fields)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("this is not json", "invalid_json"),
        ('{"standaloneQuestion": "x"', "invalid_json"),
        (["order_status"], "invalid_json"),
        ({"answer": "It arrives Tuesday"}, "invalid_json"),
        (None, "invalid_json"),
        (ProviderError("timeout"), "model_error: ProviderError"),
        (TimeoutError(), "model_error: TimeoutError"),
        (RuntimeError("boom"), "model_error: RuntimeError"),
    ],
)
async def test_bad_model_falls_back_offline(router: Router, reply: object, reason: str) -> None:
    c = await condense(
        "when will it arrive?", HISTORY, chat_model=ScriptedChatModel(reply), router=router,
        prev_standalone="where is ORD-1042?",
    )  # fmt: skip
    assert c.source == "offline" and c.fallback_reason == reason
    assert c.standalone_question == "when will ORD-1042 arrive?"
    assert c.intent in INTENTS


async def test_model_json_text_is_parsed(router: Router) -> None:
    import json

    model = ScriptedChatModel(json.dumps(GOOD))
    c = await condense("when will it arrive?", HISTORY, chat_model=model, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.source == "model" and c.intent == "order_status"


async def test_model_may_not_invent_an_order_reference(router: Router) -> None:
    model = ScriptedChatModel(dict(GOOD, mentionedOrderId="ORD-9999"))
    c = await condense("when will it arrive?", [], chat_model=model, router=router,
                       prev_standalone=None)  # fmt: skip
    assert c.mentioned_order_id is None
    assert "lookupOrder" not in c.needs_tools
    assert "mentioned_order_id" in c.clamped_fields


async def test_deterministic_signals_are_ored_into_the_model_output(router: Router) -> None:
    reply = dict(GOOD, mentionedOrderId=None, needsTools=[], explicitHumanRequest=False,
                 intent="order_status")  # fmt: skip
    c = await condense(
        "ORD-2231 is late, I want to talk to a human", [], chat_model=ScriptedChatModel(reply),
        router=router, prev_standalone=None,
    )  # fmt: skip
    assert c.mentioned_order_id == "ORD-2231"
    assert c.needs_tools == ("lookupOrder",)
    assert c.explicit_human_request is True


# --- the real model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_router() -> Router:
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    return Router(MiniLMEmbedder(), tenant=SEED_TENANT)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("message", "history", "prev", "intent", "standalone"),
    [
        ("I want my money back for last month", [], None, {"refund_request"}, None),
        ("what's your refund policy", [], None, {"billing_question", "how_to"}, None),
        ("thanks that fixed it", [Turn("user", "panel is offline")], "panel is offline",
         {"acknowledgment"}, "thanks that fixed it"),
        ("does it work with Teams rooms?", [Turn("user", "Tell me about the Room Panel")],
         "Tell me about the Room Panel", {"feature_question", "how_to"},
         "does the Room Panel work with Teams rooms?"),
        ("has it shipped yet?", [Turn("user", "I ordered desk tags in ORD-3120")],
         None, {"order_status"}, "has ORD-3120 shipped yet?"),
    ],
)  # fmt: skip
async def test_minilm_condense(
    minilm_router: Router,
    message: str,
    history: list[Turn],
    prev: str | None,
    intent: set[str],
    standalone: str | None,
) -> None:
    c = await condense(message, history, chat_model=None, router=minilm_router,
                       prev_standalone=prev)  # fmt: skip
    assert c.intent in intent, c
    assert c.standalone_question == (standalone or message)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("message", "intents", "tools"),
    [
        ("When does my subscription renew?", {"billing_question", "account"},
         ("lookupSubscription",)),
        ("how many seats do we have on my plan", {"billing_question", "account", "how_to"},
         ("lookupSubscription",)),
        ("How do I return a broken room panel?", {"how_to", "troubleshooting"}, ()),
        ("how do refunds work?", {"billing_question"}, ()),
        ("refund me", {"refund_request"}, ()),
        ("please cancel our subscription", {"cancellation"}, ()),
        ("Und wo ist meine Bestellung?", {"order_status"}, ("listRecentOrders",)),
        ("Et où en est ma commande ?", {"order_status"}, ("listRecentOrders",)),
        ("where is my order", {"order_status"}, ("listRecentOrders",)),
        ("how long does shipping take?", {"order_status", "how_to"}, ()),
    ],
)  # fmt: skip
async def test_minilm_intent_and_tools(
    minilm_router: Router, message: str, intents: set[str], tools: tuple[str, ...]
) -> None:
    """Questions about a policy are answered, requests escalate; tools come from the route."""
    c = await condense(message, [], chat_model=None, router=minilm_router, prev_standalone=None)
    assert c.intent in intents, c
    assert c.needs_tools == tools, c


_ORDERS = [
    {"orderRef": "ORD-3", "status": "shipped"},
    {"orderRef": "ORD-2", "status": "delivered"},
    {"orderRef": "ORD-1", "status": "canceled"},
]


@pytest.mark.parametrize(
    ("orders", "question", "ref"),
    [
        (_ORDERS, "Where is my order?", "ORD-3"),  # the one still under way
        (_ORDERS, "when will my order arrive?", "ORD-3"),
        (_ORDERS, "Show my recent orders", None),  # the list was asked for
        (_ORDERS, "Wo sind meine Bestellungen?", None),
        ([*_ORDERS, {"orderRef": "ORD-4", "status": "processing"}], "Where is my order?", None),
        (_ORDERS[1:], "Where is my order?", None),  # nothing under way
        ([{"orderRef": "ORD-5", "status": "on_hold"}], "Et où en est ma commande ?", "ORD-5"),
    ],
)
def test_the_open_order(orders: list[dict[str, str]], question: str, ref: str | None) -> None:
    assert the_open_order(orders, question) == ref


def test_a_follow_up_is_searched_again_with_the_previous_subject() -> None:
    # the previous question's subject, else its longest noun phrase (an object, here)
    assert (
        with_previous_subject("how long are entries kept?", "How long do you keep audit logs?")
        == "how long are entries kept regarding audit logs?"
    )
    assert (
        with_previous_subject("Is it waterproof?", "How heavy is the Gizmo Pro?")
        == "Is it waterproof regarding the Gizmo Pro?"
    )
    # nothing to carry: no earlier message, the subject already named, a name of its own
    assert with_previous_subject("how long are entries kept?", "") is None
    named = with_previous_subject("are audit logs exported?", "How long are audit logs kept?")
    assert named is None
    assert with_previous_subject("Tell me about Lisbon.", "What is the capital of Spain?") is None


def test_a_bare_quality_or_quantity_is_left_as_written() -> None:
    # no rule guesses the noun of "one" or of a bare "how many": the message stays as written
    asked = "What does a red light on the gadget mean?"
    assert resolve_followup("and a purple one?", asked) == ("and a purple one?", None)
    assert resolve_followup("how many can I have?", "How do I create a widget key?").rule is None


@pytest.mark.parametrize(
    ("earlier", "message", "expected"),
    [
        # the tenant's product is what the question is about, not the feature it asks after
        (
            "Does the room panel support PoE?",
            "what wifi bands does it use?",
            "what wifi bands does the room panel use?",
        ),
        (
            "Can the Visitor Kiosk print badges?",
            "does it need PoE?",
            "does the Visitor Kiosk need PoE?",
        ),
        # a phrase that continues past the product keeps its head noun
        (
            "Is the room panel firmware up to date?",
            "how do I update it?",
            "how do I update the room panel firmware?",
        ),
    ],
)
def test_a_named_product_is_the_subject_a_pronoun_refers_to(
    earlier: str, message: str, expected: str
) -> None:
    vocab = Identifiers(SEED_TENANT)
    assert resolve_followup(message, earlier, vocab).text == expected


def test_what_if_after_a_how_to_carries_the_subject_not_the_steps() -> None:
    """A mishap after a how-to asks what to do when it happens, about the same subject."""
    got = resolve_followup(
        "what if I lose my phone?",
        "How do I turn on two-factor authentication?",
        Identifiers(SEED_TENANT),
    )
    assert got.text == "what if I lose my phone regarding two-factor authentication?"
