"""Tenant synonyms through the HTTP API: a question with the abbreviation finds the article that
only writes the long form, when (and only when) the tenant file groups the two.

The app serves a folder of docs (ARTICLES_DIR) with the real MiniLM and the offline reranker
(the fake embedder's hashed words would make every ranker lexical and prove less): one article
lists delivery times by country and writes "United Kingdom"; another writes "UK" and shares the
question's other words and a duration of its own but does not answer it (so without the group
it ranks first: the test can fail). The same folder is served twice, with a tenant
file that has the group and with one that does not; the test reads the stored assistant
message's `meta.passages`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.apihelp import Api, running_app

pytestmark = pytest.mark.slow  # the real MiniLM

QUESTION = "How long does delivery to the UK take?"
ANSWER_DOC = "delivery-times"
DISTRACTOR = "uk-delivery-addresses"

ARTICLES = {
    "delivery-times.md": """---
title: Delivery times by country
summary: How many business days standard delivery takes to each country we ship to.
tags: [delivery, shipping]
---
| Country | Carrier | Standard delivery |
|---|---|---|
| United States | UPS Ground | 3–5 business days |
| Canada | UPS Standard | 4–7 business days |
| Germany | DHL | 2–3 business days |
| United Kingdom | Royal Mail | 2–4 business days |
| Australia | FedEx | 6–9 business days |
""",
    "uk-delivery-addresses.md": """---
title: UK delivery addresses
summary: How to write a UK delivery address so the courier can find it.
tags: [delivery, addresses]
---
How long a delivery to the UK takes depends first on its address: put the postcode on its own
line and add the building name if there is one. Checking a new address takes a moment at
checkout; a delivery to an address the courier cannot verify is held at the depot until you
confirm it, which can delay it by two days.
""",
    "returns.md": """---
title: Returning an order
summary: How to send an order back and how long a refund takes.
tags: [returns, refunds]
---
You can return an unused order within 30 days. Print the return label from your account,
pack the items in their original box and drop the parcel at any carrier point. Refunds are
issued within five business days of the parcel reaching us.
""",
}

GROUP = "synonyms:\n  - [UK, United Kingdom, Great Britain]\n"


@contextmanager
def _serve(folder: Path, tenant_yaml: str) -> Iterator[Api]:
    """The docs folder served with a tenant file holding `tenant_yaml`."""
    tenant = folder.parent / f"{folder.name}-tenant.yaml"
    tenant.write_text(f"name: Test Co\n{tenant_yaml}", encoding="utf-8")
    with running_app(
        articles_dir=folder,
        tenant_file=tenant,
        seed_on_start=True,
        embedder="local",
        embedded_store="memory",
        embedding_cache_dir=None,
    ) as api:
        yield api


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for name, text in ARTICLES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _ask(api: Api, question: str) -> dict[str, Any]:
    return dict(api.ask(question)["meta"])


def _score_of(meta: dict[str, Any], doc: str) -> float:
    return max((p["rerankScore"] for p in meta["passages"] if p["docId"] == doc), default=0.0)


def test_the_abbreviation_finds_the_long_form_article_only_with_the_group(docs: Path) -> None:
    with _serve(docs, GROUP) as api:
        grouped = _ask(api, QUESTION)
        # the long form asked directly is found too (the group takes nothing away)
        long_form = _ask(api, QUESTION.replace("UK", "United Kingdom"))
    with _serve(docs, "synonyms: []\n") as api:
        plain = _ask(api, QUESTION)

    assert [p["docId"] for p in grouped["passages"]][:1] == [ANSWER_DOC], grouped["passages"]
    assert [p["docId"] for p in long_form["passages"]][:1] == [ANSWER_DOC], long_form["passages"]
    # without the group the article that writes "UK" (and does not answer) ranks first
    assert [p["docId"] for p in plain["passages"]][:1] == [DISTRACTOR], plain["passages"]
    assert _score_of(grouped, ANSWER_DOC) > _score_of(plain, ANSWER_DOC)
    assert grouped["synonymsAdded"] == ["United Kingdom", "Great Britain"]  # in the trace
    assert plain["synonymsAdded"] == [] and long_form["synonymsAdded"] == ["UK", "Great Britain"]
    assert grouped["confidence"] != "none", grouped.get("confidenceReason")
