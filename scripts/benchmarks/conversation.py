"""A synthetic but realistic support conversation, replayed through our memory code.

Fifteen kinds of turn (SSO error codes, order status, hardware, billing, a thank-you…) repeat in
a fixed cycle; order references and error codes change with the turn number but keep their
width (`ORD-1005` / `ORD-1200`, `AUTH_305` / `AUTH_300`), so a turn's size depends only on its
kind. With a cycle of 15, turns 5 and 200 are the same kind: the write-size benchmark compares
identical content at two positions. Assistant replies look like the offline provider's
(extractive sentences with `[n]` citations) and carry a `meta` with the engine's keys.

`ConversationSim` applies the engine's memory rules turn by turn: facts extracted from each
customer message and merged (`memory.merge_facts`), the extractive summary regenerated after
every `tuning.summarize_every_turns` turns over the messages not yet summarised.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.providers.chat.base import Passage
from app.store.models import Conversation, Message
from app.turn import memory
from tuning import TUNING, Tuning

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CUSTOMER_ID = "cus_brightwater"


@dataclass(frozen=True)
class TurnKind:
    user: str
    condensed: str
    intent: str
    reply: str
    docs: tuple[tuple[str, str], ...]  # (doc id, title) of the passages the answer drew on
    tools: tuple[str, ...] = ()


KINDS: tuple[TurnKind, ...] = (
    TurnKind(
        "Hi, the room panels in our Oslo office keep blinking amber since yesterday. "
        "What does that mean?",
        "What does a blinking amber LED on the room panels mean?",
        "troubleshooting",
        "A slowly blinking amber LED means the panel has power but cannot reach the booking "
        "service [1]. Check that the switch port supplies PoE and that the panel's network allows "
        "outbound HTTPS on port 443 [1][2]. If it still blinks after a restart, hold the reset "
        "button for ten seconds so the panel rejoins the network [2].",
        (
            ("room-panel-led-status-codes", "Room Panel LED status codes"),
            ("room-panel-network-wifi-poe", "Room Panel network: Wi-Fi and PoE"),
        ),
    ),
    TurnKind(
        "Where is my order {order}? It was supposed to arrive last week and the team is waiting.",
        "What is the status of order {order}?",
        "order_status",
        "Order {order} shipped with UPS and is in transit; the tracking number is "
        "1Z8X41A70392615874. UPS usually delivers within three to five business days of "
        "shipping [1].",
        (("shipping-times-and-carriers", "Shipping times and carriers"),),
        ("lookupOrder",),
    ),
    TurnKind(
        "Since this morning everyone gets {code} when logging in through Okta",
        "Why does everyone get {code} when logging in through Okta?",
        "troubleshooting",
        "{code} means the SAML response signature could not be verified [1]. This usually "
        "happens after the identity provider rotated its signing certificate: upload the new "
        "certificate under Settings › Security › SSO, or re-import the metadata URL [1][2]. "
        "Users can sign in again as soon as the new certificate is saved [2].",
        (
            ("saml-signature-errors-auth-302", "SAML signature errors (AUTH_302)"),
            ("sso-saml-troubleshooting", "Troubleshooting SSO and SAML"),
        ),
    ),
    TurnKind(
        "How do I connect our Google Calendar so room bookings show up there?",
        "How do I connect Google Calendar so room bookings show up there?",
        "how_to",
        "An administrator connects Google Calendar under Settings › Integrations › Google "
        "Workspace [1]. Sign in with a Google admin account, grant the calendar scopes, then "
        "map each room to its resource calendar [1]. Bookings made in either place appear in "
        "both within a minute [2].",
        (
            ("google-calendar-integration", "Google Calendar integration"),
            ("calendar-sync-advanced", "Advanced calendar sync"),
        ),
    ),
    TurnKind(
        "Can I add 15 more seats to our Pro plan before the end of the month? We're onboarding "
        "a new team.",
        "Can I add 15 more seats to the Pro plan before the end of the month?",
        "billing_question",
        "Yes: an owner can add seats at any time under Billing › Seats, and the extra seats are "
        "charged pro rata for the rest of the billing period [1]. New seats are available "
        "immediately, so you can invite the new team right away [1][2].",
        (("changing-your-plan", "Changing your plan"), ("plans-and-pricing", "Plans and pricing")),
        ("lookupSubscription",),
    ),
    TurnKind(
        "The desk tags on floor 3 show a low battery warning, how do I replace the batteries?",
        "How do I replace the batteries in the desk tags?",
        "how_to",
        "Slide the desk tag off its mount, open the back cover with a coin and replace the two "
        "CR2450 cells, observing the + marking [1]. The tag reconnects by itself within a "
        "minute; if it shows a cross, press the button once to pair it again [1][2].",
        (
            ("desk-tag-battery", "Replacing Desk Tag batteries"),
            ("desk-tag-pairing", "Pairing a Desk Tag"),
        ),
    ),
    TurnKind(
        "We need our VAT number on the invoices for our accountant, where do I add it?",
        "Where do I add the VAT number to invoices?",
        "billing_question",
        "Owners add a VAT number under Billing › Company details; it appears on every invoice "
        "issued after you save it [1]. Past invoices can be re-issued with the number from the "
        "invoice list [1].",
        (("invoices-and-vat", "Invoices and VAT"),),
    ),
    TurnKind(
        "ok thanks, that worked!",
        "ok thanks, that worked!",
        "acknowledgment",
        "Glad that worked! Let me know if there's anything else I can help with.",
        (),
    ),
    TurnKind(
        "One visitor kiosk in reception won't print badges any more, the printer light is green "
        "though. Tried restarting it already.",
        "Why won't the visitor kiosk print badges when the printer light is green?",
        "troubleshooting",
        "When the printer light is green but nothing prints, the kiosk has usually lost its "
        "printer pairing after an update [1]. Open the kiosk's admin menu, choose Printer › "
        "Re-pair and print a test badge [1]. Make sure the label roll is the 62 mm type the "
        "kiosk expects [2].",
        (
            ("kiosk-badge-printing", "Kiosk badge printing"),
            ("visitor-kiosk-setup", "Setting up the Visitor Kiosk"),
        ),
    ),
    TurnKind(
        "Our booking sync script keeps getting RATE_{rate} back from the API. What should we "
        "change?",
        "What should we change when the booking sync gets RATE_{rate} from the API?",
        "troubleshooting",
        "RATE_{rate} means the API key exceeded its request limit for the current minute [1]. "
        "Read the Retry-After header and wait that long before retrying, and use the bulk "
        "endpoints or webhooks instead of polling each room [1][2].",
        (("api-rate-limits", "API rate limits"), ("webhooks", "Webhooks")),
    ),
    TurnKind(
        "How do I invite the new facilities team without giving them admin rights?",
        "How do I invite users without giving them admin rights?",
        "how_to",
        "Invite them under Settings › Users › Invite and choose the Member role, which can "
        "book and manage their own reservations but not change settings [1][2]. You can "
        "promote someone later from the same page [2].",
        (
            ("inviting-users", "Inviting users"),
            ("user-roles-and-permissions", "User roles and permissions"),
        ),
    ),
    TurnKind(
        "Can we export last quarter's booking data to CSV for our analytics team?",
        "Can we export last quarter's booking data to CSV?",
        "feature_question",
        "Yes: Analytics › Export lets an admin download bookings for any date range as CSV [1]. "
        "Exports over 100,000 rows are emailed to you as a link when they are ready [1].",
        (("data-export", "Exporting your data"),),
    ),
    TurnKind(
        "The room panel firmware update on {sku} failed halfway, the screen is now black. "
        "What now?",
        "What to do when the room panel firmware update on {sku} failed halfway?",
        "troubleshooting",
        "A panel that stops mid-update restores its previous firmware on the next power "
        "cycle [1]. Unplug the PoE cable for ten seconds, reconnect it and wait for the "
        "green LED; the update then retries during the night [1][2].",
        (
            ("room-panel-firmware-update", "Updating Room Panel firmware"),
            ("room-panel-led-status-codes", "Room Panel LED status codes"),
        ),
    ),
    TurnKind(
        "What does the Enterprise plan add over Pro for SSO and audit logs?",
        "What does the Enterprise plan add over Pro for SSO and audit logs?",
        "feature_question",
        "Both plans include SAML single sign-on [1]. Enterprise adds SCIM provisioning, audit "
        "logs kept for two years and a 4-hour support response time [1][2].",
        (("plans-and-pricing", "Plans and pricing"), ("audit-logs", "Audit logs")),
    ),
    TurnKind(
        "My colleague says meetings booked from Outlook don't appear on the panel, is that a "
        "sync issue? We need this working before Friday.",
        "Why don't meetings booked from Outlook appear on the room panel?",
        "troubleshooting",
        "Meetings booked in Outlook appear on the panel only when the room's resource mailbox "
        "accepts them automatically [1]. In Exchange admin, set the room to auto-accept and "
        "check that the Harborline service account has access to its calendar [1][2].",
        (
            ("microsoft-365-calendar-integration", "Microsoft 365 calendar integration"),
            ("calendar-sync-advanced", "Advanced calendar sync"),
        ),
    ),
)

# What the prompt's <passages> hold on every turn (both prompt layouts get the same five).
PROMPT_PASSAGES: tuple[Passage, ...] = tuple(
    Passage(
        id=f"{doc}#0",
        doc_id=doc,
        kind="doc",
        title=title,
        breadcrumb=f"{title} › Overview",
        text=text,
    )
    for doc, title, text in (
        (
            "room-panel-led-status-codes",
            "Room Panel LED status codes",
            "Green: the panel is connected and the room is free. Red: the room is booked. Slowly "
            "blinking amber: the panel has power but cannot reach the booking service; check PoE "
            "and that outbound HTTPS (port 443) is allowed. Fast blinking amber: a firmware update "
            "is being installed; do not unplug the panel.",
        ),
        (
            "room-panel-network-wifi-poe",
            "Room Panel network: Wi-Fi and PoE",
            "Room Panels are powered over Ethernet (802.3af, class 3) or by the 12 V adapter. On "
            "Wi-Fi, the panel joins WPA2-Personal or WPA2-Enterprise networks on 2.4 or 5 GHz. "
            "Hold the reset button for ten seconds to forget the network and start setup again.",
        ),
        (
            "saml-signature-errors-auth-302",
            "SAML signature errors (AUTH_302)",
            "AUTH_302 means the signature on the SAML response did not verify with the certificate "
            "we have on file. It almost always follows a certificate rotation at the identity "
            "provider. Upload the new signing certificate, or re-import the metadata URL so the "
            "certificate is refreshed automatically.",
        ),
        (
            "sso-saml-troubleshooting",
            "Troubleshooting SSO and SAML",
            "Start with the error code on the sign-in page: AUTH_302 (signature), AUTH_304 (clock "
            "skew), AUTH_311 (NameID mismatch), AUTH_320 (IdP-initiated login disabled). The audit "
            "log shows each failed assertion with its reason and the user it named.",
        ),
        (
            "shipping-times-and-carriers",
            "Shipping times and carriers",
            "Hardware orders ship from our warehouse within two business days with UPS or DHL. "
            "Delivery takes three to five business days in the EU and five to eight elsewhere. "
            "The tracking number appears on the order as soon as the carrier collects it.",
        ),
    )
)


def _fill(template: str, turn: int) -> str:
    return template.format(
        order=f"ORD-{1000 + turn}",
        code=f"AUTH_{300 + turn % 100:03d}",
        rate=f"{400 + turn % 100:03d}",
        sku=f"HL-RP{10 + turn % 90:02d}",
    )


def kind_of(turn: int) -> TurnKind:
    """Turn numbers start at 1; the kinds repeat every len(KINDS) turns."""
    return KINDS[(turn - 1) % len(KINDS)]


def assistant_meta(turn: int, kind: TurnKind) -> dict[str, Any]:
    """A `meta` with the keys and value shapes `engine._answer` stores."""
    passages = [
        {
            "kind": "doc",
            "id": f"{doc}#{i}",
            "docId": doc,
            "title": title,
            "breadcrumb": f"{title} › Section {i + 1}",
            "rrfScore": round(0.0312 - 0.0021 * i, 6),
            "rerankScore": round(0.81 - 0.07 * i, 4),
        }
        for i, (doc, title) in enumerate((kind.docs * 3)[:5] if kind.docs else ())
    ]
    citations = [
        {
            "n": n,
            "passageId": p["id"],
            "docId": p["docId"],
            "title": p["title"],
            "kind": "doc",
            "breadcrumb": p["breadcrumb"],
            "url": f"/help/{p['docId']}",
        }
        for n, p in enumerate(passages[:2], start=1)
    ]
    condensed = _fill(kind.condensed, turn)
    retrieval = kind.intent != "acknowledgment"
    return {
        "intent": kind.intent,
        "sentiment": "neutral",
        "confidence": "strong" if retrieval else "none",
        "condensedQuestion": condensed,
        "condensation": {
            "standaloneQuestion": condensed,
            "intent": kind.intent,
            "needsRetrieval": retrieval,
            "needsTools": list(kind.tools),
            "sentiment": "neutral",
            "mentionedOrderId": f"ORD-{1000 + turn}" if "{order}" in kind.user else None,
            "explicitHumanRequest": False,
            "clampedFields": [],
            "source": "offline",
            "fallbackReason": None,
        },
        "topRerankScore": passages[0]["rerankScore"] if passages else None,
        "escalated": False,
        "escalationReason": None,
        "escalationExplanation": "no escalation signal fired",
        "caseRef": None,
        "failedTurns": 0,
        "passageCount": len(passages),
        "passages": passages,
        "tools": [{"tool": t, "ok": True, "found": True} for t in kind.tools],
        "citations": citations,
        "invalidCitations": 0,
        "model": "offline",
        "fallbackReason": None,
        "spendCapReached": False,
        "retrievalReason": None,
        "latencyMs": {
            "condense": 41.3,
            "retrieve": 96.2,
            "rerank": 12.8,
            "generate": 3.1,
            "total": 152.7,
        },
        "tokens": {"input": 0, "output": 0, "cacheRead": 0},
    }


@dataclass
class TurnWrites:
    """What one turn stored: its two messages, and whether the facts changed."""

    number: int
    user: Message
    reply: Message
    new_facts: bool


@dataclass
class ConversationSim:
    """A conversation advanced turn by turn with the engine's memory rules."""

    tuning: Tuning = TUNING
    conversation: Conversation = field(
        default_factory=lambda: Conversation(
            id=uuid.UUID(int=1).hex, customer_id=CUSTOMER_ID, created_at=START, updated_at=START
        )
    )
    messages: list[Message] = field(default_factory=list)
    facts: list[memory.Fact] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return self.conversation.turn_count

    def _message(self, seq: int, role: str, content: str, meta: dict[str, Any]) -> Message:
        at = START + timedelta(minutes=2 * seq)
        return Message(
            id=uuid.UUID(int=10_000 + seq).hex,
            conversation_id=self.conversation.id,
            seq=seq,
            role=role,  # type: ignore[arg-type]
            content=content,
            meta=meta,
            created_at=at,
        )

    def user_message(self, turn: int) -> Message:
        """The customer's message of `turn` as stored (seq allocated as the engine does)."""
        return self._message(
            self.conversation.last_seq + 1, "user", _fill(kind_of(turn).user, turn), {}
        )

    def advance(self) -> TurnWrites:
        """Store the next turn (user message, reply), then update counters, facts, summary."""
        turn = self.turns + 1
        kind = kind_of(turn)
        user = self.user_message(turn)
        reply = self._message(
            user.seq + 1, "assistant", _fill(kind.reply, turn), assistant_meta(turn, kind)
        )
        self.messages += [user, reply]
        extracted = memory.extract_facts(user.content, user.seq)
        if extracted:
            self.facts = memory.merge_facts(self.facts, extracted)
        conv = self.conversation.model_copy(
            update={
                "last_seq": reply.seq,
                "turn_count": turn,
                "last_intent": kind.intent,
                "facts": [f.to_doc() for f in self.facts],
                "updated_at": reply.created_at,
            }
        )
        if memory.should_summarize(turn, self.tuning):
            unsummarised = [m for m in self.messages if m.seq > conv.summarized_through_seq]
            folded = memory.to_summarize(unsummarised, self.tuning)  # as engine._summarize does
            if folded:
                conv = conv.model_copy(
                    update={
                        "summary": memory.extractive_summary(folded, conv.summary, self.tuning),
                        "summarized_through_seq": folded[-1].seq,
                    }
                )
        self.conversation = conv
        return TurnWrites(turn, user, reply, bool(extracted))
