"""PII masking lives in `app.safety.pii` (one module for the turn, the API, the store and logs)."""

from app.safety.pii import (
    KINDS,
    contains_card_number,
    luhn_valid,
    mask,
    mask_card_numbers,
    mask_text,
    mask_value,
)

__all__ = [
    "KINDS",
    "contains_card_number",
    "luhn_valid",
    "mask",
    "mask_card_numbers",
    "mask_text",
    "mask_value",
]
