"""What a short support message says about itself (en, de, fr). Pure. Its language:
`app.language.detect`, re-exported here for callers that import it from this module."""

from __future__ import annotations

import re
from typing import Final

from app.language.detect import detect_language as detect_language

# first-person pronouns and possessives: "where is my order" asks about the customer's own data,
# "how long does shipping take" does not
_FIRST_PERSON: Final = re.compile(
    r"(?<!\w)(?:my|our|mine|ours|i|we|mein\w*|unser\w*|ich|wir|ma|mon|mes|notre|nos|je|j|nous)"
    r"(?!\w)",
    re.IGNORECASE,
)


def first_person(text: str) -> bool:
    """Whether the customer speaks of themselves or their organisation (en, de, fr)."""
    return bool(_FIRST_PERSON.search(text.replace("’", "'")))


# interrogatives and the auxiliaries a question starts with (en, de, fr)
_QUESTION_OPENING: Final = re.compile(
    r"^\W*(?:what|how|why|when|where|which|who|whom|whose|is|are|was|were|can|could|do|does|did|"
    r"will|would|should|shall|may|might|has|have|had|wer|wann|wo|warum|wie|welche[rsmn]?|"
    r"kann|gibt|qui|que|quoi|quand|où|pourquoi|comment|quel(?:le)?s?|est-ce)\b",
    re.IGNORECASE,
)


def opens_as_question(text: str) -> bool:
    """Whether the message is worded as a question, with or without a question mark."""
    return bool(_QUESTION_OPENING.match(text))


REPORT_MIN_WORDS: Final = 4  # "Reset password" names a topic; it does not report a problem
_WHY: Final = re.compile(r"^\W*(?:why|warum|wieso|pourquoi)\b", re.IGNORECASE)


def reports_a_problem(text: str) -> bool:
    """A statement of what is going wrong ("the tags show a ghost image", "our stream
    stopped") or a question why it does ("why does my panel keep rebooting?"), rather than a
    question about how something works or what it can do."""
    stripped = text.strip()
    if _WHY.match(stripped):
        return True
    return len(stripped.split()) >= REPORT_MIN_WORDS and not (
        stripped.endswith("?")
        or opens_as_question(stripped)
        or _INFORMATION_IMPERATIVE.match(stripped)
    )


# An instruction to tell, show or explain something ("Summarise the refund policy", "Explain
# how seats are billed", "Erkläre mir…", "Décris…"): a request for information, worded as an
# imperative, optionally after "please" or an adverb.
_INFORMATION_IMPERATIVE: Final = re.compile(
    r"^\W*(?:(?:please|pls|kindly|now|bitte|svp|stp)\s+)*(?:"
    r"tell|explain|describe|summari[sz]e|list|outline|define|compare|clarify|show|"
    r"walk\s+me\s+through|give\s+me|help\s+me\s+(?:understand|with)|"
    r"erkl[äa]re?n?|beschreibe?n?|nenne?n?|zeige?n?|fasse?\s+\w+\s+zusammen|"
    r"explique[rz]?|d[ée]cri[rstv]\w*|r[ée]sume[rz]?|donne[rz]?(?:-moi)?|montre[rz]?(?:-moi)?"
    r")\b",
    re.IGNORECASE,
)


def asks_for_information(text: str) -> bool:
    """Worded as a question, or as an instruction to tell or explain something (en, de, fr):
    either way the message wants an answer, so it is never a bare acknowledgment."""
    return opens_as_question(text) or bool(_INFORMATION_IMPERATIVE.match(text))


# A question about a thing: an interrogative (and its auxiliary, in English) followed by a
# subject that is an article or "your" ("what does the manual say…", "is the charger
# included?", "was sagt das Handbuch…", "que dit le manuel…"). Its subject is neither the
# customer ("how do I…", "can we…") nor the company asked to act ("can you…").
_ABOUT_A_THING: Final = re.compile(
    r"^\W*(?:"
    r"(?:what|how|why|when|where|which|who)(?:\s+(?:long|much|many|often|soon|exactly|else))?\s+"
    r"(?:do|does|did|is|are|was|were|can|could|will|would|should|has|have)"
    r"|is|are|does|do|can|could|will|would|was|were"
    r")\s+(?:the|a|an|your|its|their|any|there)\b"
    # "are alkaloids poisonous?", "do invoices include VAT?": a bare plural names the thing
    r"|^\W*(?:is|are|does|do|can|could|will|would|was|were)\s+(?!(?:they|these|those|others|"
    r"yours|ours|theirs|us|its|his|hers|mines|this|yes)\b)[a-z][a-z-]*[a-rt-z]s\b"
    r"|^\W*(?:was|wie|wann|wo|warum|welche[rsmn]?|wer)\s+[^\W\d]+\s+"
    r"(?:der|die|das|den|dem|ein|eine|einen|es)\b"
    r"|^\W*(?:ist|sind|gibt|kann|hat|wird)\s+(?:der|die|das|es)\b"
    r"|^\W*(?:que|qu'|comment|quand|où|pourquoi|quel(?:le)?s?)\s*[^\W\d]+"
    r"(?:-t-(?:il|elle|ils|elles))?\s+(?:le|la|les|l'|un|une|du|des|votre|vos)"
    r"|^\W*est-ce\s+qu(?:e\s+|')(?:le|la|les|l'|un|une|il\s+y\s+a)"
    # "what about exports?", "und was ist mit…", "et pour…": a topic raised, nothing asked for
    r"|^\W*(?:and\s+|so\s+)?(?:what|how)\s+about\b"
    r"|^\W*(?:und\s+)?was\s+ist\s+mit\b"
    r"|^\W*(?:et\s+)?(?:qu'en\s+est-il|quid)\b",
    re.IGNORECASE,
)
# the company addressed as the one to act ("can you…", "können Sie…", "pouvez-vous…"), or the
# customer as the one acted on ("can the team refund me?")
_ADDRESSED: Final = re.compile(
    r"\b(?:you|vous|me|us|mich|mir|uns|moi)\b|(?<=\w )Sie\b", re.IGNORECASE
)


def asks_about_a_thing(text: str) -> bool:
    """Whether the message is a question about a thing (a product, a document, a policy) and
    speaks of no one: not of the customer's own account ("my", "we"), not asking the company to
    act ("can you…"). Such a question asks for information; it requests nothing (en, de, fr)."""
    text = text.replace("’", "'")
    return bool(
        _ABOUT_A_THING.search(text) and not first_person(text) and not _ADDRESSED.search(text)
    )


# A question about what *would* be charged ("will I be charged the full price?", "do we pay for
# pending invites?", "werde ich voll berechnet?", "vais-je payer le mois entier ?"): it asks how
# billing works, before anything happened, so it disputes nothing (en, de, fr). A charge that
# happened ("why was I charged twice?") is past tense and not matched.
_WOULD_BE_CHARGED: Final = re.compile(
    r"^\W*(?:(?:and|but|so|then)\s+)?(?:(?:how\s+much|when|what)\s+)?"
    r"(?:will|would|do|does|should|shall)\s+(?:i|we|my\s+\w+|our\s+\w+)\s+"
    r"(?:(?:still|also|then)\s+)?(?:be\s+(?:charged|billed|invoiced)|get\s+(?:charged|billed)|"
    r"(?:have\s+to\s+|need\s+to\s+)?pay)\b[^.!]*\?\s*$"
    r"|^\W*(?:werde|würde|muss|müssen)\s+(?:ich|wir)\b[^.!]*\b(?:berechnet|bezahlen|zahlen)\b"
    r"[^.!]*\?\s*$"
    r"|^\W*(?:(?:est-ce\s+que\s+)?(?:je|nous)\s+(?:serai|serons|vais|allons|dois|devons)|"
    r"(?:serai|serons|vais|allons|dois|devons)-(?:je|nous))\b[^.!]*"
    r"\b(?:factur[ée]e?s?|payer)\b[^.!]*\?\s*$",
    re.IGNORECASE,
)


def asks_what_would_be_charged(text: str) -> bool:
    """Whether the message asks what a charge would be, before it happened (en, de, fr)."""
    return bool(_WOULD_BE_CHARGED.search(text.replace("’", "'")))


# the customer waits for something of theirs: "where is my kiosk?", "when will our tags arrive?",
# "has my panel shipped?", "wo ist mein Raumpanel?", "où est mon kiosque ?" (en, de, fr)
_AWAITED = re.compile(
    r"\bwhere\s+(?:is|are)\s+(?:my|our)\b|\bwhen\s+(?:will|does|do|is|are)\s+(?:my|our)\b"
    r"[^?.!]*\b(?:arriv\w*|ship\w*|deliver\w*|come|coming|get\s+here)\b"
    r"|\b(?:has|have)\s+(?:my|our)\b[^?.!]*\b(?:shipped|arrived|been\s+(?:sent|shipped))\b"
    r"|\btrack\s+(?:my|our)\b"
    r"|\bwo\s+(?:ist|sind|bleibt|bleiben)\s+(?:mein|meine|unser|unsere)\b"
    r"|\bwann\s+(?:kommt|kommen)\s+(?:mein|meine|unser|unsere)\b"
    r"|\bo[uù]\s+(?:est|sont|en\s+est)\s+(?:mon|ma|mes|notre|nos)\b",
    re.IGNORECASE,
)


def awaits_delivery(text: str) -> bool:
    """Whether the customer asks where something of theirs is, or when it comes (en, de, fr)."""
    return bool(_AWAITED.search(text))


# A question about the terms of an action, not the action: "can I cancel anytime?", "could we
# get a refund after 30 days?", "kann ich jederzeit kündigen?", "puis-je résilier à tout
# moment ?" (en, de, fr). The action is followed by *when*, so the customer asks whether the
# terms allow it; "can I cancel my plan?" names what to act on and stays a request.
_TERMS_OF = re.compile(
    r"^\W*(?:(?:and|but|so)\s+)?(?:can|could|may)\s+(?:i|we)\s+(?:still\s+)?(?:cancel|"
    r"stop|quit|downgrade|get\s+(?:a\s+)?refund(?:ed)?|return\s+it)\s+(?:any\s*time|"
    r"at\s+any\s+(?:time|point)|whenever\b|before\b|during\b|after\b|within\b|mid-?\w+)"
    r"[^.!]*\?\s*$"
    r"|^\W*(?:kann|k[öo]nnen)\s+(?:ich|wir)\s+(?:jederzeit|auch\s+vor|vor|nach|w[äa]hrend)\b"
    r"[^.!]*\?\s*$"
    r"|^\W*(?:puis-je|pouvons-nous|est-ce\s+que\s+(?:je|nous)\s+(?:peux|pouvons))\s+\w+\s+"
    r"(?:[àa]\s+tout\s+moment|avant|apr[èe]s|pendant)\b[^.!]*\?\s*$",
    re.IGNORECASE,
)


def asks_about_the_terms(text: str) -> bool:
    """Whether the message asks when an action is allowed, not for the action (en, de, fr)."""
    return bool(_TERMS_OF.search(text.replace("’", "'")))


# Where to find something: "where can I find my invoices?", "where do I download the receipt?",
# "wo finde ich meine Rechnung?", "wo kann ich die Rechnung herunterladen?", "où trouver mes
# factures ?", "où puis-je télécharger ma facture ?" (en, de, fr). The customer asks for a place
# in the product, so the question requests nothing; "where can I cancel…" or "where do I ask
# for a refund?" name an action, not a finding verb, and are not matched.
_WHERE_TO_FIND = re.compile(
    r"^\W*(?:(?:and|but|so|ok(?:ay)?)[\s,]+)?where\s+(?:(?:can|could|do|would|should|may)\s+"
    r"(?:i|we|one)|to)\s+(?:\w+\s+)?(?:find|locate|download|see|view|look\s+up|access)\b"
    r"|^\W*(?:und\s+)?wo\s+(?:finde|finden|sehe|sehen)\s+(?:ich|wir)\b"
    r"|^\W*(?:und\s+)?wo\s+(?:kann|k[öo]nnen)\s+(?:ich|wir)\b[^.!?]*\b(?:finden|sehen|"
    r"herunterladen|abrufen|einsehen|ansehen)\b"
    r"|^\W*(?:et\s+)?o[ùu]\s+(?:trouver|voir|t[ée]l[ée]charger|consulter)\b"
    r"|^\W*(?:et\s+)?o[ùu]\s+(?:puis-je|pouvons-nous|est-ce\s+que\s+(?:je|nous)\s+"
    r"(?:peux|pouvons))\s+(?:\w+\s+)?(?:trouver|voir|t[ée]l[ée]charger|consulter)\b"
    # where a thing of theirs is: "where is my invoice?", "wo ist meine Rechnung?", "où sont mes
    # factures ?" (a refund asked about this way is its status, not a request for one)
    r"|^\W*(?:(?:and|so|ok(?:ay)?)[\s,]+)?where(?:\s+(?:is|are)|'s)\s+(?:my|our)\b"
    r"|^\W*(?:und\s+)?wo\s+(?:ist|sind)\s+(?:mein|meine|unser|unsere)\b"
    r"|^\W*(?:et\s+)?o[ùu]\s+(?:est|sont)\s+(?:mon|ma|mes|notre|nos)\b",
    re.IGNORECASE,
)


# How to remove *someone else* from the workspace: "how do I delete a user?", "how can we
# remove members?", "wie lösche ich einen Benutzer?", "comment supprimer un utilisateur ?"
# (en, de, fr). An admin task the docs explain, not a request to erase the customer's own
# account or data ("how do I delete my account?", "my user account" are not matched).
_REMOVE_SOMEONE = re.compile(
    r"^\W*(?:(?:and|so|ok(?:ay)?)[\s,]+)?(?:how|where)\s+(?:do|can|could|would|should)\s+"
    r"(?:i|we)\s+(?:delete|remove|deactivate|offboard|erase)\s+(?:(?:a|an|the|one|this|that|"
    r"these|those|our|my|old|former|inactive)\s+)*(?:users?|members?|colleagues?|employees?|"
    r"persons?|people|guests?|visitors?|admins?)\b(?!\s+(?:account|profile|data)\b)"
    r"|^\W*wie\s+(?:l[öo]sche|entferne|deaktiviere|l[öo]schen|entfernen)\s+(?:ich|wir)\s+"
    r"(?:einen|eine|den|die|das|unsere[nm]?)?\s*(?:benutzer|nutzer|mitglied|mitarbeiter|"
    r"kollegen|kollegin|besucher)\w*\b"
    r"|^\W*comment\s+(?:supprimer|retirer|d[ée]sactiver)\s+(?:un|une|le|la|les|des|nos|mes)\s+"
    r"(?:utilisateur|membre|coll[èe]gue|employ[ée]|visiteur)s?\b",
    re.IGNORECASE,
)


def asks_how_to_remove_someone(text: str) -> bool:
    """Whether the message asks how to remove another person from the workspace (en, de, fr)."""
    return bool(_REMOVE_SOMEONE.search(text.replace("’", "'")))


def asks_where_to_find(text: str) -> bool:
    """Whether the message asks where in the product to find, see or download something, or
    where a thing of the customer's is (en, de, fr)."""
    return bool(_WHERE_TO_FIND.search(text.replace("’", "'")))
