"""Card-number masking (pure), applied before a message is stored or sent to any provider.

A candidate is a run of digits in which single spaces or dashes may separate digit groups
(`4242 4242 4242 4242`, `4242-4242-4242-4242`, `4242424242424242`). A run of 13–19 digits that
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

_RUN = re.compile(r"(?<![\d])\d+(?:[ -]\d+)*(?![\d])")
_SEPARATOR = re.compile(r"[ -]")
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
