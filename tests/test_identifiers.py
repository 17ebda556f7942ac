"""One recogniser for order refs, case refs, error codes and SKUs (app/language/identifiers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.language.identifiers import Identifiers
from app.tenant import Tenant, generic_tenant, load_tenant
from app.turn.clamp import normalize_order_id
from app.turn.memory import extract_facts

SEED = Path(__file__).resolve().parent.parent / "seed"
IDS = Identifiers(load_tenant(SEED))
GENERIC = Identifiers(generic_tenant())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("where is ORD-1042?", [("order", "ORD-1042")]),
        ("ORD 1042", [("order", "ORD-1042")]),
        ("ord-1042", [("order", "ORD-1042")]),
        ("ORD#1042 and ord 2231", [("order", "ORD-1042"), ("order", "ORD-2231")]),
        ("ORD1042", [("order", "ORD-1042")]),
        ("ORD # 1042", [("order", "ORD-1042")]),
        ("ord-77 is too short, ORD-1234567 too long", []),
        ("order 370795561790", []),
        ("my case CASE-7F3K2Q is still open", [("case", "CASE-7F3K2Q")]),
        ("case number 8HX2KQ", [("case", "CASE-8HX2KQ")]),
        ("case 8hx2kq", [("case", "CASE-8HX2KQ")]),
        ("in case it matters", []),
        ("in case XXXXXX happens", []),  # six letters and no digit: a word, not a reference
        (
            "SSO fails with AUTH_302 then RATE_429",
            [("error_code", "AUTH_302"), ("error_code", "RATE_429")],
        ),
        ("auth_302 in lower case", []),  # error codes are printed in capitals
        ("the hl-rp10 panel and HL-DT2 tag", [("sku", "HL-RP10"), ("sku", "HL-DT2")]),
        ("an hl-poe injector", [("sku", "HL-PoE")]),
        ("ORD-1042 ORD-1042", [("order", "ORD-1042"), ("order", "ORD-1042")]),
    ],
)
def test_find(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(i.kind, i.value) for i in IDS.find(text)] == expected


def test_values_deduplicate_in_order() -> None:
    assert IDS.values("ORD-1042, AUTH_302, ord 1042") == ["ORD-1042", "AUTH_302"]


def test_skus_are_tenant_data() -> None:
    """The generic profile knows no company's SKUs."""
    assert GENERIC.values("the hl-rp10 panel") == []
    assert IDS.values("the hl-rp10 panel") == ["HL-RP10"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("ord-1042", "ORD-1042"), ("ORD 1042", "ORD-1042"), (" ORD#1042 ", "ORD-1042"),
     ("ORD-1042 or ORD-1043", None), ("1042", None), (None, None), (1042, None)],
)  # fmt: skip
def test_normalise_exactly_one(raw: object, expected: str | None) -> None:
    assert IDS.normalise("order", raw) == expected
    assert normalize_order_id(raw, IDS) == expected


@pytest.mark.parametrize(
    ("term", "kind"),
    [("ORD 1042", "order"), ("AUTH_302", "error_code"), ("HL-DT2", "sku"),
     ("CASE-7F3K2Q", "case"), ("the ORD-1042 one", None), ("pro", None)],
)  # fmt: skip
def test_kind_of_a_whole_term(term: str, kind: str | None) -> None:
    assert IDS.kind_of(term) == kind


def test_memory_remembers_what_tools_look_up() -> None:
    """'ORD 1042' is looked up and remembered as the same order; an error code is both."""
    facts = extract_facts("ORD 1042 fails with AUTH_3021", 2, IDS)
    assert [(f.kind, f.value) for f in facts] == [
        ("order", "ORD-1042"),
        ("error_code", "AUTH_3021"),
    ]


def test_products_from_tenant_data() -> None:
    assert IDS.products("two Room Panels and a kiosk") == [(4, "Room Panel"), (22, "Visitor Kiosk")]
    assert GENERIC.products("two Room Panels") == []


def test_product_aliases_become_the_product_name() -> None:
    assert IDS.with_product_names("Unser Raumpanel blinkt") == "Unser Room Panel blinkt"
    assert IDS.with_product_names("le panneau de salle et les kiosks") == (
        "le Room Panel et les Visitor Kiosk"
    )
    assert GENERIC.with_product_names("the Raumpanel") == "the Raumpanel"


def test_a_tenant_can_bring_its_own_order_format() -> None:
    data = generic_tenant().model_dump(by_alias=True)
    data["identifiers"]["order"] = {"pattern": r"#(?P<id>\d{5})\b", "format": "SO-{id}"}
    ids = Identifiers(Tenant.model_validate(data))
    assert ids.values("where is #12345?") == ["SO-12345"]
    assert ids.values("ORD-1042") == []


def test_a_pattern_without_an_id_group_is_a_startup_error() -> None:
    data = generic_tenant().model_dump(by_alias=True)
    data["identifiers"]["order"] = {"pattern": r"ORD-\d+"}
    with pytest.raises(ValueError, match="named group"):
        Tenant.model_validate(data)
