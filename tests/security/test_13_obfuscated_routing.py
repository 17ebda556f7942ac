"""Issue 41, item 5: disguised requests slipped the router (full-width, spaced and hyphenated
letters, German refund requests naming an order routed to order status); and the property:
any Unicode obfuscation of a policy phrase or a screen trigger routes and screens like its
plain form."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.language.normalize import CONFUSABLES
from app.providers.embeddings.fake import FakeEmbedder
from app.safety.screen import instruction_reasons
from app.tenant import load_tenant
from app.turn.router import Router
from tests.apihelp import Api, running_app
from tests.security.test_01_hostile_content import INSTRUCTING
from tests.security.test_11_imports_screened import ROWS
from tests.security.test_12_screen_reads_normalised import PARAPHRASES

SEED_TENANT = load_tenant(Path(__file__).resolve().parents[2] / "seed" / "tenant.yaml")
POLICY_ESCALATING = {"refund_request", "cancellation", "billing_dispute", "data_deletion",
                     "legal", "human_handoff"}  # fmt: skip

# the attacks of the issue, as an anonymous visitor sent them
DISGUISED = [
    ("I want a \uff52\uff45\uff46\uff55\uff4e\uff44", "refund_request"),  # full-width
    ("\uff23\uff41\uff4e\uff43\uff45\uff4c my subscription", "cancellation"),
    ("R E F U N D", "refund_request"),
    ("r-e-f-u-n-d", "refund_request"),
    ("Ich möchte mein Geld zurück für meine Bestellung", "refund_request"),
    ("Ich will eine Rückerstattung für die Bestellung", "refund_request"),
]

# German and French requests naming an order, held out from the exemplars in the tenant file
# (written apart from them; none of these sentences is an exemplar)
HELD_OUT = [
    ("Ich verlange eine Rückerstattung für Bestellung ORD-1042", "refund_request"),
    ("Erstatten Sie mir die Bestellung ORD-3310", "refund_request"),
    ("Je souhaite être remboursé de ma commande ORD-1042", "refund_request"),
    ("Je demande le remboursement de la commande ORD-3310", "refund_request"),
    ("Ich möchte die Bestellung ORD-3310 stornieren lassen", "cancellation"),
    ("Je voudrais annuler ma commande ORD-1042", "cancellation"),
    ("Annulez la commande ORD-3310, je n'en ai plus besoin", "cancellation"),
]
ORDER_QUESTIONS = ["Wo ist meine Bestellung ORD-1042?", "Où en est ma commande ORD-1042 ?"]


@pytest.fixture(scope="module")
def minilm_api() -> Iterator[Api]:
    with running_app(embedder="local") as api:
        yield api


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize(("text", "intent"), DISGUISED + HELD_OUT)
def test_item_5_disguised_requests_are_handed_over(minilm_api: Api, text: str, intent: str) -> None:
    api = minilm_api
    h = api.session()  # an anonymous visitor
    conv = api.conversation(h)
    api.send(h, conv, text)
    stored = api.messages(conv)
    assert stored[0]["role"] == "user" and stored[0]["content"] == text  # kept as typed
    meta = stored[-1]["meta"]
    assert meta["intent"] == intent, (text, meta["intent"])
    assert meta["escalated"] is True
    [case] = api.escalations(conv)
    assert case["intent"] == intent and case["reason"] == "policy"
    assert api.conversation_doc(conv)["status"] == "escalated"


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("text", ORDER_QUESTIONS)
def test_order_questions_stay_order_questions(minilm_api: Api, text: str) -> None:
    meta = minilm_api.ask(text)["meta"]
    assert meta["intent"] == "order_status" and not meta["escalated"]


# ------------------------------------------------------------------ the property

_LOOKALIKE: dict[str, list[str]] = {}
for _alike, _latin in CONFUSABLES.items():
    if _latin.isalpha():
        _LOOKALIKE.setdefault(_latin, []).append(_alike)
_HIDDEN = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _full_width(ch: str) -> str:
    return chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch


@st.composite
def obfuscated(draw: st.DrawFn, plain: str) -> str:
    """`plain` with each word disguised: look-alikes, hidden characters, full-width letters,
    and three-plus-letter words spaced or hyphenated (words then two spaces apart)."""
    words = plain.split(" ")
    spaced_any = False
    out: list[str] = []
    for word in words:
        chars: list[str] = []
        for ch in word:
            how = draw(st.sampled_from(["keep", "alike", "wide", "hide"]))
            if how == "alike" and ch in _LOOKALIKE:
                ch = draw(st.sampled_from(_LOOKALIKE[ch]))
            elif how == "wide":
                ch = _full_width(ch)
            elif how == "hide":
                ch = ch + draw(st.sampled_from(_HIDDEN))
            chars.append(ch)
        if len(word) >= 3 and word.isalpha() and draw(st.booleans()):
            spaced_any = True
            out.append(draw(st.sampled_from([" ", "-", "."])).join(chars))
        else:
            out.append("".join(chars))
    return ("  " if spaced_any else " ").join(out)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def router(loop: asyncio.AbstractEventLoop) -> Router:
    router = Router(FakeEmbedder(), tenant=SEED_TENANT)
    loop.run_until_complete(router.warm())
    return router


PHRASES = sorted({p for ps in SEED_TENANT.policy_phrases.values() for p in ps})
# plain forms only (the spaced-out row is already an obfuscation of the plain one)
TRIGGERS = [*INSTRUCTING, *PARAPHRASES, *(text for key, text in ROWS if key != "imp-spaced")]


def test_every_policy_phrase_and_trigger_is_caught_in_plain_form(
    loop: asyncio.AbstractEventLoop, router: Router
) -> None:
    for phrase in PHRASES:
        assert loop.run_until_complete(router.route(phrase)).intent in POLICY_ESCALATING, phrase
    for trigger in TRIGGERS:
        assert instruction_reasons(trigger), trigger


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,  # the same 300 disguises every run: CI never turns red by chance
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_obfuscated_policy_phrases_route_like_plain(
    loop: asyncio.AbstractEventLoop, router: Router, data: st.DataObject
) -> None:
    phrase = data.draw(st.sampled_from(PHRASES))
    disguised = data.draw(obfuscated(phrase))
    plain = loop.run_until_complete(router.route(phrase))
    seen = loop.run_until_complete(router.route(disguised))
    assert (seen.intent, seen.intent_rule) == (plain.intent, plain.intent_rule), disguised


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,  # the same 300 disguises every run: CI never turns red by chance
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_obfuscated_triggers_screen_like_plain(data: st.DataObject) -> None:
    trigger = data.draw(st.sampled_from(TRIGGERS))
    disguised = data.draw(obfuscated(trigger))
    assert instruction_reasons(disguised) == instruction_reasons(trigger), disguised
