"""The offline provider: extractive answers with citations, factual tool sentences, short thanks."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import pytest

from app.providers.chat import build_chat_model, build_fallback_chat_model
from app.providers.chat.base import (
    ChatMessage,
    GenerationRequest,
    Passage,
    PassageLike,
    StreamDone,
    TextDelta,
    ToolOutcome,
)
from app.providers.chat.offline import (
    OfflineChatModel,
    extract_answer,
    tool_sentences,
)
from app.providers.errors import ProviderError
from app.settings import Settings
from app.text import acknowledgment_reply
from app.turn.citations import check_citations
from app.turn.tools import ToolResult
from tests.fakes_chat import AUTH_302, NO_ORDER, ORDER, SUBSCRIPTION, TICKET, WEBHOOKS


def body(text: str) -> str:
    """A selected answer without its lead line (the section's heading path, cited)."""
    lead, sep, rest = text.partition("\n")
    return rest if sep and lead.endswith("]:") else text


def request(
    question: str,
    passages: Sequence[PassageLike] = (),
    tools: Sequence[ToolOutcome] = (),
    **kw: object,
) -> GenerationRequest:
    return GenerationRequest(
        system="s",
        messages=[ChatMessage("user", question)],
        question=question,
        original=question,
        passages=passages,
        tool_results=tools,
        **kw,  # type: ignore[arg-type]
    )


async def test_extractive_answer_cites_the_passage_it_quotes() -> None:
    model = OfflineChatModel()
    reply = await model.generate(request("What does AUTH_302 mean?", [AUTH_302, WEBHOOKS]))
    assert "AUTH_302" in reply.text and "signature did not verify" in reply.text
    check = check_citations(reply.text, 2)
    assert check.valid == [1] and check.invalid == 0
    assert reply.usage.input == 0 and reply.model == "offline"


async def test_extractive_answer_prefers_the_top_ranked_passage_on_a_tie() -> None:
    twin = dataclasses.replace(AUTH_302, id="copy#0", doc_id="copy")
    text = extract_answer("What does AUTH_302 mean?", [twin, AUTH_302])
    assert check_citations(text, 2).valid == [1]


async def test_a_procedure_is_quoted_whole_with_its_lead_in() -> None:
    text = extract_answer("How do I verify webhook signatures?", [WEBHOOKS, AUTH_302])
    lead_in = "Every request has an X-Harborline-Signature header. To verify it:"
    assert body(text).startswith(lead_in), text
    assert "1. Take the raw request body" in text and "3. Reject requests" in text
    assert text.startswith("Webhooks › Verifying signatures [1]:\n"), text  # cited at its head


async def test_the_second_passage_is_cited_with_its_own_number() -> None:
    text = extract_answer("Room Panel stuck pairing, how to reset it?", [WEBHOOKS, TICKET])
    assert "Hold the power button" in text
    assert check_citations(text, 2).valid == [2]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            ORDER,
            [
                "Order ORD-1042 is shipped (placed 2026-07-01).",
                "It shipped on 2026-07-03 with UPS, tracking number 1Z999AA10123456784.",
                "It contains 2 × Room Panel (HL-RP10).",
            ],
        ),
        (NO_ORDER, ["I don't see an order ORD-9999 on your account."]),
        (
            SUBSCRIPTION,
            ["You're on the Pro plan (active) with 25 seats; it renews on 2026-10-01 at 225.00."],
        ),
        (
            ToolResult(
                "listRecentOrders",
                ok=True,
                found=True,
                data=[
                    {"orderRef": "ORD-1042", "status": "shipped", "placedAt": "2026-07-01"},
                    {"orderRef": "ORD-1043", "status": "processing", "placedAt": "2026-07-09"},
                ],
            ),
            [
                "Your most recent orders are ORD-1042: shipped, placed 2026-07-01; "
                "ORD-1043: processing, placed 2026-07-09."
            ],
        ),
        (
            ToolResult(
                "lookupCase",
                ok=True,
                found=True,
                data={
                    "caseRef": "CASE-7KQ2ZD",
                    "status": "open",
                    "openedAt": "2026-07-01T09:30",
                    "slaDueAt": "2026-07-01T13:30",
                },
            ),
            [
                "Case CASE-7KQ2ZD is open; it was opened 2026-07-01 at 09:30 and a first "
                "response is due by 2026-07-01 at 13:30."
            ],
        ),
        (
            ToolResult("lookupOrder", ok=True, found=True, data={"garbage": [1, 2]}),
            ["Order Your order is in an unknown state."],
        ),
        (ToolResult("lookupOrder", ok=True, found=True, data="??"), None),
        (ToolResult("lookupOrder", ok=False, found=False), ["I couldn't look that up just now."]),
    ],
)
def test_tool_sentences(result: ToolResult, expected: list[str] | None) -> None:
    if expected is None:
        expected = ["I looked that up but couldn't read the result."]
    assert tool_sentences(result) == expected


async def test_tool_facts_answer_order_questions_without_passage_padding() -> None:
    reply = await OfflineChatModel().generate(
        request("where is my order ORD-1042?", [WEBHOOKS], [ORDER], intent="order_status")
    )
    assert reply.text.startswith("Order ORD-1042 is shipped")
    assert "[1]" not in reply.text  # a found order is the answer; docs are not cited


async def test_a_strong_passage_follows_an_order_nobody_named() -> None:
    # the order was picked for the customer (no reference typed): the passage that answers
    # what they asked still follows the order's facts; a weak one, or a named order, does not
    question = "my room panels verify webhook signatures wrong"
    strong = await OfflineChatModel().generate(request(question, [WEBHOOKS], [ORDER]))
    assert strong.text.startswith("Order ORD-1042 is shipped") and "[1]" in strong.text
    weak = await OfflineChatModel().generate(
        request(question, [WEBHOOKS], [ORDER], confidence="weak")
    )
    assert "[1]" not in weak.text
    named = await OfflineChatModel().generate(
        request("does ORD 1042 verify webhook signatures?", [WEBHOOKS], [ORDER])
    )
    assert "[1]" not in named.text
    # a subscription lookup that speaks to the question (its renewal, its seats) stands alone;
    # one that shares no word with it, beside a strong passage, gives way to the passage
    renewal = "when does my plan renew, and do webhook signatures change then?"
    account = await OfflineChatModel().generate(request(renewal, [WEBHOOKS], [SUBSCRIPTION]))
    assert "[1]" not in account.text and "renews on 2026-10-01" in account.text
    beside = await OfflineChatModel().generate(request(question, [WEBHOOKS], [SUBSCRIPTION]))
    assert "[1]" in beside.text and "renews" not in beside.text, beside.text
    weak = await OfflineChatModel().generate(
        request(question, [WEBHOOKS], [SUBSCRIPTION], confidence="weak")
    )
    assert "renews" not in weak.text and "[1]" in weak.text  # a weak passage still speaks to it
    none = await OfflineChatModel().generate(
        request(question, [WEBHOOKS], [SUBSCRIPTION], confidence="none")
    )
    assert "renews" in none.text  # when no passage does, the lookup is what there is


async def test_not_found_tool_result_is_said_honestly() -> None:
    reply = await OfflineChatModel().generate(
        request("where is ORD-9999?", (), [NO_ORDER], confidence="none")
    )
    assert reply.text.startswith("I don't see an order ORD-9999 on your account.")
    assert "person" in reply.text


async def test_weak_confidence_is_hedged_and_nothing_relevant_is_honest() -> None:
    weak = await OfflineChatModel().generate(
        request("What does AUTH_302 mean?", [AUTH_302], confidence="weak")
    )
    assert weak.text.endswith("I can connect you with a person.")
    empty = await OfflineChatModel().generate(request("What is the meaning of life?"))
    assert empty.text.startswith("I don't have enough information")
    assert "connect you with a person" in empty.text  # plainly, and a person is offered
    # passages that only share the topic, in the none band: still the plain reply, no extract
    none = await OfflineChatModel().generate(
        request("What does AUTH_302 mean?", [AUTH_302], confidence="none")
    )
    assert none.text == empty.text


@pytest.mark.parametrize(
    ("message", "name", "expected"),
    [
        ("thanks!", "Ana Lima", "You're welcome, Ana! Is there anything else I can help with?"),
        ("thank you so much", None, "You're welcome! Is there anything else I can help with?"),
        (
            "that worked, perfect",
            "Ben",
            "Glad that sorted it, Ben! Let me know if anything else comes up.",
        ),
        ("ok bye", "Ana", "Thanks for getting in touch, Ana. Have a great day!"),
        ("ok", "  ", "Great. Is there anything else I can help with?"),
    ],
)
def test_acknowledgment_reply(message: str, name: str | None, expected: str) -> None:
    assert acknowledgment_reply(message, name) == expected


async def test_acknowledgment_intent_ignores_passages() -> None:
    reply = await OfflineChatModel().generate(
        request("thanks", [AUTH_302], intent="acknowledgment", customer_name="Ana Lima")
    )
    assert reply.text == "You're welcome, Ana! Is there anything else I can help with?"


async def test_stream_deltas_concatenate_to_the_reply() -> None:
    events = [
        e async for e in OfflineChatModel().stream(request("What does AUTH_302 mean?", [AUTH_302]))
    ]
    assert isinstance(events[-1], StreamDone)
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3 and "".join(deltas) == events[-1].reply.text


async def test_complete_json_is_not_offered_offline() -> None:
    with pytest.raises(ProviderError):
        await OfflineChatModel().complete_json("s", [ChatMessage("user", "x")], {"type": "object"})


def test_factory_defaults_to_offline(settings: Settings) -> None:
    assert build_chat_model(settings).name == "offline"
    assert build_fallback_chat_model().name == "offline"


# --- answer quality (issue 9): general mechanisms on made-up passages -------------------------

GADGET_NOTE = Passage(
    id="t-9",
    doc_id="t-9",
    kind="ticket",
    title="Gadget sync stuck",
    breadcrumb="Resolved ticket › gadget",
    text="Customer could not sync the Gadget.\nResolution: Changed the Gadget sync token and "
    "restarted the Gadget sync service for this customer.",
)
GADGET_GUIDE = Passage(
    id="gadget-sync#2",
    doc_id="gadget-sync",
    kind="doc",
    title="Gadget sync",
    breadcrumb="Gadget sync › Setting up sync",
    text="## Setting up sync\n\n1. Open Settings and choose Sync.\n2. Pick the Gadget from the "
    "list.\n3. Confirm the code shown on the Gadget screen.",
)
PRICES = Passage(
    id="plans#1",
    doc_id="plans",
    kind="doc",
    title="Plans",
    breadcrumb="Plans › Comparison",
    text="Every plan includes the Gadget app.\n\n| | Basic | Plus |\n|---|---|---|\n"
    "| Price per seat per month | $0 | $7 |\n| Devices | 2 | 10 |",
)
CHECK_IN = Passage(
    id="visits#3",
    doc_id="visits",
    kind="doc",
    title="Visits",
    breadcrumb="Visits › Checking in",
    text="A visit must be confirmed by checking in:\n\n- at the front desk,\n"
    "- in the mobile app, or\n- from the reminder email.",
)


def test_how_to_prefers_the_articles_procedure_over_a_tickets_note() -> None:
    text = extract_answer("How do I set up Gadget sync?", [GADGET_NOTE, GADGET_GUIDE])
    assert "1. Open Settings" in text and "3. Confirm the code" in text
    assert "sync token" not in text
    assert check_citations(text, 2).valid == [2]


def test_a_price_question_takes_the_sentence_with_a_price() -> None:
    text = extract_answer("How much does Plus cost per seat?", [PRICES])
    assert "$7" in text


def test_list_items_are_kept_whole_without_joiner_fragments() -> None:
    text = extract_answer("How do I check in to a visit in the mobile app?", [CHECK_IN])
    assert "- in the mobile app" in text
    for line in text.splitlines():
        assert not line.rstrip(". ").endswith((" or", " and", ",")), text


async def test_weak_answers_say_what_they_cover_and_what_is_missing() -> None:
    model = OfflineChatModel()
    reply = await model.generate(
        request("Can the Gadget sync in Klingon?", [GADGET_GUIDE], confidence="weak")
    )
    assert reply.text.startswith("This is what I found in “Gadget sync › Setting up sync” [1]:")
    assert "don't mention Klingon" in reply.text and "person" in reply.text


# --- extracts that answer at length, from pages converted to plain text ------------------------

FAQ_PAGE = Passage(
    id="faq#0",
    doc_id="faq",
    kind="doc",
    title="Gadget help",
    breadcrumb="Gadget help",
    text="Home | Gadgets | Help | Contact\n"
    "Gadget help\n"
    "Skip to content\n"
    "How long does the battery last?\n"
    "The Gadget battery lasts about two years in normal use.\n"
    "How do I reset the Gadget?\n"
    "Hold the Gadget button for ten seconds until the light blinks.",
)


def test_an_extract_gives_each_supporting_sentence_once() -> None:
    body = (
        "Gadget sync copies your settings to every Gadget on the account. "
        "Sync runs every hour while the Gadget is online. "
        "Sync settings are kept for thirty days after a Gadget is removed. "
        "The sync log lists each sync run with its time and result."
    )
    first = Passage(id="a#0", doc_id="a", kind="doc", title="Sync", breadcrumb="Sync", text=body)
    copy = dataclasses.replace(first, id="b#0", doc_id="b")  # the same page under two addresses
    text = extract_answer("How does Gadget sync work and how often does sync run?", [first, copy])
    assert "every hour" in text and "sync log" in text  # more than one sentence answers it
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        assert text.count(sentence.removesuffix(" [1].").rstrip(".")) == 1, text
    assert check_citations(text, 2).valid == [1]


STEPS_WITH_DETAILS = Passage(
    id="pair#1",
    doc_id="pair",
    kind="doc",
    title="Pairing a Gadget",
    breadcrumb="Pairing a Gadget",
    text="## Pairing a Gadget\n\n"
    "1. Open the Gadget app in one of these ways:\n\n"
    "* from the home screen,\n* from the Settings menu.\n\n"
    "2. Hold the pairing button ![button](img/pair.png) for five seconds.\n\n"
    "    gadget pair --wait\n\n"
    "3. Confirm the code shown on the Gadget.",
)


def test_a_numbered_procedure_stays_whole_across_sub_items_and_code() -> None:
    text = extract_answer("How do I pair a Gadget?", [STEPS_WITH_DETAILS])
    assert text.startswith("Pairing a Gadget [1]:\n"), text  # the section's heading, cited
    lines = body(text).splitlines()
    assert lines[0] == "1. Open the Gadget app in one of these ways:", text
    assert lines[1].startswith("   - from the home screen"), text  # the ways, under their step
    assert lines[3] == "2. Hold the pairing button for five seconds.", text  # no image markup
    assert lines[4] == "   gadget pair --wait", text  # the step's command, under it
    assert lines[5] == "3. Confirm the code shown on the Gadget.", text


def test_a_procedure_brings_its_closing_sentence_and_a_run_on_line_is_no_support() -> None:
    page = dataclasses.replace(
        STEPS_WITH_DETAILS,
        text=STEPS_WITH_DETAILS.text + "\n\nThe Gadget shows a green light once it is paired.\n\n"
        "## Battery\n\nThe battery lasts two years.",
    )
    text = extract_answer("How do I pair a Gadget?", [page])
    assert text.endswith("3. Confirm the code shown on the Gadget.\nThe Gadget shows a green light"
                         " once it is paired.")  # fmt: skip
    assert "battery" not in text  # the next section is not part of the procedure
    infobox = Passage(
        id="g#0",
        doc_id="g",
        kind="doc",
        title="Gadget",
        breadcrumb="Gadget",
        text="The Gadget is a pocket tracker made by Gadget Works since 2019.\n"
        "Gadget Type tracker Maker Gadget Works Released 2019 Weight 20 g Battery CR2032 "
        "Range 100 m Colours black white red Price 25 USD Successor Gadget 2 Status active\n"
        "The Gadget tracker pairs with phones over Bluetooth.",
    )
    text = extract_answer("What is the Gadget tracker?", [infobox])
    assert "pocket tracker" in text and "Bluetooth" in text and "Weight" not in text, text


# A German product page written for these tests: its sections are headed by the light's state,
# and only the product's own introduction names the product by its alias.
_LAMP_INTRO = Passage(
    id="lampe-einrichten#0",
    doc_id="lampe-einrichten",
    kind="doc",
    title="Statuslampe einrichten",
    breadcrumb="Statuslampe einrichten",
    text="# Statuslampe einrichten\n\nDie Statuslampe (Artikelnummer SL-1) ist eine kleine "
    "Leuchte neben der Tür eines Raums. Sie zeigt auf einen Blick, ob der Raum frei ist.",
)
_LAMP_RED = Passage(
    id="lampe-status#3",
    doc_id="lampe-status",
    kind="doc",
    title="Farben der Statuslampe",
    breadcrumb="Farben der Statuslampe › Rot blinkend",
    text="### Rot blinkend\n\nEin Update wurde nicht abgeschlossen. Die Lampe versucht es "
    "dreimal und kehrt dann zur vorherigen Version zurück.",
)
_LAMP_YELLOW = Passage(
    id="lampe-status#4",
    doc_id="lampe-status",
    kind="doc",
    title="Farben der Statuslampe",
    breadcrumb="Farben der Statuslampe › Gelb blinkend",
    text="### Gelb blinkend\n\nDie Lampe hat keine Netzwerkverbindung. Prüfen Sie Kabel und "
    "Switch-Port.",
)
_LAMP_NAMES = {"statuslampe": "Status Light", "status light": "Status Light"}


async def test_a_german_question_quotes_the_section_about_what_it_asks() -> None:
    """The product the question names is its subject: the sentence that only names the product
    loses to the section headed by what is asked (yellow, blinking), which is quoted with its
    heading; German stop words and endings ("blinkt" / "blinkend") count as German."""
    passages = [_LAMP_INTRO, _LAMP_RED, _LAMP_YELLOW]
    question = "Was bedeutet es, wenn die Statuslampe gelb blinkt?"
    model = OfflineChatModel()
    reply = await model.generate(
        request(question, passages, locale="de", product_names=_LAMP_NAMES, confidence="weak")
    )
    lead = "“Farben der Statuslampe › Gelb blinkend” [3]:\nDie Lampe hat keine Netzwerkverbindung"
    assert lead in reply.text, reply.text
    assert "Artikelnummer" not in reply.text and "Rot blinkend" not in reply.text
    assert check_citations(reply.text, 3).valid == [3]


def test_german_and_french_words_are_read_in_their_language() -> None:
    from app.providers.chat.offline import Reading, terms

    de, fr = Reading.of("de", None), Reading.of("fr", None)
    assert terms("Was bedeutet es, wenn das Panel blinkt?", de) == {"bedeut", "panel", "blink"}
    assert terms("blinkend", de) == terms("blinken", de) == {"blink"}
    assert "kein" in terms("Die Lampe hat keine Verbindung", de)  # negation is kept
    assert terms("Que signifie le voyant qui clignote ?", fr) == {"signifi", "voyant", "clignot"}
    assert terms("clignotement", fr) == {"clignot"}
    assert Reading.of("es", None).language == "en"  # a language without word lists reads as en
    names = Reading.of("de", {"raumpanel": "Room Panel"})
    assert terms("Das Raumpanel blinkt", names) == {"room", "panel", "blink"}


def test_german_nouns_are_not_names_the_articles_fail_to_mention() -> None:
    from app.providers.chat.offline import missing_names

    battery = Passage(
        id="b",
        doc_id="b",
        kind="doc",
        title="Batterien im Desk Tag wechseln",
        breadcrumb="Batterien im Desk Tag wechseln",
        text="Jeder Desk Tag hat zwei Batterien.",
    )
    question = "Wie wechsle ich die Batterie im Desk Tag?"
    assert missing_names(question, [battery], language="de") == []
    # read as English, a capitalised word inside the question is a name, and it is missing
    assert missing_names(question, [battery]) == ["Batterie"]
    # numbers and identifiers still count in German
    assert missing_names("Was bedeutet Fehler AUTH_999?", [battery], language="de") == ["AUTH_999"]


def test_a_procedure_with_sub_items_quotes_each_line_once() -> None:
    steps = Passage(
        id="s",
        doc_id="s",
        kind="doc",
        title="Two-step sign-in",
        breadcrumb="Two-step sign-in › Turning it on",
        text="1. Open Account → Security.\n2. Choose a method:\n   - **App** — scan the code.\n"
        "   - **Key** — touch the key.\n3. Save your recovery codes.",
    )
    text = extract_answer("How do I turn on two-step sign-in?", [steps])
    lines = body(text).splitlines()
    assert len(lines) == len(set(lines)) == 5, text
    assert lines[2].startswith("   - App") and lines[4].startswith("3. Save")


RATE_LIMITS = Passage(
    id="limits#4",
    doc_id="limits",
    kind="doc",
    title="API limits",
    breadcrumb="API limits › The error response",
    text="## The error response\n\nWhen a key goes over its rate limit, the API returns:\n\n"
    '```\nHTTP/1.1 429 Too Many Requests\n{"error": "rate limit exceeded for this API key"}\n```'
    "\n\nEach API key may send 300 requests a minute; wait for the rate limit window to reset.",
)


SIGNALS = Passage(
    id="signals#1",
    doc_id="signals",
    kind="doc",
    title="Beacon status lights",
    breadcrumb="Beacon status lights › Light reference",
    text="## Light reference\n\n| Light | Meaning |\n|---|---|\n| Solid green | Ready |\n"
    "| Solid red | Busy |\n| Solid amber | Starting soon |\n| Blinking red | Update failed |\n",
)
QUOTAS = Passage(
    id="quotas#1",
    doc_id="quotas",
    kind="doc",
    title="Upload quotas",
    breadcrumb="Upload quotas › Quotas by tier",
    text="## Quotas by tier\n\n| Tier | Uploads per day | File size |\n|---|---|---|\n"
    "| Basic | no uploads | — |\n| Plus | 40 | 2 GB |\n| Max | 400 | 20 GB |\n",
)


def test_a_row_the_question_describes_is_quoted_alone() -> None:
    # "solid red": not the Solid amber or the Blinking red row, which each share a word
    text = extract_answer("What does a solid red light mean?", [SIGNALS])
    assert "Busy" in text, text
    assert "Starting soon" not in text and "Update failed" not in text, text


def test_a_question_about_what_the_table_covers_gets_every_row() -> None:
    # "upload quota" is the table's subject: the Basic row is no answer on its own
    text = extract_answer("What is the upload quota?", [QUOTAS])
    assert "no uploads" in text and "40" in text and "400" in text, text
    rows = [line for line in body(text).splitlines() if line.startswith("| ")]
    assert len(rows) == 4, text  # the header and one row a line
    # a question naming a row still gets that row
    text = extract_answer("What is the upload quota on Plus?", [QUOTAS])
    assert "40" in text and "400" not in text, text


async def test_a_list_answer_starts_on_its_own_line_after_the_lookups_and_the_hedge() -> None:
    after_cancel = Passage(
        id="cancel#2",
        doc_id="cancel",
        kind="doc",
        title="Cancelling",
        breadcrumb="Cancelling › After you cancel",
        text="## After you cancel\n\n- Paid features stay active until the paid period ends.\n"
        "- No further charges are made after that date.\n",
    )
    question = "Do paid features stay active after I cancel?"
    reply = await OfflineChatModel().generate(
        request(question, [after_cancel], [NO_ORDER], confidence="weak")
    )
    lines = reply.text.split("\n")
    # the lookup's own facts first, then what the article says, introduced as the article's
    assert lines[0].startswith("I don't see an order ORD-9999 on your account."), reply.text
    assert lines[0].endswith("This is what I found in “Cancelling › After you cancel” [1]:")
    assert lines[1].startswith("- Paid features stay active"), reply.text
    hedged = await OfflineChatModel().generate(request(question, [after_cancel], confidence="weak"))
    first, _, rest = hedged.text.partition("\n")
    assert first.endswith("“Cancelling › After you cancel” [1]:"), hedged.text
    assert rest.startswith("- Paid features"), hedged.text


def test_how_long_is_answered_by_the_section_headed_how_long() -> None:
    page = Passage(
        id="sync#0",
        doc_id="sync",
        kind="doc",
        title="Syncing the Gadget archive",
        breadcrumb="Syncing the Gadget archive",
        text="# Syncing the Gadget archive\n\nThe Gadget archive syncs new records every six "
        "weeks. Admins can pause a sync for up to 30 days.\n\n## How long it takes\n\nA full "
        "archive sync takes about 12 minutes. Large archives can take an hour.\n\n## Errors\n\n"
        "A failed sync is retried within 2 hours.",
    )
    text = extract_answer("How long does a Gadget archive sync take?", [page])
    assert body(text).startswith("A full archive sync takes about 12 minutes"), text
    assert "six weeks" not in text and "2 hours" not in text, text  # other sections, other asks


def test_which_things_there_are_is_answered_by_the_list_headed_with_them() -> None:
    page = Passage(
        id="alerts#0",
        doc_id="alerts",
        kind="doc",
        title="Alerts",
        breadcrumb="Alerts",
        text="# Alerts\n\nAlerts tell your team about alert triggers as they happen, by email "
        "or push.\n\n## Triggers\n\n- `sensor.hot`, `sensor.cold`\n- `door.open`\n"
        "- `battery.low`\n",
    )
    text = extract_answer("Which alert triggers are there?", [page])
    assert body(text).startswith("- sensor.hot"), text  # the list, not the sentence with more words
    assert "door.open" in text and "battery.low" in text, text
    # a question that asks something else of the same words keeps the sentence
    text = extract_answer("How do alert triggers reach my team?", [page])
    assert body(text).startswith("Alerts tell your team"), text


def test_a_sections_first_sentence_is_read_with_its_heading() -> None:
    page = Passage(
        id="terms#0",
        doc_id="terms",
        kind="doc",
        title="Service terms",
        breadcrumb="Service terms",
        text="# Service terms\n\nThese terms explain what the availability guarantee covers "
        "and how credits for missed availability are paid.\n\n## Availability guarantee\n\n"
        "The service is up at least 99.9% of each month, maintenance excluded.\n\n"
        "## Credits\n\nCredits for missed availability go on the next invoice.",
    )
    text = extract_answer("What is the availability guarantee?", [page])
    assert "99.9%" in text, text  # the section's lead says what its heading names


def test_a_how_to_answer_takes_no_other_pages_sentence_about_another_task() -> None:
    bookings = Passage(
        id="bookings#3",
        doc_id="bookings",
        kind="doc",
        title="Bookings",
        breadcrumb="Bookings › Changing a booking",
        text="## Changing a booking\n\nOpen My bookings, select the booking and choose Cancel.",
    )
    plans = Passage(
        id="plans#1",
        doc_id="plans",
        kind="doc",
        title="Cancelling your plan",
        breadcrumb="Cancelling your plan › How to cancel",
        text="## How to cancel\n\nThe Owner opens Billing → Plans and selects Cancel plan.",
    )
    text = extract_answer("How do I cancel a booking?", [bookings, plans])
    assert "My bookings" in text and "Cancel plan" not in text, text


def test_a_section_on_the_asked_case_answers_over_the_general_steps() -> None:
    steps = Passage(
        id="orders#1",
        doc_id="orders",
        kind="doc",
        title="Placing orders",
        breadcrumb="Placing orders › Placing an order",
        text="## Placing an order\n\n1. Open Shop.\n2. Pick the items.\n3. Select Place order.\n",
    )
    repeat = Passage(
        id="orders#2",
        doc_id="orders",
        kind="doc",
        title="Placing orders",
        breadcrumb="Placing orders › Placing an order › Repeating orders",
        text="### Repeating orders\n\nChoose Repeat when placing an order. Repeating orders "
        "run for up to 12 months.",
    )
    text = extract_answer("How do I place a repeating order?", [steps, repeat])
    assert "12 months" in text and "Open Shop" not in text, text
    # the general question still gets the steps
    text = extract_answer("How do I place an order?", [steps, repeat])
    assert body(text).startswith("1. Open Shop."), text


STREAM_FIX = Passage(
    id="TCK-9",
    doc_id="TCK-9",
    kind="ticket",
    title="Log stream to Gadgetlog failing",
    breadcrumb="Resolved ticket › workspace",
    text="Our log stream to Gadgetlog stopped with delivery failures.\n\nResolution: The "
    "collector token had lost its index permission. Restored it; the backlog was delivered.",
)
STREAM_GUIDE = Passage(
    id="logs#4",
    doc_id="logs",
    kind="doc",
    title="Logs",
    breadcrumb="Logs › Streaming",
    text="Logs can be streamed to Gadgetlog. A log stream retries failed deliveries for a day.",
)


def test_a_reported_problem_is_answered_by_the_fix_of_the_ticket_that_reports_it() -> None:
    # the fix shares no word with the report: it is read with the ticket's reported symptom
    text = extract_answer("our log stream to Gadgetlog stopped", [STREAM_FIX, STREAM_GUIDE])
    assert body(text).startswith("The collector token had lost its index permission"), text
    assert "Our log stream" not in text  # the customer's own problem is never quoted back
    # a question about what the product can do is not answered by one case's fix
    text = extract_answer("Can logs be streamed to Gadgetlog?", [STREAM_FIX, STREAM_GUIDE])
    assert "collector token" not in text and "streamed to Gadgetlog" in text, text


def test_a_capability_question_is_answered_about_the_thing_not_the_verb() -> None:
    table = Passage(
        id="plans#1",
        doc_id="plans",
        kind="doc",
        title="Plans",
        breadcrumb="Plans › Compare",
        text=(
            "| | Free | Pro |\n|---|---|---|\n| Support first response | 3 days | 24 hours |\n"
            "| Chat app for Slack | ✓ | ✓ |\n| Seats | 10 | 500 |"
        ),
    )
    app = Passage(
        id="slack#0",
        doc_id="slack",
        kind="doc",
        title="Slack integration",
        breadcrumb="Slack integration",
        text="The Slack app lets people book rooms without leaving Slack. Install it from Slack.",
    )
    text = extract_answer("Do you support Slack?", [table, app])
    assert "Slack" in text and "Support first response" not in text, text


def test_a_lead_in_keeps_the_code_it_introduces_for_a_question_about_the_outcome() -> None:
    # "what happens when …": the response the page shows after "the API returns:" is the
    # answer; without it the lead-in was dropped as dangling and only side sentences remained
    text = extract_answer("What happens when a key goes over its rate limit?", [RATE_LIMITS])
    assert body(text).startswith("When a key goes over its rate limit, the API returns:"), text
    assert "```\nHTTP/1.1 429 Too Many Requests" in text, text
    assert "`HTTP/1.1 429 Too Many Requests`." not in text  # a line of code takes no full stop
    # a question for a value still gets the prose, not the code
    assert "HTTP/1.1" not in extract_answer("What is the API rate limit per key?", [RATE_LIMITS])
