"""PII masking (pure): the one module that decides what personal data never reaches storage,
a provider or a log. `mask(text, kinds)` applies every configured kind (settings `PII_MASK`):

- card: Luhn-valid 13–19 digit runs → `[card ending 4242]` (details below);
- email: `name@host.tld` → `[email]`;
- phone: 9–15 digits written as a phone number (a leading `+` or `(`, or 10+ digits in groups)
  → `[phone]`; dates, order numbers and short codes stay;
- iban: a country code, two check digits and 11–30 letters/digits passing the ISO 7064 mod-97
  check → `[IBAN ending 1234]`;
- password: what follows "password:", "my password is", "PIN =", … → `[password]`.

Cards: a candidate is a run of digits in which single separators (space, dash, dot, no-break or
thin space) may separate digit groups (`4242 4242 4242 4242`, `4242.4242.4242.4242`,
`4242424242424242`). A run of 13–19 digits that
passes the Luhn check becomes `[card ending 4242]`. Anything else stays exactly as written:
order references, phone numbers, tracking numbers, and digit runs that fail Luhn.

A run that is not itself a card may hold one next to other numbers typed in the same breath
(`4242 4242 4242 4242 123` with the CVC, `visa 2 4242…`). For those, group-aligned windows of
13–19 digits are checked too, but only windows starting with 2–6 (every major card network's first
digit), which keeps most long tracking numbers from being masked by the one-in-ten chance of a
window passing Luhn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_SEPARATORS = " \\-.\u00a0\u2007\u2009\u202f"
_RUN = re.compile(rf"(?<![\d])\d+(?:[{_SEPARATORS}]\d+)*(?![\d])")
_SEPARATOR = re.compile(rf"[{_SEPARATORS}]")
MIN_DIGITS = 13
MAX_DIGITS = 19
_NETWORK_DIGITS = frozenset("23456")  # first digit of every major card network's numbers


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies (digits only)."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _is_card(digits: str) -> bool:
    return MIN_DIGITS <= len(digits) <= MAX_DIGITS and luhn_valid(digits)


def _mask(digits: str) -> str:
    return f"[card ending {digits[-4:]}]"


def _mask_run(run: str) -> str:
    digits = _SEPARATOR.sub("", run)
    if len(digits) < MIN_DIGITS:
        return run
    if _is_card(digits):
        return _mask(digits)
    # the run may hold a card plus neighbouring numbers: look for a card-shaped window of groups
    groups = _SEPARATOR.split(run)
    seps = _SEPARATOR.findall(run)
    for start in range(len(groups)):
        if groups[start][:1] not in _NETWORK_DIGITS:
            continue
        for stop in range(len(groups), start, -1):
            if (start, stop) == (0, len(groups)):
                continue
            window = "".join(groups[start:stop])
            if _is_card(window):
                head = "".join(g + s for g, s in zip(groups[:start], seps[:start], strict=True))
                tail = "".join(s + g for s, g in zip(seps[stop - 1 :], groups[stop:], strict=True))
                return head + _mask(window) + tail
    return run


def mask_card_numbers(text: str) -> str:
    """`text` with every Luhn-valid 13–19 digit run replaced by `[card ending NNNN]`."""
    return _RUN.sub(lambda m: _mask_run(m.group(0)), text)


def contains_card_number(text: str) -> bool:
    return mask_card_numbers(text) != text


KINDS = ("card", "email", "phone", "iban", "password")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w-])")
_SEP = f"[{_SEPARATORS}]"
_PHONE = re.compile(
    rf"(?<![\w+\-./])(?:\+\d{{1,3}}{_SEP}?)?(?:\(\d{{1,5}}\){_SEP}?)?\d{{2,5}}"
    rf"(?:{_SEP}\d{{2,5}}){{0,5}}(?![\w\-/])"
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_PASSWORD = re.compile(
    r"\b((?:pass(?:word|code|phrase)|pwd|pin)(?:\s+(?:is|was|would\s+be))?\s*[:=]?\s+"
    r"|(?:pass(?:word|code|phrase)|pwd|pin)\s*[:=]\s*)(?!\[)(\S+)",
    re.IGNORECASE,
)
_PASSWORD_WORDS = frozenset(
    [
        "reset",
        "is",
        "was",
        "the",
        "a",
        "an",
        "to",
        "for",
        "and",
        "or",
        "expired",
        "not",
        "wrong",
        "incorrect",
        "invalid",
        "correct",
        "too",
        "still",
        "being",
        "working",
        "manager",
        "policy",
        "change",
        "changed",
        "field",
    ]
)


def iban_valid(text: str) -> bool:
    """The ISO 13616 mod-97 check every IBAN satisfies (spaces ignored)."""
    compact = text.replace(" ", "").upper()
    if not (15 <= len(compact) <= 34) or not compact.isalnum():
        return False
    moved = compact[4:] + compact[:4]
    digits = "".join(str(int(ch, 36)) for ch in moved)
    return int(digits) % 97 == 1


def _mask_phone(m: re.Match[str]) -> str:
    text = m.group(0)
    digits = sum(ch.isdigit() for ch in text)
    shaped = text.startswith(("+", "(")) or (digits >= 10 and bool(_SEPARATOR.search(text)))
    return "[phone]" if 9 <= digits <= 15 and shaped else text


def _mask_iban(m: re.Match[str]) -> str:
    text = m.group(0)
    return f"[IBAN ending {text.replace(' ', '')[-4:]}]" if iban_valid(text) else text


_MARKED = re.compile(r"\b(?:is|was|be)\s*$|[:=]\s*$", re.IGNORECASE)


def _mask_password(m: re.Match[str]) -> str:
    secret = m.group(2)
    word = secret.strip(".,;:!?")
    if word.lower() in _PASSWORD_WORDS:
        return m.group(0)
    if not _MARKED.search(m.group(1)) and word.isalpha() and word.islower():
        # "my password if I use SSO", "the password when I sign in": with no "is", ":" or "="
        # naming a value, a plain lower-case word after the word is the sentence going on
        return m.group(0)
    return f"{m.group(1)}[password]"


def mask(text: str | None, kinds: Iterable[str] = KINDS) -> str | None:
    """`text` with every configured kind of PII masked (None stays None)."""
    if not text:
        return text
    wanted = set(kinds)
    if "password" in wanted:
        text = _PASSWORD.sub(_mask_password, text)
    if "iban" in wanted:
        text = _IBAN.sub(_mask_iban, text)
    if "card" in wanted:
        text = mask_card_numbers(text)
    if "email" in wanted:
        text = _EMAIL.sub("[email]", text)
    if "phone" in wanted:
        text = _PHONE.sub(_mask_phone, text)
    return text


def mask_text(text: str, kinds: Iterable[str] = KINDS) -> str:
    """`mask` for text that is never None."""
    return mask(text, kinds) or text


def mask_value(value: Any, kinds: Iterable[str] = KINDS) -> Any:
    """Every string inside a JSON-like value masked (dicts, lists, tuples walked)."""
    if isinstance(value, str):
        return mask_text(value, kinds)
    if isinstance(value, dict):
        return {k: mask_value(v, kinds) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v, kinds) for v in value]
    return value
