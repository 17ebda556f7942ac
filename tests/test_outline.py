"""A procedure's outline from an article's numbered sections (app/turn/outline.py): pure."""

from __future__ import annotations

from app.providers.chat.base import Outline, Passage
from app.providers.chat.offline import outline_answer
from app.store.models import Chunk
from app.turn.outline import article_overview, names_the_title, procedure_outline, steps_of


def _chunks(title: str, sections: list[tuple[str, str]]) -> list[Chunk]:
    return [
        Chunk.model_validate(
            {
                "_id": f"a#{i}",
                "article_id": "a",
                "chunk_index": i,
                "text": text,
                "breadcrumb": f"{title} › {section}" if section else title,
                "title": title,
            }
        )
        for i, (section, text) in enumerate(sections)
    ]


GUIDE = _chunks(
    "Connecting the gadget",
    [
        ("", "The gadget connects to your workspace in a few minutes."),
        ("Before you start", "You need admin rights."),
        ("Step 1: Download the app", "Get the app from the store."),
        ("Step 2: Pair the gadget", "Hold the button for five seconds."),
        ("Step 2: Pair the gadget › Notes", "- **Acme routers:** turn off client isolation first."),
        ("Step 3: Name it", "Give the gadget a room name."),
        ("Step 4: Test", "Press Test and watch the light."),
    ],
)


def test_the_numbered_sections_in_order() -> None:
    assert [n for n, _ in steps_of(GUIDE)] == [1, 2, 3, 4]
    assert steps_of(GUIDE[:4]) == []  # two steps are not a procedure outline
    shuffled = _chunks("T", [("Step 1: A", "a"), ("Step 3: C", "c"), ("Step 4: D", "d")])
    assert steps_of(shuffled) == []  # a gap in the count: not one procedure
    german = _chunks("T", [("Schritt 1: A", "a"), ("Schritt 2: B", "b"), ("Schritt 3: C", "c")])
    assert [n for n, _ in steps_of(german)] == [1, 2, 3]


def test_a_broad_question_gets_the_steps_and_the_note_on_what_it_names() -> None:
    outline = procedure_outline("How do I set up the gadget with an Acme router?", GUIDE, "")
    assert outline is not None
    assert outline.steps == ("Download the app", "Pair the gadget", "Name it", "Test")
    assert outline.notes == ("Acme routers: turn off client isolation first.",)
    # a note the retrieved passages already hold is not repeated
    held = procedure_outline("How do I set up the gadget with an Acme router?", GUIDE, "Acme")
    assert held is not None and held.notes == ()


def test_a_question_about_one_step_gets_no_outline() -> None:
    assert procedure_outline("How do I pair the gadget?", GUIDE, "") is None
    assert procedure_outline("How do I test it?", GUIDE, "") is None


def test_the_outline_is_rendered_in_order_and_cited() -> None:
    outline = Outline("Connecting the gadget", ("Download the app", "Pair it"), ("Acme: off.",))
    passages = [
        Passage("t#1", "t", "ticket", "Ticket", "Resolved ticket", "x"),
        Passage("a#2", "a", "doc", "Connecting the gadget", "b", "y", outline=outline),
    ]
    strong = outline_answer(passages)
    assert strong.splitlines() == [
        "“Connecting the gadget” takes 2 steps:",
        "1. Download the app",
        "2. Pair it [2].",
        "Acme: off [2].",
    ]
    assert outline_answer(passages, confidence="weak").startswith("1. Download the app")
    assert outline_answer(passages[:1]) == ""


POLICY = _chunks(
    "Gadget loan policy",
    [
        ("", "This page describes when gadgets can be borrowed."),
        ("Teams › Small teams", "### Small teams\n\nSmall teams borrow **two** gadgets a month."),
        ("Teams › Large teams", "### Large teams\n\nLarge teams borrow ten. They book ahead."),
        ("Returns", "## Returns\n\nGadgets go back within 7 days. Late ones are charged."),
        ("Damage", "## Damage\n\nA damaged gadget is repaired at no cost."),
    ],
)


def test_a_question_about_the_whole_subject_gets_each_section_first_sentence() -> None:
    overview = article_overview("What is your gadget loan policy?", POLICY)
    assert overview is not None and overview.kind == "overview"
    assert overview.steps == (
        "Small teams: Small teams borrow two gadgets a month.",
        "Large teams: Large teams borrow ten.",
        "Returns: Gadgets go back within 7 days.",
        "Damage: A damaged gadget is repaired at no cost.",
    )  # the page's own introduction is not the policy
    passage = Passage("a#3", "a", "doc", "Gadget loan policy", "Gadget loan policy", "", overview)
    text = outline_answer([passage])
    assert text.startswith("“Gadget loan policy” in brief:\n- Small teams: "), text
    assert text.count("\n- ") == 4 and "[1]" in text.splitlines()[-1], text


def test_a_question_about_one_section_or_another_subject_gets_no_overview() -> None:
    # "returns" is one section's heading: that section answers, not a list of all of them
    assert article_overview("What is the gadget loan policy for returns?", POLICY) is None
    assert article_overview("Can I borrow a gadget?", POLICY) is None  # not the title
    assert not names_the_title("How long is a gadget loan?", "Gadget loan policy")
    assert names_the_title("Tell me about the gadget loan policy", "Gadget loan policy")
    # two sections are not an article to summarise
    assert article_overview("What is your gadget loan policy?", POLICY[:3]) is None


def test_a_section_that_opens_with_a_list_is_summarised_by_its_items() -> None:
    chunks = _chunks(
        "Gadget warranty",
        [
            ("Periods", "## Periods\n\n- Gadget: **2 years**\n- Dongle: 1 year\n\nLocal law."),
            ("Covered", "## Covered\n\n- Dead screens\n- Broken buttons."),
            ("Claims", "## Claims\n\nOpen a return in the console. We ship a new one."),
        ],
    )
    overview = article_overview("What is the gadget warranty?", chunks)
    assert overview is not None
    assert overview.steps == (
        "Periods: Gadget: 2 years; Dongle: 1 year.",
        "Covered: Dead screens; Broken buttons.",
        "Claims: Open a return in the console.",
    )


def test_a_section_that_leads_into_a_list_keeps_the_list_and_links_keep_their_text() -> None:
    chunks = _chunks(
        "Setting up the gadget",
        [
            ("Power", "## Power\n\nThe gadget can be powered in two ways:\n\n- USB-C\n- A battery"),
            ("Place", "## Place\n\nPut it near a [window](placement) on a shelf. Then wait."),
            ("Pair", "## Pair\n\nScan the code in the app."),
        ],
    )
    overview = article_overview("How do I set up the gadget?", chunks)
    assert overview is not None
    assert overview.steps[0] == "Power: The gadget can be powered in two ways: USB-C; A battery."
    assert overview.steps[1] == "Place: Put it near a window on a shelf."
