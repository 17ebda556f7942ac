"""Block selection from a section tree (self-made docs): each block kind read as it answers."""

from __future__ import annotations

from app.ingest.sections import build_sections
from app.providers.chat.base import Passage
from app.providers.chat.offline import terms
from app.providers.chat.select import passage_text, select_answer, sentences
from app.tenant import generic_tenant

GUIDE = """# Field notes app

Field notes keeps your notes in a vault, a folder on your disk.

## Keyboard shortcuts

Use the following default shortcuts:

- `Ctrl+N` opens a new note
- `Ctrl+P` opens the command palette
- `Ctrl+,` opens settings

## Plans

| Plan | Price | Devices |
|---|---|---|
| Basic | $0 | 1 |
| Plus | $8 per month | 5 |
| Team | $20 per month | 50 |

## Sync

Sync keeps vaults alike on every device. It was introduced approx. 2021 as v2.1 of the app.
A change reaches other devices within 30 seconds. Conflicts keep both copies.

## Install

1. Download the installer.
2. Run it:

   ```sh
   ./install.sh --quiet
   ```

3. Sign in.

### Mobile

#### On Android

1. Open the Play Store.
2. Search for Field notes and tap Install.

#### On iOS

1. Open the App Store.
2. Tap Get.

## Export API

To export a vault from a script, call:

```sh
fieldnotes export --vault work --out work.zip
```

> **Warning:** An export holds every note in clear text.
"""


def passages(title: str = "Field notes app", body: str = GUIDE) -> list[Passage]:
    """One passage per section, each carrying its stored section and the article's tree."""
    tree = tuple(build_sections(title, body))
    slug = title.lower().replace(" ", "-")
    return [
        Passage(
            id=f"{slug}#{i}",
            doc_id=slug,
            kind="doc",
            title=title,
            breadcrumb=" › ".join([title, *s.path]),
            text="",
            section=s,
            tree=tree,
        )
        for i, s in enumerate(tree)
    ]


def lines(question: str) -> list[str]:
    return select_answer(question, passages()).splitlines()


def test_a_list_is_quoted_whole_with_the_line_that_leads_into_it() -> None:
    got = lines("What are the keyboard shortcuts?")
    assert got[0] == "Field notes app › Keyboard shortcuts [2]:"  # heading path, cited
    assert got[1:] == [
        "Use the following default shortcuts:",
        "- Ctrl+N opens a new note",
        "- Ctrl+P opens the command palette",
        "- Ctrl+, opens settings",
    ]


def test_a_price_is_the_table_row_with_its_column_names() -> None:
    got = lines("How much does the Plus plan cost?")
    assert got[0] == "Field notes app › Plans [3]:"
    assert got[1:] == ["- Plan: Plus; Price: $8 per month; Devices: 5"]


def test_a_comparison_gets_the_rows_it_names_and_a_table_question_the_table() -> None:
    got = lines("What is the difference between Basic and Team?")
    assert got[1:] == [
        "- Plan: Basic; Price: $0; Devices: 1",
        "- Plan: Team; Price: $20 per month; Devices: 50",
    ]
    whole = lines("What plans are there?")
    assert "| Plan | Price | Devices |" in whole and len(whole) == 6  # lead, header, rule, 3 rows


def test_a_duration_is_the_sentence_that_holds_it() -> None:
    got = lines("How long does sync take to reach other devices?")
    assert got == [
        "Field notes app › Sync [4]:",
        "A change reaches other devices within 30 seconds.",
    ]


def test_a_what_question_gets_the_paragraph() -> None:
    got = lines("What is sync?")
    assert got[0] == "Field notes app › Sync [4]:"
    assert got[1].startswith("Sync keeps vaults alike on every device.")


def test_a_procedure_keeps_its_code_and_a_tab_panel_answers_its_platform() -> None:
    got = lines("How do I install the app?")
    assert got[1:4] == ["1. Download the installer.", "2. Run it:", "   ```sh"]
    assert got[-1] == "3. Sign in."
    android = lines("How do I install it on Android?")
    assert android[0] == "Field notes app › Install › Mobile [6]:"
    assert android[1:3] == ["On Android:", "1. Open the Play Store."]
    assert "App Store" not in "\n".join(android)


def test_code_comes_with_its_lead_in_and_a_callout_with_its_label() -> None:
    got = lines("How do I export a vault from a script?")
    assert got[1] == "To export a vault from a script, call:"
    assert got[2:5] == ["```", "fieldnotes export --vault work --out work.zip", "```"]
    warning = lines("Is an export in clear text?")
    assert warning[-1] == "Warning: An export holds every note in clear text."


def test_long_lists_point_to_the_rest() -> None:
    body = "## Steps\n\n" + "\n".join(f"{i}. Do step {i}." for i in range(1, 13))
    (_, steps) = build_sections("Long guide", body)
    p = Passage("g#1", "g", "doc", "Long guide", "Long guide › Steps", "", section=steps)
    got = select_answer("What are the steps?", [p]).splitlines()
    assert got[-2] == "8. Do step 8."
    assert got[-1] == "The rest is in “Long guide › Steps”."


def test_sentences_respect_abbreviations_versions_and_decimals() -> None:
    text = "It shipped Sep. 2021 as v2.1 and costs 3.5 credits, e.g. for teams. Then it grew."
    assert sentences(text) == [
        "It shipped Sep. 2021 as v2.1 and costs 3.5 credits, e.g. for teams.",
        "Then it grew.",
    ]


def test_a_language_model_reads_the_chosen_blocks_under_the_heading_path() -> None:
    sync = next(p for p in passages() if p.breadcrumb.endswith("Sync"))
    crumb, text = passage_text("How long does sync take?", sync)
    assert crumb == "Field notes app › Sync"
    assert "within 30 seconds" in text and "Conflicts keep both copies." in text  # short: whole


def test_an_faq_question_brings_its_answer_and_what_the_answer_leads_into() -> None:
    """An FAQ written as paragraphs (the question a line of its own): the question is not the
    answer, the block under it is, and a line ending in a colon brings its list."""
    faq = (
        "I rotated my pages by mistake. How do I turn them back?\n\n"
        "The shortcuts that rotate pages are:\n\n"
        "- Rotate clockwise: r\n- Rotate anticlockwise: shift + r\n\n"
        "Why is there no read-aloud for scanned pages?\n\n"
        "Read-aloud needs text; a scanned page is an image."
    )
    page = Passage(id="faq#0", doc_id="faq", kind="doc", title="FAQ", breadcrumb="FAQ", text=faq)
    got = select_answer("I rotated my pages by mistake, how do I rotate them back?", [page])
    assert "- Rotate anticlockwise: shift + r" in got, got
    assert "scanned" not in got, got


def test_a_passage_naming_the_same_action_with_another_verb_answers() -> None:
    """The language's equivalent verbs (lexicon data), passage side: "modifiée" answers
    "changer", "Replacing" answers "change"."""
    from app.providers.chat.offline import Reading

    text = (
        "## Lecteur d'écran\n\nLe lecteur d'écran annonce la police du texte avec Insert + F.\n\n"
        "## Texte\n\nLa police peut être modifiée dans le menu Préférences puis Texte.\n"
    )
    page = Passage(id="p#0", doc_id="p", kind="doc", title="Lire", breadcrumb="Lire", text=text)
    got = select_answer("Où est-ce que je change la police ?", [page], Reading.of("fr", None))
    assert got.startswith("Lire › Texte [1]:\nLa police peut être modifiée"), got
    text = (
        "## Battery life\n\nThe battery lasts a year.\n\n"
        "## Replacing the battery\n\n1. Open the cover.\n2. Swap the cell.\n"
    )
    page = Passage(id="b#0", doc_id="b", kind="doc", title="Tag", breadcrumb="Tag", text=text)
    got = select_answer("How do I change the battery?", [page])
    assert got.startswith("Tag › Replacing the battery [1]:\n1. Open the cover."), got


def test_a_procedure_written_as_paragraphs_is_read_from_the_section_start() -> None:
    """A how-to whose section has no numbered steps: its paragraphs in the document's order,
    so the first action ("Open … and choose New") comes before the form it leads to."""
    guide = (
        "# Budgets\n\n## Make a budget\n\n"
        "A budget caps what one category may spend each month.\n\n"
        "Open the Budgets page and choose New budget.\n\n"
        "Give the budget a name and an amount, for example:\n\n"
        "- Name: Groceries\n- Amount: 400\n\n"
        "## Delete a budget\n\nDeleting a budget keeps its transactions."
    )
    page = passages("Budgets", guide)
    got = select_answer("How do I make a budget for groceries?", page)
    assert got.index("Open the Budgets page") < got.index("- Name: Groceries"), got
    assert "Deleting a budget" not in got, got


def test_a_problem_told_before_a_question_gets_the_steps_under_its_symptom() -> None:
    """A statement of what goes wrong, then a question, reports a problem: the numbered fixes
    under the symptom heading answer it, not a neighbouring symptom's paragraph sharing more."""
    guide = (
        "# Door alerts\n\n"
        "## Alerts stop\n\n"
        "Check that the phone allows notifications.\n\n"
        "If they still stop, try the following:\n\n"
        "1. Check the daily limit of 200 messages.\n"
        "2. Sign out of the app and sign in again.\n\n"
        "## I don't see the door sensor in the app\n\n"
        "Restart the app after pairing the door sensor.\n"
    )
    got = select_answer(
        "My door sensor shows in the app, yet the alerts stopped. Any ideas?",
        passages("Door alerts", guide),
    )
    assert "1. Check the daily limit of 200 messages." in got, got
    assert "Restart the app" not in got, got


def test_a_long_paragraph_under_a_heading_that_states_the_question_is_read_from_its_start() -> None:
    """Under a symptom heading the paragraph's first sentence names the cause: a paragraph too
    long to quote is read from it, not from the sentence sharing most words."""
    cause = (
        "This happens when printer sharing is on but the Guest Access option is off, so turn "
        "on Guest Access first."
    )
    rest = " ".join(
        [
            "Otherwise open the print queue, choose Printer, then Ports, and make sure the "
            "spooler error port for printing from the guest network uses the shared address.",
            "That address must be reachable from the guest network with the spooler running.",
            "See the network guide for how to share a printer across two networks, and how to "
            "restart the spooler each night without losing queued jobs on the guest network.",
        ]
    )
    guide = (
        "# Printing\n\n"
        "## Printing stops with a spooler error from the guest network\n\n"
        f"{cause} {rest}\n"
    )
    got = select_answer(
        "Printing stops with a spooler error when I am on the guest network.",
        passages("Printing", guide),
    )
    assert cause in got, got


def test_an_faq_answer_reads_on_into_the_next_paragraph_while_it_fits() -> None:
    """The heading asks what the customer asks; its first paragraph is short and says what does
    not happen, the next one is too long to quote whole and opens with what does."""
    first = "Nothing changes right away. One late payment pauses nothing."
    then = "If a second payment fails, the workspace becomes read-only after seven days."
    rest = " ".join(
        [
            "Exports still work while it is read-only, and every member keeps their own account,",
            "their notes, their comments and their settings until the payment goes through.",
            "Paying the open invoice from the billing page restores editing at once, and the",
            "read-only days are not charged on the next invoice of the workspace.",
            "A workspace that stays read-only for ninety days is archived, and an owner can",
            "restore it from the archive page within a year by paying what is still open.",
        ]
    )
    guide = (
        "# Billing\n\n"
        "## What happens when a payment fails?\n\n"
        f"{first}\n\n{then} {rest}\n\n"
        "## Invoices\n\nInvoices are sent by email each month.\n"
    )
    got = select_answer("What happens if our payment fails?", passages("Billing", guide))
    assert first in got and then in got, got
    assert "archived" not in got, got  # past the words a reply quotes
    assert "Invoices are sent" not in got, got


SYNC_HELP = """# Sync

## Why does sync fail?

### Storage is full

Sync stops when the storage is full. Delete old attachments to free space.

### Session expired

Sign out and sign in again to renew the session.

### Device is offline

Check that the device is connected to the internet.

## Sharing

### Invite people

Open Sharing and enter their email address.

### Remove people

Open Sharing and click Remove next to their name.

### Change a role

Open Sharing and pick another role next to their name.
"""


def test_a_problem_gets_its_cause_and_the_other_causes_its_heading_lists() -> None:
    got = select_answer(
        "My notes stopped syncing and it says the storage is full.", passages("Sync", SYNC_HELP)
    )
    assert "Delete old attachments to free space." in got, got
    assert "“Sync › Why does sync fail?” also lists: Session expired; Device is offline." in got


def test_what_a_reply_adds_to_the_quote_is_said_in_the_replys_language() -> None:
    """ "also lists" and "the rest is in" are the tenant's phrases, in German and French too."""
    templates = generic_tenant().templates
    for locale in ("en", "de", "fr"):
        assert {"also_lists", "rest_in"} <= set(templates[locale]), locale
    german = select_answer(
        "My notes stopped syncing and it says the storage is full.",
        passages("Sync", SYNC_HELP),
        ph=templates["de"],
    )
    assert (
        "„Sync › Why does sync fail?“ nennt außerdem: Session expired; Device is offline." in german
    )


def test_other_sections_are_listed_only_under_a_heading_that_reports_a_problem() -> None:
    """Under "Sharing" the other sub-sections are other tasks, not causes; and a question that
    reports no problem gets its own section only."""
    problem = select_answer(
        "People I removed from sharing still see my notes.", passages("Sync", SYNC_HELP)
    )
    how_to = select_answer(
        "How do I free space when the storage is full?", passages("Sync", SYNC_HELP)
    )
    assert "also lists" not in problem and "also lists" not in how_to, (problem, how_to)


def test_a_how_to_prefers_steps_written_as_prose_to_a_list_of_options() -> None:
    """A section whose paragraphs open with an instruction ("Go to …") is a procedure; a list of
    command options that shares as many words is not what a how-to asks."""
    guide = (
        "# Exporting entries\n\n"
        "## Command line\n\n"
        "The export command writes a file. These options select the entries:\n\n"
        "- `--from`: the first entry of the export file.\n"
        "- `--to`: the last entry of the export file.\n\n"
        "## Basic export\n\n"
        "Go to the Export page in the web app.\n\n"
        "Press the button there to export all of your entries to a file.\n"
    )
    got = select_answer("How do I export my entries to a file?", passages("Exporting", guide))
    assert got.startswith("Exporting › Basic export"), got
    assert "Go to the Export page in the web app." in got, got


def test_turn_on_is_read_as_enable_and_a_how_to_gets_the_steps() -> None:
    """ "Turn on" is one of the enable verbs (lexicon data): the steps under "Enabling …" answer
    a how-to, not the overview that says what the feature turns the device into."""
    guide = (
        "# Night mode\n\n"
        "Night mode turns a tablet into a dim bedside clock with warm colours.\n\n"
        "## Enabling night mode\n\n"
        "1. Open Settings.\n2. Select Display.\n3. Check Night mode.\n\n"
        "## Disabling night mode\n\n"
        "1. Open Settings.\n2. Select Display.\n3. Clear Night mode.\n"
    )
    got = select_answer("How do I turn on night mode on my tablet?", passages("Night", guide))
    assert "Enabling night mode" in got.splitlines()[0], got
    assert "3. Check Night mode." in got, got
    from app.providers.chat.offline import ENGLISH, terms
    from app.providers.chat.select import _said

    assert terms("turn on", ENGLISH) <= _said("Enabling night mode", ENGLISH)
    assert not terms("turn on", ENGLISH) <= _said("Disabling night mode", ENGLISH)


def test_french_function_words_match_nothing_and_a_colloquial_how_to_asks_for_steps() -> None:
    """ "à", "même", "puis" (as in "puis-je") are stop words (lexicon data); "Comment je …" asks
    for the steps like "Comment … -er"."""
    from app.providers.chat.offline import Reading, terms
    from app.search.answer_types import asks_for_steps

    fr = Reading.of("fr", None)
    said = terms("lire à voix haute jusqu'à la fin d'une même page", fr)
    assert not {"à", "même", "jusqu"} & said and {"lire", "voix"} <= said, said
    assert asks_for_steps("Comment je lance la lecture d'un livre ?")
    # the answerer's own French stop words: "puis-je" and "combien" frame the question only
    asked = terms("Combien de pages puis-je marquer ?", fr)
    assert not {"puis", "combien"} & asked and "marqu" in asked, asked


def test_a_count_written_out_answers_a_how_many_question() -> None:
    """A count in words ("Only one", "une seule": the lexicons' `shows.quantity`) shows the
    value a how-many question asks for, as digits do."""
    from app.providers.chat.offline import Reading

    guide = (
        "# Boards\n\n## Organising boards\n\n"
        "Boards hold cards and pinned cards side by side. Drag pinned cards between columns.\n\n"
        "## Pinning\n\n"
        "A pin keeps a card at the top of its column. Only one pinned card is allowed per column.\n"
    )
    got = select_answer("How many pinned cards can a column have?", passages("Boards", guide))
    assert got.splitlines() == [
        "Boards › Pinning [3]:",
        "Only one pinned card is allowed per column.",
    ], got
    guide = (
        "# Tableaux\n\n## Organiser un tableau\n\n"
        "Un tableau range les fiches et les fiches épinglées dans des colonnes.\n\n"
        "## Épingler\n\n"
        "Une épingle garde la fiche en haut. Une seule fiche épinglée est permise par colonne.\n"
    )
    got = select_answer(
        "Combien de fiches épinglées dans une colonne ?",
        passages("Tableaux", guide),
        Reading.of("fr", None),
    )
    assert "Une seule fiche épinglée est permise par colonne." in got, got
    assert got.startswith("Tableaux › Épingler [3]:"), got


def test_an_up_to_question_asks_for_the_value_a_list_item_holds() -> None:
    """ "Up to what …" / "jusqu'à quel …" asks a quantity: the list that holds one answers,
    over a section whose heading repeats the question's words and holds no value."""
    guide = (
        "# Viewer\n\n## Photo zoom\n\n"
        "Photo zoom enlarges the picture around the point you tap, keeping it sharp.\n\n"
        "## Gestures\n\n"
        "- Swipe left for the next photo.\n- Pinching sets the magnification from 1x to 8x.\n"
        "- Double tap resets the view.\n"
    )
    got = select_answer("Up to what magnification does photo zoom go?", passages("Viewer", guide))
    assert got.startswith("Viewer › Gestures [3]:"), got
    assert "- Pinching sets the magnification from 1x to 8x." in got, got


def test_a_question_naming_a_tables_column_gets_the_table_it_lists() -> None:
    """A table whose header names what the question asks for (and whose headings do not)
    lists the answers, over a paragraph under a heading that repeats the question's words."""
    guide = (
        "# Reminders\n\n## Mixing intervals\n\n"
        "Reminder intervals that overlap are hard to read: a daily and a weekly reminder on the "
        "same task both fire on Mondays, and the task shows twice in the list.\n\n"
        "## Automatic reminders\n\n"
        "| Reminder interval | When it fires |\n|---|---|\n| Daily | 9:00 every day |\n"
        "| Weekly | 9:00 every Monday |\n| Monthly | 9:00 on the 1st |\n"
    )
    got = select_answer("Which reminder intervals can I pick?", passages("Reminders", guide))
    lines = got.splitlines()
    assert lines[0] == "Reminders › Automatic reminders [3]:", got
    assert (
        "| Reminder interval | When it fires |" in lines
        and "| Monthly | 9:00 on the 1st |" in lines
    )
    # a column named by the product the question is about lists nothing asked of it
    from app.providers.chat.offline import Reading

    guide = (
        "# Beacon\n\n## Firmware updates\n\n"
        "Each night the hub looks for firmware and installs it within minutes.\n\n"
        "## Specifications\n\n"
        "| Spec | Beacon Hub | Beacon Tag |\n|---|---|---|\n| Radio | Wi-Fi 6 | BLE 5 |\n"
        "| Battery | none | 2 years |\n"
    )
    reading = Reading.of("en", {"Beacon Hub": "Beacon Hub"})
    got = select_answer(
        "What's new in Beacon Hub firmware 3.0?", passages("Beacon", guide), reading
    )
    assert got.startswith("Beacon › Firmware updates ["), got


def test_a_word_in_camel_case_says_its_parts() -> None:
    """ "ChromeBook" in a passage says "Chrome": the list naming it answers a question about
    Chrome over a section that only shares the question's common words."""
    from app.providers.chat.offline import ENGLISH
    from app.providers.chat.select import _said

    guide = (
        "# Notes\n\n## Backups\n\n"
        "Notes are backed up to your account every night, on every laptop and phone.\n\n"
        "## Moving to a new computer\n\n"
        "The notes folder is in a fixed place on each system.\n\n"
        "- WindowsPC: C:\\Users\\you\\Notes\n- ChromeBook: /home/chronos/notes\n"
    )
    got = select_answer("Where are my notes on a Chrome laptop?", passages("Notes", guide))
    lines = got.splitlines()
    assert lines[0] == "Notes › Moving to a new computer [3]:", got
    assert "- ChromeBook: /home/chronos/notes" in lines and "Backups" not in got, got
    assert {"chrom", "book"} <= _said("ChromeBook", ENGLISH)
    assert "phon" not in _said("iPhone", ENGLISH)  # a small first letter: one word


def test_a_how_to_is_answered_where_what_it_asks_to_do_is_named() -> None:
    """Of a section whose heading repeats the question's words and one that says how the
    thing asked is done ("started" for "start"), the latter answers a how-to."""
    guide = (
        "# Recipes\n\n## Kitchen timer settings\n\n"
        "Offers a silent mode for the kitchen timer and a choice of alarm sounds, and lets the "
        "timer keep ringing until you dismiss it.\n\n"
        "## Cooking along\n\n"
        "A timer is started by tapping the clock icon next to a recipe step.\n"
    )
    got = select_answer("How do I start a kitchen timer?", passages("Recipes", guide))
    assert got.startswith("Recipes › Cooking along [3]:\nA timer is started by tapping"), got
    # the action's other verbs count (lexicon `equivalent_actions`): "resolve" names "fix"
    guide = (
        "# Recipes\n\n## Timer keeps ringing\n\n"
        "A timer that keeps ringing after you dismiss it shows a red dot on the clock icon.\n\n"
        "## Stuck alarms\n\n"
        "Resolve a stuck alarm by closing the recipe and opening it again.\n"
    )
    got = select_answer("My timer keeps ringing, how do I fix it?", passages("Recipes", guide))
    assert got.startswith("Recipes › Stuck alarms [3]:\nResolve a stuck alarm"), got


def test_a_which_setting_question_gets_the_line_leading_into_the_settings_name() -> None:
    """ "Which setting …" (the lexicons' `asks.setting`) is answered by the block that shows a
    setting's name as code, with what it leads into, over a list that names the question's
    words and no setting."""
    guide = (
        "# Labels\n\n## Printing labels\n\n"
        "Labels print on most office printers.\n\n"
        "- Laser printers: sharp labels, any paper.\n- Inkjet printers: labels may smudge.\n"
        "- Zebra thermal printers: labels come out blank on the default driver.\n\n"
        "Thermal printers need raw output, which you turn on in `labels.ini`:\n\n"
        "`RAW_OUTPUT=yes`\n"
    )
    question = "Which setting makes labels print on a Zebra thermal printer?"
    got = select_answer(question, passages("Labels", guide))
    assert "RAW_OUTPUT=yes" in got and "Laser printers" not in got, got


def test_a_how_to_whose_action_only_its_page_title_names_gets_the_steps() -> None:
    """The page is about the action ("Resetting your passcode"); its steps name only what you
    click. Another section names the action in passing: the steps still answer."""
    guide = (
        "## Choose a new passcode\n\n"
        "1. On the sign-in screen, tap Forgot passcode.\n"
        "2. Enter your email address and tap Send.\n"
        "3. Open the email and pick a new passcode.\n\n"
        "## The email does not arrive\n\n"
        "Wait two minutes and check your spam folder. An admin can also send you a reset link "
        "from the members page.\n"
    )
    got = select_answer("How do I reset my passcode?", passages("Resetting your passcode", guide))
    assert got.startswith("Resetting your passcode › Choose a new passcode"), got
    assert "1. On the sign-in screen, tap Forgot passcode." in got, got


def test_a_short_section_is_read_from_its_start_the_cause_before_the_fix() -> None:
    """A section short enough to quote whole is read in the document's order: the paragraph
    that says why comes first, though later paragraphs share more of the question's words."""
    guide = (
        "# Help\n\n"
        "## Reading voices\n\n"
        "The app reads aloud with the voices installed on the computer, so the voices you can "
        "pick are the ones your system's speech settings hold, not voices of the app itself.\n\n"
        "- On a desktop, add a speech pack for a language in the system's language settings.\n"
        "- On a phone, download a voice in the accessibility settings and restart the app.\n\n"
        "Each book then uses the installed voice that matches the book's language.\n\n"
        "When the book declares the wrong language, choose another voice for the book from the "
        "Voice menu of the reading toolbar.\n\n"
        "## Fonts\n\nFonts are chosen under Display.\n"
    )
    got = select_answer(
        "The book is read with a voice of the wrong language", passages("Help", guide)
    )
    assert got.index("voices installed on the computer") < got.index("Voice menu"), got
    assert "add a speech pack" in got, got
    assert "Fonts are chosen" not in got, got


def test_a_how_to_section_of_two_procedures_is_read_whole_from_its_start() -> None:
    """A short how-to section that opens with a note leading into one procedure, then offers a
    second way ("If you'd rather …:"), is read in order, both procedures; before, the note and
    the first list were quoted and the second way left out."""
    guide = (
        "# Sign-in\n\n"
        "## How do I change my passcode?\n\n"
        "Accounts opened this year have no passcode. Sign in with a code sent by text:\n\n"
        "1. Open the sign-in page.\n2. Enter your phone number.\n3. Type the code you get.\n\n"
        "If you want to set a passcode anyway:\n\n"
        "1. Open the sign-in page.\n2. Choose **Lost passcode**.\n3. Follow the email.\n\n"
        "## Devices\n\nDevices are listed under Security.\n"
    )
    got = select_answer("How do I change my passcode?", passages("Sign-in", guide))
    assert got.index("have no passcode") < got.index("Lost passcode"), got
    assert "Type the code you get" in got, got
    assert "Devices are listed" not in got, got


def test_a_lists_numbers_are_not_words_of_the_reply() -> None:
    """A section of 103 words, 113 with its lists' numbers, fits the 110-word reply whole: the
    second way of doing it is not cut for counting "1." to "5." as words."""
    note = " ".join(["Accounts opened this year have no passcode at all."] * 3)  # 27 words
    first = "\n".join(f"{i}. Open the page and tap step {i}." for i in range(1, 6))  # 5 × 7
    second = "\n".join(f"{i}. Choose Lost passcode then follow part {i}." for i in range(1, 6))
    guide = (
        "# Sign-in\n\n## How do I change my passcode?\n\n"
        f"{note} Sign in with a code:\n\n{first}\n\n"
        f"If you want to set a passcode anyway:\n\n{second}\n"
    )
    got = select_answer("How do I change my passcode?", passages("Sign-in", guide))
    assert "follow part 5" in got and "tap step 1" in got, got


def test_a_sections_opening_never_ends_on_a_line_that_leads_into_what_it_leaves_out() -> None:
    """Read from its start, a section is cut before a list that does not fit; the line that
    introduces that list goes with it, not alone at the end of the reply."""
    steps = "\n".join(
        f"{i}. Step {i} of the long way, with a few more words to read." for i in range(1, 12)
    )
    guide = (
        "# Help\n\n"
        "## Reading voices\n\n"
        "The app reads aloud with the voices installed on the computer, so a book in another "
        "language is read with a voice of the wrong language until you add one.\n\n"
        "Each book then uses the installed voice that matches the book's language.\n\n"
        "To add a voice on a desktop:\n\n"
        f"{steps}\n"
    )
    got = select_answer(
        "The book is read with a voice of the wrong language", passages("Help", guide)
    )
    assert "voices installed on the computer" in got and "Each book then uses" in got, got
    assert "To add a voice on a desktop:" not in got, got


def test_a_how_to_that_points_to_another_sections_steps_brings_them() -> None:
    """A section that says where its instructions are ("follow the steps in [Managing your
    plan](#managing-your-plan)") is answered with those steps too, not the pointer alone."""
    guide = (
        "# Billing\n\n"
        "## Managing your plan\n\n"
        "1. Open the plan page.\n2. Click **Change plan**.\n\n"
        "## Ending your plan\n\n"
        "Ending your plan is done by following the steps in "
        "[Managing your plan](#managing-your-plan). The plan stays active until the period ends."
        "\n\n## Invoices\n\nInvoices are sent by email.\n"
    )
    got = select_answer("How do I end my plan?", passages("Billing", guide))
    assert "Ending your plan is done" in got and "2. Click Change plan" in got, got
    assert got.index("Ending your plan is done") < got.index("1. Open the plan page"), got
    assert "Invoices are sent" not in got, got


def test_a_problem_then_what_to_do_asks_for_steps_in_each_language() -> None:
    """ "…, what should I do?" after a problem asks for the fix, as "que faire ?" and "was tun?"
    do; "what can I do with …" asks what a product does."""
    from app.search.answer_types import asks_for_steps

    assert asks_for_steps("The sync stopped, what should I do?")
    assert asks_for_steps("La synchronisation s'est arrêtée, que faire ?")
    assert asks_for_steps("Die Synchronisierung hängt, was tun?")
    assert not asks_for_steps("What can I do with the free plan?")


def test_a_tab_panel_named_by_a_plan_answers_a_question_naming_no_plan() -> None:
    """Tabs named by platform are one platform's variant, passed over when the question names
    none; tabs named by plan hold the limit itself, and one of them answers over a section that
    only mentions the word."""
    guide = (
        "# Builds\n\n"
        "## Build limits\n\n"
        "Every build has limits:\n\n"
        "#### Team plan\n\n- 60 minutes per build\n- 8 GB of memory\n\n"
        "#### Free plan\n\n- 15 minutes per build\n- 4 GB of memory\n\n---\n\n"
        "## Faster builds\n\n"
        "A smaller environment lowers the memory a build needs and speeds it up.\n"
    )
    got = select_answer("How much memory does a build get?", passages("Builds", guide))
    assert "GB of memory" in got, got
    assert "A smaller environment" not in got, got


def test_a_tab_panels_paragraph_after_its_list_stays_its_own_line() -> None:
    """Inside a tab or callout, hard-wrapped lines are joined, but a paragraph after a blank
    line is not run into the list item before it."""
    from app.providers.chat.select import _unwrapped

    text = "- 15 minutes\n- 5 GB of disk (soft limit)\n\nAsk us for more\ntime per project."
    assert _unwrapped(text).splitlines() == [
        "- 15 minutes",
        "- 5 GB of disk (soft limit)",
        "Ask us for more time per project.",
    ]


def test_word_families_meet_difference_and_differs_cancelling_and_canceled() -> None:
    """The answerer reads a derived word as its base ("difference", "differs"; "cancelling",
    "canceled"), so a paragraph that says the question in other forms of its words wins over
    a list that shares only its nouns."""
    assert terms("difference") == terms("differs") == terms("differ")
    assert terms("cancelling") == terms("cancelled") == terms("canceled") == terms("cancel")
    guide = (
        "# Billing\n\n"
        "## When a card payment fails\n\n"
        "A failed card payment differs from a cancelled plan: the plan is paused at once instead "
        "of at the end of the period.\n\n"
        "To restart a paused plan with a new card payment:\n\n"
        "1. Open the plan page and add a card.\n2. Pay the failed payment again.\n"
    )
    got = select_answer(
        "What is the difference between cancelling and a failed card payment?",
        passages("Billing", guide),
    )
    assert "paused at once" in got.split("\n")[1], got


def test_a_page_without_headings_is_headed_by_its_title_when_blocks_are_chosen() -> None:
    """The only page about the question has no headings; another page's section heading
    repeats the question's words. The page's title heads its text as any heading would."""
    page = passages(
        "Delete your workspace",
        "Open Settings and choose General.\n\n"
        "To delete your workspace, go to the Danger zone section and click Delete workspace.\n",
    )
    other = passages(
        "Importing calendars",
        "## Can I delete my old workspace calendar after importing it?\n\n"
        "Once the import has finished, the old calendar is no longer needed and you can"
        " delete it.\n",
    )
    got = select_answer("How do I delete my workspace?", [*other, *page]).splitlines()
    assert got[0] == "Delete your workspace [3]:", got
    assert any("Danger zone" in line for line in got)
