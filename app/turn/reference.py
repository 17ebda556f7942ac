"""The tenant reference: the stable start of every model prompt, built from the tenant file.

Language models read customers' words better when they know the company's vocabulary: what each
product is and what customers call it, the plans and what each may read, which requests only a
person handles and what then happens, what order, case and product references look like, and a
few house facts. All of that is tenant data (`seed/tenant.yaml`), stable between turns and
between customers, so it belongs in the prompt prefix the provider caches (after the fixed
instructions, before anything per-turn). A prefix below the model's minimum cacheable length is
never cached, so this block is also what lets caching engage (`app/providers/chat/models.py`).

`tenant_reference` is a pure function of the tenant and the tuning: the same text, byte for byte,
on every call of a process, for every customer. Nothing per-turn, per-customer or dated may
appear in it (a test sends two different turns and checks the provider reads the cache).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.tenant import IDENTIFIER_KINDS, Tenant
from tuning import Tuning

# what each policy intent means, in the words a classifier and an answerer need (no company words)
POLICY_MEANINGS = {
    "billing_dispute": "disputing a charge (charged twice, an unauthorised charge, a chargeback)",
    "cancellation": "asking to cancel a subscription or an order (not asking how cancelling works)",
    "refund_request": "asking for money back (not asking what the refund policy is)",
    "data_deletion": "asking to delete their data or account (a privacy request)",
    "legal": "legal threats, lawyers, court or regulator matters",
    "human_handoff": "asking to talk to a person",
}
IDENTIFIER_LABELS = {
    "order": "order reference",
    "case": "case reference (a conversation handed to a person)",
    "sku": "product code",
    "error_code": "error code",
}
TOOL_MEANINGS = (
    ("lookupOrder", "one of their orders by its reference"),
    ("listRecentOrders", "their recent orders"),
    ("lookupSubscription", "their plan, seats, status and renewal date"),
    ("lookupCase", "one of their support cases by its reference"),
)


def _quoted(items: Iterable[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


def _products(tenant: Tenant) -> list[str]:
    if not tenant.products:
        return []
    lines = ["Products and services (the name customers see; other ways they write it):"]
    for product in tenant.products:
        head = product.name + (f" (product code {product.sku})" if product.sku else "")
        what = tenant.reference.products.get(product.name)
        line = f"- {head}" + (f": {what}" if what else "")
        if product.aliases:
            line += f" Also written {_quoted(product.aliases)}."
        lines.append(line)
    return lines


def _plans(tenant: Tenant, tuning: Tuning) -> list[str]:
    if not tenant.plans:
        return []
    lines = [
        "Plans, lowest first. Help articles are marked for an audience, and each plan reads only "
        "the audiences listed (an unknown plan reads what the lowest plan reads):"
    ]
    for plan in tenant.plans:
        ladder = tuning.audience_ladder.get(plan)
        line = f"- {plan}"
        if ladder:
            line += f": reads articles for {', '.join(ladder)}"
        if plan in tuning.sla_hours:
            line += f"; a person answers a handed-off case within {tuning.sla_hours[plan]} hours"
        line += "."
        what = tenant.reference.plans.get(plan)
        if what:
            line += f" {what}"
        lines.append(line)
    return lines


def _identifiers(tenant: Tenant) -> list[str]:
    lines = []
    for kind in IDENTIFIER_KINDS:
        fmt = tenant.identifiers.get(kind)
        if fmt is None:
            continue
        shape = fmt.example or (fmt.format if fmt.format != "{id}" else "")
        written = f" written like {shape}" if shape else " quoted as the customer wrote it"
        lines.append(f"- {IDENTIFIER_LABELS[kind]}:{written}")
    if not lines:
        return []
    head = (
        "Identifiers. Keep them exactly as written, never invent or complete one; customers "
        "also type them with spaces, '#' or lower case:"
    )
    return [head, *lines]


def _tools(tenant: Tenant) -> list[str]:
    available = [(name, what) for name, what in TOOL_MEANINGS if name in tenant.tool_names]
    if not available:
        return ["Nothing about a customer's own account can be looked up here."]
    lines = ["A signed-in customer's own data can be looked up (never another customer's):"]
    lines += [f"- {name}: {what}" for name, what in available]
    lines.append("An anonymous visitor has to sign in before anything of theirs can be looked up.")
    return lines


def _policy(tenant: Tenant, tuning: Tuning) -> list[str]:
    if not tenant.escalate_intents:
        return []
    lines = [
        "Requests only a person handles. The assistant never decides or promises these; the "
        "conversation is handed to a person at once, the customer gets a case reference and "
        "the time to expect a reply, and nothing is answered in the meantime:"
    ]
    for intent in tenant.escalate_intents:
        line = f"- {intent}: {POLICY_MEANINGS.get(intent, intent)}"
        phrases = tenant.policy_phrases.get(intent)
        if phrases:
            line += f". Phrases that always mean this: {_quoted(phrases)}"
        lines.append(line + ".")
    return lines


def _facts(tenant: Tenant) -> list[str]:
    if not tenant.reference.facts:
        return []
    return ["House facts:", *(f"- {fact}" for fact in tenant.reference.facts)]


def tenant_reference(tenant: Tenant, tuning: Tuning) -> str:
    """The tenant's reference block (stable text; see the module docstring)."""
    locales = ", ".join(tenant.locales)
    sections = [
        [
            f"About {tenant.name}, so you read customers' words correctly. This is background "
            "about names, formats and policy, written by the company; it does not change the "
            "instructions above, and it is not a source to quote or cite.",
            f"Customers write in: {locales} (default {tenant.default_locale}).",
        ],
        _products(tenant),
        _plans(tenant, tuning),
        _identifiers(tenant),
        _tools(tenant),
        _policy(tenant, tuning),
        _facts(tenant),
    ]
    body = "\n\n".join("\n".join(s) for s in sections if s)
    return f"<company_reference>\n{body}\n</company_reference>\n"


def with_reference(instructions: str, reference: str) -> str:
    """A system prompt: the fixed instructions, then the tenant reference (both stable)."""
    return f"{instructions.rstrip()}\n\n{reference}" if reference else instructions
