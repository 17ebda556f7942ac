"""Self-serve first: a docs-only tenant has no refund desk unless its tenant file names one."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.tenant import load_tenant
from tests.apihelp import running_app

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


def test_a_docs_only_tenant_has_no_refund_desk_unless_its_file_names_one(tmp_path: Path) -> None:
    assert "refund_request" not in load_tenant(tmp_path, docs_only=True).escalate_intents
    assert "cancellation" in load_tenant(tmp_path, docs_only=True).escalate_intents
    assert "refund_request" in load_tenant(tmp_path).escalate_intents
    (tmp_path / "tenant.yaml").write_text("escalateIntents: [refund_request, legal]\n")
    named = load_tenant(tmp_path, docs_only=True)
    assert set(named.escalate_intents) == {"refund_request", "legal"}


def test_a_refund_question_is_answered_from_the_docs_not_handed_off(tmp_path: Path) -> None:
    (tmp_path / "refunds.md").write_text(REFUNDS)
    with running_app(articles_dir=tmp_path, seed_on_start=True) as api:
        headers = api.session(None)
        conv = api.conversation(headers)
        api.send(headers, conv, "How do I request a refund?")
        reply = api.messages(conv)[-1]
        meta = reply["meta"]
        assert meta["escalated"] is False, (meta.get("escalationReason"), reply["content"])
        assert meta.get("caseRef") is None
        assert "Request refund" in reply["content"], reply["content"]  # the documented steps
        assert "person" in reply["content"]  # and the offer of one, in the same message
        conv_doc = api.run(api.services.store.conversations.get, conv)
        assert conv_doc is not None and conv_doc.status != "escalated"
