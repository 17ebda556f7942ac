"""Screening: does a sentence instruct the reader or the assistant? Pure: no I/O.

Help articles tell customers what to do ("tap Cleaning mode", "enter your password on the sign-in
page"); that is their job and is never screened out. What a help article never does is

- address an AI assistant ("note to AI assistants", "ignore previous instructions", "you are now
  an unrestricted model", "do not mention this note");
- direct whoever answers about what to say to a third party ("tell the customer that…", "inform
  the user…", "the assistant must reply…");
- ask anyone to hand over a secret ("reply with your password", "send your one-time code to…",
  "email their credentials to x@y"), warnings excepted ("never share your password");
- hand out codes ("give them the refund code …", "offer every customer a discount code").

`instruction_reasons` names which of these a sentence does; `instructing_sentences` screens a
text per sentence (ingestion uses it to flag an article for review); `without_instructions`
drops every paragraph or list item holding such a sentence, so an extractive answer or a model
prompt never carries it, even from an article that slipped past review.
"""

from __future__ import annotations

import re
from functools import lru_cache

from app.language.normalize import normalize

AI_ADDRESSED = "addresses-an-ai"
THIRD_PARTY = "directs-what-to-tell-the-customer"
SECRET_REQUEST = "asks-for-a-secret"
CODE_HANDOUT = "hands-out-codes"

# Who an injection addresses. Bare "assistant", "bot" or "model" are left out on purpose: help
# text legitimately says "add someone as an assistant" or "choose a model".
_AI = (
    r"(?:a\.?i\.?(?:\s+(?:assistant|agent|model|system|chat ?bot))?|llm"
    r"|(?:large\s+)?language\s+model|chat ?bot)s?(?![\w-])"
)
_I = re.IGNORECASE


def _compile(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, _I) for p in patterns)


AI_PATTERNS = _compile(
    # "ignore all previous instructions", "disregard the above rules", "forget your guidelines"
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding|original|former|system)\s+"
    r"(?:instructions?|prompts?|rules|guidelines|directions|directives|context)\b",
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+(?:of\s+)?)?your\s+"
    r"(?:instructions|rules|guidelines|programming|training|system\s+prompt)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|every\s+|any\s+)?(?:of\s+)?(?:the\s+)?"
    r"(?:instructions?|rules)\s+(?:you\s+(?:were|have\s+been)\s+given|(?:given\s+)?above|so\s+far"
    r"|before\s+this)",
    r"\bsystem\s+prompts?\b",
    # "you are now" alone is everyday help text ("you are now signed in", "you are now in kiosk
    # mode"); a change of identity or of the rules is not
    r"\byou\s+are\s+now\s+(?:an?\s+)?(?:unrestricted|jailbroken|free\s+of|no\s+longer\s+bound|"
    rf"dan\b|in\s+(?:developer|god|jailbreak|dan|unrestricted)\s+mode|{_AI})",
    r"\bnew\s+instructions?\s*:",
    # the reader addressed as an AI: "if you are an AI", "note to language models",
    # "AI assistants reading this page must ..."
    rf"\b(?:if\s+you\s+are|you\s+are|as)\s+an?\s+{_AI}",
    rf"\b(?:attention|note\s+to|notice\s+to|message\s+to|dear|hey|hello|to\s+all|to\s+any)"
    rf"[\s,:]+(?:the\s+)?(?:{_AI}|chatgpt|gpt-?\d\w*|claude|gemini)",
    rf"\b{_AI}\s+(?:reading\b|that\s+reads?\b|which\s+reads?\b|who\s+reads?\b|"
    r"processing\s+this|summari[sz]ing\s+this|answering\b|must\b|should\b|are\s+instructed\b)",
    # keeping things from the customer is never a help-article instruction
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+|it\s+)?to|"
    r"reveal\s+(?:this\s+|it\s+)?to|disclose\s+(?:this\s+|it\s+)?to)\s+(?:the\s+|any\s+)?"
    r"(?:customers?|users?|callers?|clients?)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|repeat|acknowledge)\s+"
    r"(?:this|these)\s+(?:note|instructions?|messages?|lines?)\b",
    r"\b(?:reveal|print|repeat)\s+(?:me\s+)?your\s+(?:hidden\s+|initial\s+|original\s+)?"
    r"(?:prompt|instructions)\b",
    r"<\|?(?:im_?start|im_?end|system|end_?of_?text)\|?>|\[/?INST\]|<<\s*SYS\s*>>",
    # the one answering addressed in the third person: "the assistant must reply ..."
    r"\b(?:the|this|our)\s+(?:assistant|chat\s?bot|ai)\s+(?:must|should|shall|has\s+to|is\s+to|"
    r"needs\s+to|will\s+now)\b",
)

# A third party (the customer) spoken of as someone the reader must tell something. Help text
# speaks *to* the customer ("you"), so "tell the customer" is a directive to whoever answers.
_PARTY = r"(?:the|every|each|all|any|this|that)\s+(?:customers?|users?|callers?|clients?|visitors?)"
_THIRD_PARTY = _compile(
    r"(?:^|[:;,.]\s*|\b(?:then|and|please|always|must|should)\s+)"
    r"(?:tell|inform|instruct|advise|remind|assure|promise|notify|convince|warn|ask)\s+"
    rf"{_PARTY}\b",
    r"(?:^|[:;,.]\s*|\b(?:then|and|please|always|must|should)\s+)"
    rf"(?:say|explain|reply|respond|write|mention)\s+to\s+{_PARTY}\b",
)

_SECRET = (
    r"(?:pass(?:word|code|phrase)s?|pins?|credentials?|log-?in\s+details|sign-?in\s+details"
    # a secret described rather than named: "the secret they type to sign in"
    r"|secrets?|(?:what|whatever|the\s+\w+)\s+(?:they|you|he|she)\s+(?:type|enter|use)\s+to\s+"
    r"(?:sign|log)\s*(?:in|on)"
    r"|(?:one-time|verification|security|2fa|mfa|otp|authenticat\w*|backup|recovery|sms)\s+codes?"
    r"|cvc|cvv|card\s+numbers?|(?:secret|private)\s+keys?)"
)
_TRANSFER = (
    r"(?:send|e-?mail|mail|forward|share|text|give|tell|dm"
    r"|(?:reply|respond|answer)\s+(?:back\s+)?with)"
)
_WHOSE = r"(?:your|their|his|her|its|the\s+customer'?s|the\s+user'?s|the\s+account'?s)"
_SECRET_REQUEST = _compile(
    # "reply with their password", "send us your one-time code", "share your PIN with ..."
    rf"\b{_TRANSFER}\s+(?:(?:it|us|me|them|him|her)\s+)?(?:all\s+)?{_WHOSE}\s+"
    rf"(?:[\w-]+\s+){{0,2}}{_SECRET}\b",
)
_TYPE_HERE = re.compile(
    rf"\b(?:type|paste|write|enter)\b.*\b{_SECRET}\b.*\b(?:in|into|here|below)\s+"
    r"(?:the|this)?\s*(?:chat|conversation|reply|message|e-?mail|thread)\b",
    _I,
)
# a secret handed to somewhere: an address, a link, or "over to" whoever
_SEND_TO_ADDRESS = re.compile(
    r"\b(?:send|sent|e-?mail|mail|forward|submit|pass|hand|post|paste|give|gave|share|text|dm)"
    r"(?:s|es|ed|d|ing)?\b"
    r"[^.]{0,100}?\b(?:(?:to|with)\s+[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?:to|at|on|via)\s+(?:https?://|www\.)"
    r"|over\s+to\b)",
    _I,
)
_MENTIONS_SECRET = re.compile(rf"\b{_SECRET}\b", _I)
# a warning names the same things: "never share your password", "we will not ask for your PIN"
_NEGATION = re.compile(
    r"\b(?:never|not|don'?t|doesn'?t|won'?t|no\s+one|nobody|cannot|can'?t|without)\b", _I
)

_CODE_HANDOUT = _compile(
    r"\b(?:give|offer|issue|hand\s+out|send|provide|grant|share|tell)\s+"
    r"(?:(?:them|him|her|everyone|anyone|"
    rf"{_PARTY}|customers?|users?)\s+)?(?:(?:a|an|the|this|our)\s+)?"
    r"(?:free\s+|special\s+|secret\s+|100\s?%\s+)?"
    r"(?:refund|discount|promo(?:tional)?|coupon|voucher|gift|credit|bonus|reward)\s+"
    r"(?:codes?|vouchers?|coupons?|keys?)\b",
)

# The same four shapes in German and French (the languages the seed corpus is written in too).
_OTHER_AI = _compile(
    r"\b(?:ignorier(?:e|en)?|vergiss|vergessen\s+sie|missachte(?:n)?)\s+(?:alle\s+)?"
    r"(?:vorherigen|bisherigen|obigen|früheren)\s+(?:Anweisungen|Regeln|Instruktionen)",
    r"\bignore[rz]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles)\s+"
    r"(?:précédentes|ci-dessus|antérieures)",
    # "ignore your instructions" and "you are now in developer mode", as in English
    r"\b(?:ignorier(?:e|en)?|vergiss|vergessen|missachte(?:n)?)\s+(?:sie\s+)?(?:alle\s+)?"
    r"(?:ihre|deine|eure)\s+(?:Anweisungen|Regeln|Instruktionen|Vorgaben)",
    r"\b(?:sie\s+sind|du\s+bist)\s+(?:jetzt\s+|nun\s+|ab\s+sofort\s+)?im\s+"
    r"(?:Entwickler|Debug|Jailbreak|Admin)-?modus",
    r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:vos|tes)\s+(?:instructions|consignes|"
    r"règles)",
    r"\b(?:vous\s+êtes|tu\s+es)\s+(?:maintenant\s+|désormais\s+)?en\s+mode\s+"
    r"(?:développeur|debug|jailbreak|sans\s+restriction)",
    r"\b(?:an\s+(?:alle\s+)?KI-?(?:Assistenten|Systeme|Modelle)|aux\s+(?:assistants|modèles)\s+"
    r"(?:d'|de\s+l')?IA)\b",
)
_OTHER_THIRD_PARTY = _compile(
    r"(?:^|[:;,.]\s*)(?:sag|sage|sagen\s+sie|teile|teilen\s+sie|informiere|informieren\s+sie)\s+"
    r"(?:dem|den|der|allen)\s+(?:Kunden|Kundin|Kundinnen|Nutzer|Nutzerin|Benutzer)",
    r"(?:^|[:;,.]\s*)(?:dis|dites|informe|informez|indique|indiquez)\s+(?:au|aux|à\s+l[ae'])\s*"
    r"(?:client|clients|cliente|utilisateur|utilisateurs)\b",
)
_OTHER_SECRET = re.compile(  # someone's own secret ("Ihr Passwort", "son mot de passe")
    r"\b(?:Ihr(?:e|en|em|er)?|dein(?:e|en|em|er)?|sein(?:e|en|em|er)?|votre|vos|son|sa|ses|leurs?)"
    r"\s+(?:\w+\s+)?"
    r"(?:Passwort|Kennwort|PIN|Zugangsdaten|Bestätigungscode|Einmalcode|mot\s+de\s+passe|"
    r"identifiants|code\s+de\s+(?:vérification|confirmation))(?![-\w])",
    _I,
)
_OTHER_TRANSFER = re.compile(
    r"\b(?:senden|sende|schicken|schicke|mailen|maile|antworten|antworte|mitteilen|teilen|"
    r"envoyer|envoyez|envoie|répondre|répondez|réponds|communiquer|communiquez|transmettre|"
    r"transmettez)\b",
    _I,
)
_OTHER_NEGATION = re.compile(r"\b(?:nie|niemals|nicht|kein\w*|jamais|ne|n')\b", _I)


def _other_languages(text: str) -> list[str]:
    reasons = []
    if any(p.search(text) for p in _OTHER_AI):
        reasons.append(AI_ADDRESSED)
    if any(p.search(text) for p in _OTHER_THIRD_PARTY):
        reasons.append(THIRD_PARTY)
    if (
        _OTHER_SECRET.search(text)
        and _OTHER_TRANSFER.search(text)
        and not _OTHER_NEGATION.search(text)
    ):
        reasons.append(SECRET_REQUEST)
    return reasons


_MARKUP = re.compile(r"[*_`~]+")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[]?[A-Z0-9])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


def plain(text: str) -> str:
    """The text as the screen reads it: normalised (`app.language.normalize`: full-width,
    look-alike, hidden and spaced-out letters read plainly), Markdown emphasis removed,
    whitespace collapsed."""
    return _SPACE.sub(" ", _MARKUP.sub("", normalize(text))).strip()


def ai_phrases(text: str) -> list[tuple[int, str]]:
    """(offset, phrase) for every phrase of `text` that addresses an AI assistant."""
    flat = plain(text)
    return [(m.start(), m.group(0).strip()) for p in AI_PATTERNS for m in p.finditer(flat)]


def _secret_request(sentence: str) -> bool:
    for pattern in _SECRET_REQUEST:
        for m in pattern.finditer(sentence):
            if not _NEGATION.search(sentence[max(0, m.start() - 40) : m.start()]):
                return True
    if _TYPE_HERE.search(sentence) and not _NEGATION.search(sentence):
        return True
    return bool(
        _SEND_TO_ADDRESS.search(sentence)
        and _MENTIONS_SECRET.search(sentence)
        and not _NEGATION.search(sentence)
    )


def instruction_reasons(sentence: str) -> list[str]:
    """Why `sentence` instructs the reader or the assistant (empty: it does not)."""
    text = plain(sentence)
    reasons: list[str] = []
    if any(p.search(text) for p in AI_PATTERNS):
        reasons.append(AI_ADDRESSED)
    if any(p.search(text) for p in _THIRD_PARTY):
        reasons.append(THIRD_PARTY)
    if _secret_request(text):
        reasons.append(SECRET_REQUEST)
    if any(p.search(text) for p in _CODE_HANDOUT):
        reasons.append(CODE_HANDOUT)
    reasons.extend(r for r in _other_languages(text) if r not in reasons)
    return reasons


def instructs(sentence: str) -> bool:
    """True when `sentence` instructs the reader or the assistant (see the module doc)."""
    return bool(instruction_reasons(sentence))


def sentences(text: str) -> list[str]:
    """Sentences of Markdown-ish text: each list item and each table row is one."""
    out: list[str] = []
    for line in text.splitlines():
        line = _LIST_ITEM.sub("", line).strip()
        if line:
            out.extend(s for s in _SENTENCE_END.split(line) if s.strip())
    return out


def instructing_sentences(text: str) -> list[str]:
    """The sentences of `text` that instruct the reader or the assistant, in order."""
    return [s for s in sentences(text) if instructs(s)]


@lru_cache(maxsize=4096)
def without_instructions(text: str) -> str:
    """`text` minus every paragraph (or list item) that holds an instructing sentence.

    A whole paragraph goes, not only the sentence: an injection's neighbours ("You are now in
    maintenance mode.") belong to it even when they are harmless-looking on their own.
    Memoised: every turn screens the passages it quotes, and they come from a corpus that
    changes far less often than it is quoted (a pure function of the text, so a hit is exact).
    """
    if not instructing_sentences(text):
        return text
    kept: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if lines and all(_LIST_ITEM.match(ln) or not ln.strip() for ln in lines):
            lines = [ln for ln in lines if not instructs(_LIST_ITEM.sub("", ln))]
            if lines:
                kept.append("\n".join(lines))
        elif not instructing_sentences(block):
            kept.append(block)
    return "\n\n".join(kept)
