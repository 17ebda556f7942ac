"""What short support messages say about themselves (app/language/utterance.py)."""

from __future__ import annotations

import pytest

from app.language.utterance import (
    asks_about_a_thing,
    asks_for_information,
    asks_how_to_remove_someone,
    asks_where_to_find,
    first_person,
    reports_a_problem,
)


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("When does my subscription renew?", True),
        ("what plan are we on", True),
        ("Wann verlängert sich unser Abo?", True),
        ("Quand mon abonnement est-il renouvelé ?", True),
        ("J'ai commandé trois panneaux", True),
        ("What is the maximum current of the Lumo XL?", False),
        ("How long does shipping take?", False),
        ("Was kostet der Pro-Tarif?", False),
    ],
)
def test_first_person(text: str, own: bool) -> None:
    assert first_person(text) is own


@pytest.mark.parametrize(
    ("text", "about_a_thing"),
    [
        # a question about a product, a document or a policy that speaks of no one
        ("What does the user guide say about batteries?", True),
        ("Is the power adapter included?", True),
        ("how long does the battery last", True),
        ("what is the refund policy", True),
        # a bare plural names the thing ("Are alkaloids poisonous?" is no cancellation)
        ("Are alkaloids poisonous?", True),
        ("Do invoices include VAT?", True),
        ("Are they poisonous?", False),  # a pronoun: who knows what it stands for
        ("Is this right?", False),
        ("Do refunds go to my card?", False),  # the customer's own case
        ("Was steht im Handbuch über das Laden?", False),  # "steht im": no article after it
        ("Was sagt das Handbuch über den Akku?", True),
        ("Ist das Netzteil im Lieferumfang?", True),
        ("Que dit le guide sur la batterie ?", True),
        ("Est-ce que le chargeur est inclus ?", True),
        # the customer's own case, the company asked to act, a request, a statement
        ("What does my invoice say about the charge?", False),
        ("Can you cancel the order?", False),
        ("Can the team refund us?", False),
        ("how do I cancel?", False),
        ("how to request a refund?", False),
        ("have a question about the deletion of a pro account", False),
        ("Cancel the subscription.", False),
        ("Können Sie das Abo kündigen?", False),
        ("Pouvez-vous annuler la commande ?", False),
        ("Wo ist meine Bestellung?", False),
        # a topic raised ("what about X?") asks about it, unless it is the customer's own
        ("What about exports?", True),
        ("and how about the kiosk?", True),
        ("Und was ist mit dem Kiosk?", True),
        ("Et qu'en est-il du kiosque ?", True),
        ("what about my refund?", False),
        ("How about you refund us?", False),
    ],
)
def test_a_question_about_a_thing(text: str, about_a_thing: bool) -> None:
    assert asks_about_a_thing(text) is about_a_thing


@pytest.mark.parametrize(
    ("text", "wants_an_answer"),
    [
        ("Summarise how refunds work.", True),
        ("Explain how seats are billed", True),
        ("please tell me the opening hours", True),
        ("walk me through pairing a tag", True),
        ("Erkläre mir die Rechnung", True),
        ("Décris le processus de retour", True),
        ("where is it", True),  # a question without its mark
        ("ok thanks, that worked", False),
        ("great", False),
        ("The list is fine now", False),  # "list" as a noun, not an instruction
    ],
)
def test_asks_for_information(text: str, wants_an_answer: bool) -> None:
    assert asks_for_information(text) is wants_an_answer


@pytest.mark.parametrize(
    ("text", "report"),
    [
        ("our audit log stream to splunk stopped", True),
        ("my desk tags show a ghost image of the old name", True),
        ("why does my panel keep rebooting", True),  # a question why: a problem all the same
        ("can we send them to Splunk?", False),
        ("How do I reset my password", False),  # a question without its mark
        ("explain how seats are billed", False),  # an instruction to explain
        ("Reset password", False),  # a topic named, not a problem reported
    ],
)
def test_reports_a_problem(text: str, report: bool) -> None:
    assert reports_a_problem(text) is report


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("where can I find my invoices?", True),
        ("Where do I download the receipt?", True),
        ("Wo finde ich meine Rechnung?", True),
        ("Wo kann ich die Rechnung herunterladen?", True),
        ("Où puis-je télécharger ma facture ?", True),
        ("où trouver mes factures ?", True),
        ("where can I cancel my order?", False),  # an action, not a place: may be a request
        ("where could I ask for a refund?", False),
        ("where is my refund?", True),  # its status: nothing asked for
        ("Wo ist meine Rechnung?", True),
        ("Où sont mes factures ?", True),
        ("I can't find my invoice", False),
    ],
)
def test_asks_where_to_find(text: str, where: bool) -> None:
    assert asks_where_to_find(text) is where


@pytest.mark.parametrize(
    ("text", "someone"),
    [
        ("How do I delete a user?", True),
        ("how can we remove old members?", True),
        ("Wie lösche ich einen Benutzer?", True),
        ("Comment supprimer un utilisateur ?", True),
        ("How do I delete my account?", False),  # the customer's own: a request for a person
        ("how do I delete my user account?", False),
        ("how do I delete all my data?", False),
    ],
)
def test_asks_how_to_remove_someone(text: str, someone: bool) -> None:
    assert asks_how_to_remove_someone(text) is someone
