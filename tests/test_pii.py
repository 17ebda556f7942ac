"""Card masking: Luhn-valid 13–19 digit runs go, everything else stays exactly as written."""

from __future__ import annotations

import pytest

from app.turn.pii import contains_card_number, luhn_valid, mask_card_numbers

CASES = [
    # (message, after masking)
    ("my card is 4242424242424242", "my card is [card ending 4242]"),
    ("card 4242 4242 4242 4242 please", "card [card ending 4242] please"),
    ("card 4242-4242-4242-4242.", "card [card ending 4242]."),
    ("amex 3782 822463 10005", "amex [card ending 0005]"),
    ("visa13 4222222222222", "visa13 [card ending 2222]"),
    ("19 digits 6011000990139424 is discover; 4111111111111111111 no", None),
    ("4242 4242 4242 4242 123 (with the CVC)", "[card ending 4242] 123 (with the CVC)"),
    (
        "two: 4242424242424242 and 5555555555554444",
        "two: [card ending 4242] and [card ending 4444]",
    ),
    # left alone
    ("order ORD-1042 is late", "order ORD-1042 is late"),
    ("call me on +1 415 555 2671", "call me on +1 415 555 2671"),
    ("tracking 1Z999AA10123456784", "tracking 1Z999AA10123456784"),
    ("not luhn 4242424242424241", "not luhn 4242424242424241"),
    ("too short 424242424242", "too short 424242424242"),
    ("too long 42424242424242424242424", "too long 42424242424242424242424"),
    ("usps 9400 1000 0000 0000 0000 00", "usps 9400 1000 0000 0000 0000 00"),
    ("date 2026-07-01 and time 12:30", "date 2026-07-01 and time 12:30"),
    ("spaced wide 4242  4242  4242  4242", "spaced wide 4242  4242  4242  4242"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_mask_card_numbers(text: str, expected: str | None) -> None:
    if expected is None:  # spelled out where a literal would be hard to read
        expected = "19 digits [card ending 9424] is discover; 4111111111111111111 no"
        assert not luhn_valid("4111111111111111111")
    assert mask_card_numbers(text) == expected


def test_masking_is_idempotent() -> None:
    once = mask_card_numbers("pay with 4242 4242 4242 4242 today")
    assert mask_card_numbers(once) == once
    assert contains_card_number("pay with 4242 4242 4242 4242 today")
    assert not contains_card_number(once)


@pytest.mark.parametrize(
    ("digits", "valid"),
    [("4242424242424242", True), ("79927398713", True), ("79927398710", False), ("12a4", False)],
)
def test_luhn(digits: str, valid: bool) -> None:
    assert luhn_valid(digits) is valid
