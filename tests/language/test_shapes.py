"""Utterance shapes as labelled rows (app/language/shapes.yaml) and the model the router fits on
them. The cases below are not rows of the file: they check what the rows teach."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.language.shapes import REQUEST, shape_rows, skeleton
from app.tenant import load_tenant
from app.turn.router import Router

ROOT = Path(__file__).resolve().parents[2]

# (message, shape): written for these tests, none of them a row of shapes.yaml
CASES = [
    ("What does the user guide say about charging?", "question_about_a_thing"),
    ("Is the charger included?", "question_about_a_thing"),
    ("how long does the battery last", "question_about_a_thing"),
    ("what is the refund policy", "question_about_a_thing"),
    ("Do invoices include VAT?", "question_about_a_thing"),
    ("Was sagt das Handbuch über den Akku?", "question_about_a_thing"),
    ("Ist das Netzteil im Lieferumfang?", "question_about_a_thing"),
    ("Que dit le guide sur la batterie ?", "question_about_a_thing"),
    ("Est-ce que le chargeur est inclus ?", "question_about_a_thing"),
    ("What about exports?", "question_about_a_thing"),
    ("Und was ist mit dem Kiosk?", "question_about_a_thing"),
    ("Et qu'en est-il du kiosque ?", "question_about_a_thing"),
    ("will I be charged the full price?", "question_about_billing"),
    ("Do we pay for pending invitations?", "question_about_billing"),
    ("Werde ich den vollen Preis bezahlen?", "question_about_billing"),
    ("Vais-je payer le mois entier ?", "question_about_billing"),
    ("Can I cancel anytime?", "question_about_terms"),
    ("could we get a refund after 30 days?", "question_about_terms"),
    ("Kann ich jederzeit kündigen?", "question_about_terms"),
    ("Puis-je résilier à tout moment ?", "question_about_terms"),
    ("where can I find my invoices?", "question_where_to_find"),
    ("Where do I download the receipt?", "question_where_to_find"),
    ("Wo finde ich meine Rechnung?", "question_where_to_find"),
    ("Wo kann ich die Rechnung herunterladen?", "question_where_to_find"),
    ("Où puis-je télécharger ma facture ?", "question_where_to_find"),
    ("où trouver mes factures ?", "question_where_to_find"),
    ("where is my refund?", "question_where_to_find"),
    ("Wo ist meine Rechnung?", "question_where_to_find"),
    ("Où sont mes factures ?", "question_where_to_find"),
    ("How do I delete a user?", "question_how_to_remove_someone"),
    ("how can we remove old members?", "question_how_to_remove_someone"),
    ("Wie lösche ich einen Benutzer?", "question_how_to_remove_someone"),
    ("Comment supprimer un utilisateur ?", "question_how_to_remove_someone"),
    ("How do I reach the support phone line?", "question_how_to_reach"),
    ("what is the support email address", "question_how_to_reach"),
    ("Wie erreiche ich die Hotline?", "question_how_to_reach"),
    # requests: the customer's own case, the company asked to act, an action asked for
    ("why was I charged twice?", REQUEST),
    ("Can I cancel my subscription?", REQUEST),
    ("you charged me twice", REQUEST),
    ("how do I get a refund?", REQUEST),
    ("cancel the order", REQUEST),
    ("Do refunds go to my card?", REQUEST),
    ("Can you cancel the order?", REQUEST),
    ("Can the team refund us?", REQUEST),
    ("how do I cancel?", REQUEST),
    ("how to request a refund?", REQUEST),
    ("Cancel the subscription.", REQUEST),
    ("Pouvez-vous annuler la commande ?", REQUEST),
    ("Können Sie das Abo kündigen?", REQUEST),
    ("what about my refund?", REQUEST),
    ("How about you refund us?", REQUEST),
    ("where can I cancel my order?", REQUEST),
    ("where could I ask for a refund?", REQUEST),
    ("How do I delete my account?", REQUEST),
    ("how do I delete my user account?", REQUEST),
    ("how do I delete all my data?", REQUEST),
    # a person asked for
    ("let me talk to a person", REQUEST),
    ("is there someone I can call?", REQUEST),
    ("I have to speak to an assistant", REQUEST),
    ("you're a bot, get me out of here", REQUEST),
    ("Ich möchte mit einem Mitarbeiter sprechen", REQUEST),
    ("Je veux parler à quelqu'un", REQUEST),
]


def test_every_shape_has_rows_in_english_german_and_french() -> None:
    rows = shape_rows()
    shapes = {r.shape for r in rows}
    assert REQUEST in shapes and len(shapes) == 7
    for shape in shapes:
        assert sum(r.shape == shape for r in rows) >= 9, shape


def test_the_cases_are_not_rows() -> None:
    rows = {r.message.casefold() for r in shape_rows()}
    assert not rows & {t.casefold() for t, _ in CASES}


def test_a_row_under_two_shapes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "shapes.yaml"
    path.write_text("request:\n  - cancel it\nquestion_about_a_thing:\n  - Cancel it\n")
    with pytest.raises(ValueError, match="two shapes"):
        shape_rows(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Can I cancel my plan?", "can i thing my thing ?"),
        ("Can I cancel anytime?", "can i thing anytime ?"),
        ("Kann ich jederzeit kündigen?", "kann ich jederzeit thing ?"),
        ("Où puis-je télécharger ma facture ?", "où thing je thing ma thing ?"),
    ],
)
def test_a_skeleton_keeps_the_shape_and_masks_the_topic(text: str, expected: str) -> None:
    assert skeleton(text) == expected


@pytest.fixture(scope="module")
def minilm_router() -> Router:
    from app.providers.embeddings.local_minilm import MiniLMEmbedder

    return Router(MiniLMEmbedder(), tenant=load_tenant(ROOT / "seed"))


@pytest.mark.slow
@pytest.mark.parametrize(("text", "shape"), CASES)
async def test_the_shape_model_reads_messages_it_was_not_fitted_on(
    minilm_router: Router, text: str, shape: str
) -> None:
    assert await minilm_router.shape(text) == shape
