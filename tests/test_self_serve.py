"""Self-serve first (DESIGN 6.1, issue 38 item 4): a policy request with a documented self-serve
procedure gets it and the offer of a person unless the tenant marks it person-only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.tenant import load_tenant
from app.turn.escalate import asks_or_wishes, may_self_serve
from tests.apihelp import running_app
from tuning import TUNING

pytestmark = pytest.mark.slow

REFUNDS = """---
title: Refunds
audience: all
---
# Refunds

## Requesting a refund

Purchases can be refunded within 14 days. To request a refund yourself:

1. Open Account → Billing.
2. Select the purchase and choose Request refund.
3. Pick a reason and confirm.

The refund reaches your card within 5–10 business days.
"""


def test_a_docs_only_tenant_has_no_billing_desk_unless_its_file_names_one(tmp_path: Path) -> None:
    docs_only = load_tenant(tmp_path, docs_only=True).escalate_intents
    assert "refund_request" not in docs_only and "billing_dispute" not in docs_only
    assert {"cancellation", "legal", "human_handoff"} <= set(docs_only)
    assert {"refund_request", "billing_dispute"} <= set(load_tenant(tmp_path).escalate_intents)
    (tmp_path / "tenant.yaml").write_text("escalateIntents: [refund_request, legal]\n")
    named = load_tenant(tmp_path, docs_only=True)
    assert set(named.escalate_intents) == {"refund_request", "legal"}


def test_a_refund_question_is_answered_from_the_docs_not_handed_off(tmp_path: Path) -> None:
    (tmp_path / "refunds.md").write_text(REFUNDS)
    with running_app(articles_dir=tmp_path, seed_on_start=True) as api:
        reply, status = _ask(api, "How do I request a refund?")
    meta = reply["meta"]
    assert meta["escalated"] is False, (meta.get("escalationReason"), reply["content"])
    assert meta.get("caseRef") is None and status != "escalated"
    assert "Request refund" in reply["content"], reply["content"]  # the documented steps
    assert "person" in reply["content"]  # and the offer of one, in the same message


CHARGES = """---
title: Charges on your statement
audience: all
---
# Charges on your statement

## I was charged twice for one order

A second charge for one order is a card pre-authorisation. It drops off your statement by itself
within 3 business days; nothing needs to be done.
"""


def test_a_docs_only_tenant_answers_a_charge_question_from_its_docs(tmp_path: Path) -> None:
    """With no billing desk behind a folder of docs, a message the router reads as a billing
    dispute is searched and answered like any other question, not handed to a person."""
    (tmp_path / "charges.md").write_text(CHARGES)
    with running_app(articles_dir=tmp_path, seed_on_start=True) as api:
        reply, status = _ask(api, "Why was I charged twice for my order?")
    meta = reply["meta"]
    assert meta["intent"] == "billing_dispute", meta["intent"]  # what the router read
    assert meta["escalated"] is False and meta.get("caseRef") is None, reply["content"]
    assert status != "escalated" and "pre-authorisation" in reply["content"], reply["content"]


# -- self-serve first for policy requests (DESIGN 6.1): a documented procedure, or a person ----

DELETE_ACCOUNT = """---
title: Deleting your account
audience: all
---
# Deleting your account

## How do I delete my account?

You can delete your account yourself at any time from your account settings:

1. Sign in and open Settings → Account.
2. Choose Delete account at the bottom of the page.
3. Type your password and select Confirm deletion.

The account is deleted within 24 hours and cannot be restored afterwards.
"""

CANCELLING = """---
title: Ending a subscription
audience: all
---
# Ending a subscription

## Can we write you a letter to cancel our plan?

We cannot cancel your plan because you write us a letter or call us: neither proves who is
asking. The plan stays active until its owner cancels it while signed in.
"""

SUPPRIMER_COMPTE = """---
title: Supprimer votre compte
audience: all
locale: fr
---
# Supprimer votre compte

## Comment supprimer mon compte ?

Vous pouvez supprimer votre compte vous-même à tout moment depuis les paramètres :

1. Connectez-vous et ouvrez Paramètres → Compte.
2. Choisissez Supprimer le compte en bas de la page.
3. Saisissez votre mot de passe et sélectionnez Confirmer la suppression.

Le compte est supprimé sous 24 heures et ne peut pas être restauré.
"""

REFUND_WINDOW = """---
title: Refund policy
audience: all
---
# Refund policy

## How long do I have to request a refund?

You can get a refund within 14 days of the purchase. After 14 days purchases are not refunded.
"""

DISPUTES = """---
title: Disputing a charge
audience: all
---
# Disputing a charge

## Charged twice? How do I dispute the charge?

If you were charged twice, dispute the charge yourself from the billing page:

1. Open Account → Billing → Charges.
2. Pick the charge and choose Open a dispute.
3. Describe what is wrong and select Send dispute.

We answer every dispute within 5 business days.
"""

# a refund desk (refund_request escalates) that keeps refunds with a person
REFUND_DESK = """escalateIntents:
  [billing_dispute, cancellation, data_deletion, human_handoff, legal, refund_request]
personOnly: [refund_request]
"""


def _docs(folder: Path, tenant_file: str) -> Path:
    folder.mkdir()
    (folder / "delete-account.md").write_text(DELETE_ACCOUNT)
    (folder / "supprimer-compte.md").write_text(SUPPRIMER_COMPTE)
    (folder / "refund-policy.md").write_text(REFUND_WINDOW)
    (folder / "disputes.md").write_text(DISPUTES)
    (folder / "ending-a-subscription.md").write_text(CANCELLING)
    (folder / "tenant.yaml").write_text(tenant_file)
    return folder


def _ask(api: Any, text: str) -> tuple[dict[str, Any], str]:
    """One message in a new conversation: the stored reply and the conversation's status."""
    headers = api.session(None)
    conv = api.conversation(headers)
    api.send(headers, conv, text)
    reply = api.messages(conv)[-1]
    doc = api.run(api.services.store.conversations.get, conv)
    assert doc is not None
    return reply, doc.status


@pytest.fixture(scope="module")
def refund_desk_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = _docs(tmp_path_factory.mktemp("selfserve") / "docs", REFUND_DESK)
    with running_app(articles_dir=folder, seed_on_start=True) as api:
        yield api


def test_a_documented_self_serve_request_gets_the_steps_and_the_offer_of_a_person(
    refund_desk_api: Any,
) -> None:
    reply, status = _ask(refund_desk_api, "How do I delete my account?")
    meta, text = reply["meta"], reply["content"]
    assert meta["intent"] == "data_deletion", meta["intent"]
    assert meta["escalated"] is False and meta.get("caseRef") is None, text
    assert status != "escalated"
    assert "Settings → Account" in text and "Confirm deletion" in text, text  # the steps
    assert "connect you with a person" in text, text  # and a person, in the same message
    assert "self-serve procedure" in meta["escalationExplanation"]
    assert "person-only" in meta["escalationExplanation"]


def test_a_self_serve_request_in_french_gets_the_french_steps_and_offer(
    refund_desk_api: Any,
) -> None:
    reply, status = _ask(refund_desk_api, "Comment supprimer mon compte ?")
    text = reply["content"]
    assert reply["meta"]["escalated"] is False and status != "escalated", text
    assert "Supprimer le compte" in text, text
    assert "mette en relation avec une personne" in text, text


def test_asking_how_to_do_what_a_policy_intent_names_gets_the_documented_steps(
    refund_desk_api: Any,
) -> None:
    """A how-to is answered from the docs whatever policy intent the router reads in it (a
    charge disputed is a billing dispute); asking us to do it is still a person's."""
    reply, status = _ask(refund_desk_api, "I was charged twice, how do I dispute the charge?")
    meta, text = reply["meta"], reply["content"]
    assert meta["intent"] == "billing_dispute", meta["intent"]
    assert meta["escalated"] is False and status != "escalated", text
    assert "Open a dispute" in text and "Send dispute" in text, text
    assert "connect you with a person" in text, text
    reply, status = _ask(refund_desk_api, "Dispute the last charge on my statement for me.")
    assert reply["meta"]["escalated"] is True and status == "escalated", reply["content"]


def test_a_request_without_a_documented_procedure_is_handed_off(refund_desk_api: Any) -> None:
    reply, status = _ask(refund_desk_api, "Cancel my subscription")
    meta = reply["meta"]
    assert meta["intent"] == "cancellation", meta["intent"]
    assert meta["escalated"] is True and meta["escalationReason"] == "policy"
    assert meta["caseRef"] and meta["caseRef"] in reply["content"]
    assert status == "escalated"


def test_asking_whether_one_may_do_it_some_way_gets_the_docs_answer_and_the_offer(
    refund_desk_api: Any,
) -> None:
    """ "Can I …?" asks what the terms allow: the docs' answer, yes or no, with a person
    offered, though it shows no steps; the same request told to us is handed off."""
    reply, status = _ask(refund_desk_api, "Can we simply write you a letter to cancel our plan?")
    meta, text = reply["meta"], reply["content"]
    assert meta["intent"] == "cancellation", meta["intent"]
    assert meta["escalated"] is False and status != "escalated", (
        meta["confidence"],
        meta.get("confidenceReason"),
        meta.get("escalationExplanation"),
        meta["condensedQuestion"],
    )
    assert "cannot cancel your plan because you write us a letter" in text, text
    assert "connect you with a person" in text, text
    reply, status = _ask(refund_desk_api, "Please cancel our plan for us.")
    assert reply["meta"]["escalated"] is True and status == "escalated", reply["content"]


def test_a_question_about_a_person_only_policy_is_answered_from_the_docs(
    refund_desk_api: Any,
) -> None:
    reply, status = _ask(refund_desk_api, "How long do I have to request a refund?")
    assert reply["meta"]["escalated"] is False and status != "escalated", reply["content"]
    assert "14 days" in reply["content"], reply["content"]


def test_a_person_only_request_is_handed_off_without_the_procedure(tmp_path: Path) -> None:
    folder = _docs(tmp_path / "docs", "personOnly: [data_deletion]\n")
    with running_app(articles_dir=folder, seed_on_start=True) as api:
        reply, status = _ask(api, "How do I delete my account?")
    meta, text = reply["meta"], reply["content"]
    assert meta["escalated"] is True and meta["escalationReason"] == "policy", text
    assert meta["caseRef"] and meta["caseRef"] in text
    assert status == "escalated"
    assert "Confirm deletion" not in text and "Settings → Account" not in text


def test_person_only_names_policy_intents_only(tmp_path: Path) -> None:
    (tmp_path / "tenant.yaml").write_text("personOnly: [how_to]\n")
    with pytest.raises(ValueError, match="policy set"):
        load_tenant(tmp_path)
    assert load_tenant(None).person_only == ()


def test_the_customers_own_wish_gets_the_documented_steps_and_the_offer_of_a_person(
    refund_desk_api: Any,
) -> None:
    """A wish ("I want to delete my account") is what the customer means to do: the steps the
    docs give, and a person offered in the same message (DESIGN 6.1)."""
    reply, status = _ask(refund_desk_api, "I want to delete my account.")
    meta, text = reply["meta"], reply["content"]
    assert meta["intent"] == "data_deletion", meta["intent"]
    assert meta["escalated"] is False and status != "escalated", text
    assert "Settings → Account" in text and "Confirm deletion" in text, text
    assert text.count("person") == 1, text  # offered once


def test_a_request_addressed_to_us_is_handed_off_though_the_docs_show_the_steps(
    refund_desk_api: Any,
) -> None:
    """Self-serve first answers a question about the procedure; "delete my account for me" asks
    us to do it, which a person grants (DESIGN 6.1), documented steps or not."""
    reply, status = _ask(refund_desk_api, "Please delete my account for me.")
    meta = reply["meta"]
    assert meta["intent"] == "data_deletion", meta["intent"]
    assert meta["escalated"] is True and meta["escalationReason"] == "policy", reply["content"]
    assert status == "escalated"


def test_only_a_question_or_the_customers_own_wish_may_be_self_served() -> None:
    assert asks_or_wishes("How do I delete my account") is True
    assert asks_or_wishes("Comment supprimer mon compte ?") is True
    assert asks_or_wishes("I’d like to close my workspace, it's not for us.") is True
    assert asks_or_wishes("Ich möchte mein Konto schließen.") is True
    assert asks_or_wishes("Je voudrais fermer mon compte.") is True
    assert asks_or_wishes("I'd like you to remove my personal information.") is False
    assert asks_or_wishes("I want you to close my account.") is False
    assert asks_or_wishes("Je veux que vous fermiez mon compte.") is False
    assert asks_or_wishes("Cancel my subscription") is False
    assert not may_self_serve(
        "data_deletion", explicit_request=False, person_only=(), tuning=TUNING, asked=False
    )
    assert may_self_serve(
        "data_deletion", explicit_request=False, person_only=(), tuning=TUNING, asked=True
    )
