"""Order references, case references, error codes and SKUs: one recogniser for every stage,
applying the tenant's formats (`identifiers:` in the tenant file). Pure."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.tenant import IDENTIFIER_KINDS, IdentifierKind, Tenant, generic_tenant


@dataclass(frozen=True, slots=True)
class Identifier:
    kind: IdentifierKind
    value: str  # normalised: ORD-1042, CASE-AB12CD, AUTH_302, the product table's SKU spelling
    start: int
    end: int


class Identifiers:
    """The tenant's identifier formats, compiled once."""

    def __init__(self, tenant: Tenant) -> None:
        self._formats = {
            k: tenant.identifiers[k] for k in IDENTIFIER_KINDS if k in tenant.identifiers
        }
        self._skus = {p.sku.casefold(): p.sku for p in tenant.products if p.sku}
        names = {a.casefold(): p.name for p in tenant.products for a in (p.name, *p.aliases)}
        # each product alias and name, case-folded, with the product's own name
        self.product_names: Mapping[str, str] = names
        self._products = (
            re.compile(
                r"(?<![\w-])("
                + "|".join(re.escape(a) for a in sorted(names, key=len, reverse=True))
                + r")s?(?![\w-])",
                re.IGNORECASE,
            )
            if names
            else None
        )

    def products(self, text: str) -> list[tuple[int, str]]:
        """(position, canonical product name) for each product the text names."""
        return [(start, name) for start, _, name in self.product_spans(text)]

    def product_spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, canonical product name) for each product the text names."""
        if self._products is None:
            return []
        return [
            (m.start(1), m.end(), self.product_names[m.group(1).casefold()])
            for m in self._products.finditer(text)
        ]

    def with_product_names(self, text: str) -> str:
        """The text with each product alias as the product's own name ("Raumpanel" -> "Room
        Panel"): the name the exemplars use, whatever language the customer wrote in."""
        if self._products is None:
            return text
        return self._products.sub(lambda m: self.product_names[m.group(1).casefold()], text)

    def example(self, kind: IdentifierKind) -> str:
        fmt = self._formats.get(kind)
        return (fmt.example if fmt and fmt.example else "") or kind

    def find(self, text: str) -> list[Identifier]:
        """Every identifier in `text`, in order of appearance; overlaps go to the earlier kind."""
        found: list[Identifier] = []
        for kind, fmt in self._formats.items():
            for m in fmt.regex.finditer(text):
                if any(m.start() < f.end and f.start < m.end() for f in found):
                    continue
                found.append(Identifier(kind, self._canonical(kind, fmt.normalise(m)), *m.span()))
        return sorted(found, key=lambda i: i.start)

    def values(self, text: str) -> list[str]:
        """Normalised identifiers, deduplicated, in order of appearance."""
        return list(dict.fromkeys(i.value for i in self.find(text)))

    def first(self, text: str, kind: IdentifierKind) -> str | None:
        return next((i.value for i in self.find(text) if i.kind == kind), None)

    def normalise(self, kind: IdentifierKind, raw: object) -> str | None:
        """`raw` when it is exactly one identifier of `kind` (normalised), else None."""
        if not isinstance(raw, str):
            return None
        found = [i for i in self.find(raw.strip()) if i.kind == kind]
        values = {i.value for i in found}
        return values.pop() if len(values) == 1 else None

    def kind_of(self, term: str) -> IdentifierKind | None:
        """The kind of `term` when the whole term is one identifier."""
        term = term.strip()
        found = self.find(term)
        if len(found) == 1 and found[0].start == 0 and found[0].end == len(term):
            return found[0].kind
        return None

    def _canonical(self, kind: IdentifierKind, value: str) -> str:
        if kind == "sku":
            return self._skus.get(value.casefold(), value.upper())
        return value


@functools.cache
def generic_identifiers() -> Identifiers:
    """The generic profile's formats, for callers without a tenant of their own."""
    return Identifiers(generic_tenant())
