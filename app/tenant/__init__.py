"""A tenant's vocabulary as data: one validated file per company (DESIGN 5.1).

Product names, identifier formats, policy phrases, example utterances for the intent classifier,
synonym groups for lexical search and localized reply templates live in a YAML file the service
loads at start-up (`<seed_dir>/tenant.yaml`, or `TENANT_FILE`). Nothing in `app/` names a
company, a product or a data set's topic; a folder without a tenant file gets the generic
profile in `generic.yaml` (generic support exemplars, order/case/error-code formats,
English/German/French templates).

A tenant file is *merged over* the generic profile: exemplar lists extend it (so a tenant adds
its own product words and keeps the generic coverage), templates override it key by key, every
other top-level field replaces it. Unknown keys, unknown intents and malformed patterns are
start-up errors, not silent no-ops.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.language.synonyms import SynonymTable, member_problem

GENERIC_FILE: Final = Path(__file__).with_name("generic.yaml")
TENANT_FILE_NAME: Final = "tenant.yaml"

INTENTS: Final[tuple[str, ...]] = (
    "how_to",
    "troubleshooting",
    "billing_question",
    "order_status",
    "account",
    "feature_question",
    "acknowledgment",
    "cancellation",
    "refund_request",
    "billing_dispute",
    "data_deletion",
    "legal",
    "human_handoff",
    "other",
)
# DESIGN 6.1 signal 1: the closed set a tenant may escalate on arrival (a subset, never more)
POLICY_INTENTS: Final = frozenset(
    {"billing_dispute", "cancellation", "refund_request", "data_deletion", "legal", "human_handoff"}
)
SENTIMENTS: Final[tuple[str, ...]] = ("positive", "neutral", "frustrated", "angry")
IdentifierKind = Literal["order", "case", "sku", "error_code"]
IDENTIFIER_KINDS: Final[tuple[IdentifierKind, ...]] = ("order", "case", "error_code", "sku")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class IdentifierFormat(_Strict):
    """One identifier family: a regex with a named group `id`, and its normalised form."""

    pattern: str
    format: str = "{id}"  # e.g. "ORD-{id}": "ord 1042" and "ORD#1042" both become ORD-1042
    case_sensitive: bool = Field(False, alias="caseSensitive")
    upper: bool = True  # upper-case the `id` group when normalising
    example: str | None = None  # shown in tool error messages ("ORD-1234")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        compiled = re.compile(value)
        if "id" not in compiled.groupindex:
            raise ValueError("an identifier pattern needs a named group (?P<id>...)")
        return value

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, 0 if self.case_sensitive else re.IGNORECASE)

    def normalise(self, match: re.Match[str]) -> str:
        core = match.group("id")
        return self.format.format(id=core.upper() if self.upper else core)


class Product(_Strict):
    name: str
    sku: str | None = None
    aliases: tuple[str, ...] = ()  # other ways customers write it, any language


class Capabilities(_Strict):
    """Which customer-data tools exist for this tenant (a docs-only tenant has none)."""

    orders: bool = True
    subscriptions: bool = True
    cases: bool = True


class ExemplarPatterns(_Strict):
    """Exemplars written as frames x actions: "help me {x}" x "cancel my order"."""

    frames: tuple[str, ...]
    actions: dict[str, tuple[str, ...]]
    per_action: int = Field(4, alias="perAction", ge=1)
    # the same for noun phrases: "I have a question about {x}" x "cancelling my order"
    topic_frames: tuple[str, ...] = Field((), alias="topicFrames")
    topics: dict[str, tuple[str, ...]] = {}

    @field_validator("frames", "topic_frames")
    @classmethod
    def _has_slot(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [f for f in value if "{x}" not in f]
        if bad:
            raise ValueError(f"frames without {{x}}: {bad}")
        return value

    def expand(self) -> dict[str, tuple[str, ...]]:
        """Each action (topic) in `per_action` frames, rotating through them (deterministic)."""
        out: dict[str, list[str]] = {}
        for frames, table in ((self.frames, self.actions), (self.topic_frames, self.topics)):
            k = 0
            for intent, actions in table.items():
                texts = out.setdefault(intent, [])
                for action in actions:
                    for _ in range(min(self.per_action, len(frames))):
                        texts.append(frames[k % len(frames)].replace("{x}", action))
                        k += 1
        return {intent: tuple(dict.fromkeys(texts)) for intent, texts in out.items()}


class Reference(_Strict):
    """Stable background text for the language models (optional): what the tenant's words mean.

    It goes, with the rest of the tenant's vocabulary, into the reference block at the start of
    every model prompt (`app.turn.reference`), which is the prefix the provider caches. Keep it
    short and stable: it is sent on every call, and any edit invalidates the cache once."""

    products: dict[str, str] = {}  # product name -> what it is
    plans: dict[str, str] = {}  # plan -> what it includes
    facts: tuple[str, ...] = ()  # house facts that rarely change


class Tenant(_Strict):
    """One company's vocabulary. Validated at start-up; see `seed/tenant.yaml` for an example."""

    name: str = "our company"
    locales: tuple[str, ...] = ("en", "de", "fr")
    default_locale: str = Field("en", alias="defaultLocale")
    plans: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    products: tuple[Product, ...] = ()
    identifiers: dict[IdentifierKind, IdentifierFormat] = {}
    capabilities: Capabilities = Capabilities()
    escalate_intents: tuple[str, ...] = Field(
        tuple(sorted(POLICY_INTENTS)), alias="escalateIntents"
    )
    # policy intents a person must always handle, even when the docs give a self-serve procedure
    # (DESIGN 6.1); the others among refund_request/cancellation/data_deletion get the procedure
    # and the offer of a person when retrieval finds it with a strong passage
    person_only: tuple[str, ...] = Field((), alias="personOnly")
    # the ISO 4217 code prices and order totals are in ("USD"): written with its sign, or the code
    # after the amount when it has none listed; without one an amount is a bare number
    currency: str | None = Field(None, pattern=r"^[A-Z]{3}$")
    # phrases that *are* the policy (an authority boundary), by intent: "chargeback" is a dispute
    # whatever the classifier thinks. Matched as whole words, case-insensitively, any language.
    policy_phrases: dict[str, tuple[str, ...]] = Field({}, alias="policyPhrases")
    # agent assist: per policy intent, what the person who takes the case must decide
    assist_decisions: dict[str, str] = Field({}, alias="assistDecisions")
    # example utterances by intent / sentiment: the classifier's training data
    exemplars: dict[str, tuple[str, ...]] = {}
    sentiment_exemplars: dict[str, tuple[str, ...]] = Field({}, alias="sentimentExemplars")
    # tool routing: utterances that ask about the customer's own data, by tool
    tool_exemplars: dict[str, tuple[str, ...]] = Field({}, alias="toolExemplars")
    exemplar_patterns: ExemplarPatterns | None = Field(None, alias="exemplarPatterns")
    # localized reply templates: locale -> key -> text with {placeholders}
    templates: dict[str, dict[str, str]] = {}
    reference: Reference = Reference()
    # groups of equivalent terms for lexical search ("UK" = "United Kingdom"): the customer's
    # spelling and the documentation's (app/language/synonyms.py); none in the generic profile
    synonyms: tuple[tuple[str, ...], ...] = ()

    @field_validator("synonyms", mode="before")
    @classmethod
    def _synonym_groups(cls, value: Any) -> Any:
        """Each group a list of ≥ 2 distinct, searchable terms; errors name the group."""
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise ValueError("synonyms is a list of groups, e.g. - [UK, United Kingdom]")
        for i, group in enumerate(value):
            if not isinstance(group, list | tuple):
                raise ValueError(f"synonyms[{i}] is not a list of terms: {group!r}")
            bad = [m for m in group if not isinstance(m, str)]
            if bad:  # YAML reads NO, ON, 2026 as booleans and numbers
                raise ValueError(f"synonyms[{i}]: {bad!r} are not text (quote them in YAML)")
            for member in group:
                problem = member_problem(member)
                if problem:
                    raise ValueError(f"synonyms[{i}]: an entry {problem}")
            if len(group) < 2:
                raise ValueError(f"synonyms[{i}] needs at least two terms: {list(group)}")
            folded = [" ".join(m.casefold().split()) for m in group]
            if len(set(folded)) != len(folded):
                raise ValueError(f"synonyms[{i}] repeats a term: {list(group)}")
        return value

    @field_validator("escalate_intents", "person_only")
    @classmethod
    def _closed_policy_set(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        extra = set(value) - POLICY_INTENTS
        if extra:
            raise ValueError(f"intents outside the policy set: {sorted(extra)}")
        return value

    @field_validator("exemplar_patterns")
    @classmethod
    def _pattern_intents(cls, value: ExemplarPatterns | None) -> ExemplarPatterns | None:
        unknown = set(value.actions) | set(value.topics) if value else set()
        unknown -= set(INTENTS)
        if unknown:
            raise ValueError(f"unknown intents in exemplarPatterns: {sorted(unknown)}")
        return value

    @field_validator("policy_phrases", "exemplars", "assist_decisions")
    @classmethod
    def _known_intents(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        unknown = set(value) - set(INTENTS)
        if unknown:
            raise ValueError(f"unknown intents: {sorted(unknown)}")
        return value

    @field_validator("sentiment_exemplars")
    @classmethod
    def _known_sentiments(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        unknown = set(value) - set(SENTIMENTS)
        if unknown:
            raise ValueError(f"unknown sentiments: {sorted(unknown)}")
        return value

    @model_validator(mode="after")
    def _reference_names_known(self) -> Tenant:
        products = set(self.reference.products) - {p.name for p in self.products}
        plans = set(self.reference.plans) - set(self.plans)
        if products or plans:
            raise ValueError(
                f"reference names unknown products {sorted(products)} or plans {sorted(plans)}"
            )
        return self

    @model_validator(mode="after")
    def _templates_complete(self) -> Tenant:
        base = self.templates.get(self.default_locale)
        if base is None:
            raise ValueError(f"no templates for the default locale {self.default_locale!r}")
        for locale, table in self.templates.items():
            missing = set(base) - set(table)
            if missing:
                raise ValueError(f"templates[{locale}] lacks {sorted(missing)}")
        return self

    # -- derived views ----------------------------------------------------------------------

    @cached_property
    def synonym_table(self) -> SynonymTable:
        """`synonyms` ready for query expansion (built once per tenant)."""
        return SynonymTable(tuple(tuple(m.strip() for m in g) for g in self.synonyms))

    @property
    def tool_names(self) -> frozenset[str]:
        names = set()
        if self.capabilities.orders and "order" in self.identifiers:
            names |= {"lookupOrder", "listRecentOrders"}
        elif self.capabilities.orders:
            names.add("listRecentOrders")
        if self.capabilities.subscriptions:
            names.add("lookupSubscription")
        if self.capabilities.cases:
            names.add("lookupCase")
        return frozenset(names)

    @property
    def intents(self) -> tuple[str, ...]:
        """The intents this tenant can see: no orders, no order_status."""
        if self.capabilities.orders:
            return INTENTS
        return tuple(i for i in INTENTS if i != "order_status")

    def training_exemplars(self) -> dict[str, tuple[str, ...]]:
        """Exemplars by intent (written + expanded patterns), restricted to the tenant's intents."""
        merged = {k: list(v) for k, v in self.exemplars.items()}
        if self.exemplar_patterns is not None:
            for k, v in self.exemplar_patterns.expand().items():
                merged.setdefault(k, []).extend(v)
        return {k: tuple(dict.fromkeys(v)) for k, v in merged.items() if k in self.intents and v}

    def text(self, key: str, locale: str | None = None, **values: Any) -> str:
        """A localized template, filled; the default locale when the locale lacks it."""
        table = self.templates.get(locale or self.default_locale) or {}
        template = table.get(key) or self.templates[self.default_locale].get(key)
        if template is None:
            raise KeyError(f"no template {key!r}")
        return template.format(**values)

    def locale_for(self, language: str | None) -> str:
        """A supported locale for a detected language, else the default."""
        return language if language in self.templates else self.default_locale


def _merge(generic: Mapping[str, Any], tenant: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(generic)
    for key, value in tenant.items():
        if key in ("exemplars", "sentimentExemplars", "toolExemplars") and isinstance(
            value, Mapping
        ):
            base = dict(merged.get(key) or {})
            for label, items in value.items():
                base[label] = [*(base.get(label) or []), *(items or [])]
            merged[key] = base
        elif key == "templates" and isinstance(value, Mapping):
            base = {loc: dict(t) for loc, t in (merged.get(key) or {}).items()}
            for locale, table in value.items():
                base[locale] = {**base.get(locale, {}), **(table or {})}
            merged[key] = base
        elif key == "identifiers" and isinstance(value, Mapping):
            merged[key] = {**(merged.get(key) or {}), **value}
        elif key == "replaceExemplars":
            continue
        else:
            merged[key] = value
    if tenant.get("replaceExemplars"):
        merged["exemplars"] = tenant.get("exemplars") or {}
    return merged


def _read_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a tenant file is a mapping")
    return data


def load_tenant(path: Path | None = None, *, docs_only: bool = False) -> Tenant:
    """The tenant in `path` (a file, or a folder holding `tenant.yaml`) over the generic profile.

    `None`, or a folder without a tenant file, gives the generic profile alone. `docs_only` (a
    folder of docs and no customer data) switches the order and subscription tools, and with them
    the `order_status` intent, off, and has no billing desk (`refund_request` and
    `billing_dispute` are not handed off on arrival), unless the tenant file says otherwise.
    """
    generic = _read_yaml(GENERIC_FILE)
    if docs_only:
        generic["capabilities"] = {"orders": False, "subscriptions": False, "cases": True}
        # no billing desk behind a folder of docs (it holds no charges to refund or dispute): a
        # question about money is answered from the docs, or honestly not with the offer of a
        # person, unless the tenant file names the intent
        desk = {"refund_request", "billing_dispute"}
        kept = [i for i in generic.get("escalateIntents") or [] if i not in desk]
        generic["escalateIntents"] = kept
    if path is not None and path.is_dir():
        path = path / TENANT_FILE_NAME
    if path is None or not path.exists():
        return Tenant.model_validate(generic)
    try:
        return Tenant.model_validate(_merge(generic, _read_yaml(path)))
    except Exception as exc:
        raise ValueError(f"invalid tenant file {path}: {exc}") from exc


_GENERIC: Tenant | None = None


def generic_tenant() -> Tenant:
    """The generic profile (cached): for code paths and tests that have no tenant of their own."""
    global _GENERIC
    if _GENERIC is None:
        _GENERIC = load_tenant(None)
    return _GENERIC
