"""A small knowledge corpus for the retrieval tests, written through the store's repositories.

Other retrieval test modules import `load_corpus` / `corpus_records` from here (pytest puts
`tests/` on sys.path). It deliberately includes what must never leak: pro and enterprise
articles and tickets, a draft, a French article, an open / won't-fix / low-quality ticket, and
"only lexical match" words (`quokkaplan`, `zephyrium`, `croissantine`) that exist solely in
documents a free English-speaking customer must not see.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from app.providers.embeddings.base import Embedder
from app.providers.embeddings.fake import FakeEmbedder
from app.search.local import LocalSearch
from app.store import Store
from app.store.models import Article, Chunk, Ticket

NOW = datetime(2026, 11, 1, tzinfo=UTC)

# slug: (title, audience, locale, status, tags, [(section, text), ...])
ARTICLES: dict[str, tuple[str, str, str, str, list[str], list[tuple[str, str]]]] = {
    "reset-password": (
        "Resetting your password",
        "all",
        "en",
        "published",
        ["password", "login", "reset"],
        [
            ("Overview", "Forgot your password? You can reset it from the sign-in page."),
            ("Steps", "Select Forgot password, enter your email and follow the reset link."),
            ("Link expired", "Reset links expire after one hour; request a new reset email."),
        ],
    ),
    "saml-signature-auth-302": (
        "SAML signature errors",
        "pro",
        "en",
        "published",
        ["saml", "sso", "auth_302", "certificate"],
        [
            ("Overview", "Single sign-on fails when the identity provider signature is invalid."),
            (
                "Error AUTH_302",
                "AUTH_302 means the SAML response signature did not verify: the IdP certificate "
                "was rotated. Upload the new signing certificate in the security settings.",
            ),
        ],
    ),
    "saml-clock-skew-auth-304": (
        "SAML clock skew",
        "pro",
        "en",
        "published",
        ["saml", "sso", "auth_304"],
        [
            ("Overview", "Sign-in through SSO can fail when server clocks drift apart."),
            (
                "Error AUTH_304",
                "AUTH_304 means the assertion is not yet valid: sync the IdP clock.",
            ),
        ],
    ),
    "card-reader-pads": (
        "Replacing card reader pads",
        "all",
        "en",
        "published",
        ["hardware", "hl-rp10"],
        [
            ("Overview", "Door card readers use replaceable contact pads."),
            ("HL-RP10", "Order the HL-RP10 pad kit and swap the pads with the reader unpowered."),
        ],
    ),
    "audit-log-export": (
        "Exporting audit logs",
        "enterprise",
        "en",
        "published",
        ["audit-log", "siem"],
        [
            ("Overview", "Enterprise workspaces can export audit logs to a SIEM."),
            ("Quokkaplan", "The quokkaplan retention tier keeps audit events for seven years."),
        ],
    ),
    "billing-portal-draft": (
        "The new billing portal",
        "all",
        "en",
        "draft",
        ["billing"],
        [("Overview", "The zephyrium billing portal replaces invoices and password resets.")],
    ),
    "reinitialiser-mot-de-passe": (
        "Réinitialiser votre mot de passe",
        "all",
        "fr",
        "published",
        ["password", "mot-de-passe"],
        [
            (
                "Étapes",
                "Mot de passe oublié ? Choisissez réinitialiser password. Le croissantine lien "
                "expire après une heure.",
            )
        ],
    ),
}

# id: (subject, symptom, resolution, audience, locale, status, quality, age_days | None)
TICKETS: dict[str, tuple[str, str, str, str, str, str, float, int | None]] = {
    "T-100": (
        "Password reset email never arrives",
        "I asked for a password reset but no email came.",
        "The reset email was in the spam folder; allowlisted the sender.",
        "all",
        "en",
        "resolved",
        0.9,
        20,
    ),
    "T-101": (
        "AUTH_302 after certificate rotation",
        "Everyone gets AUTH_302 when signing in with Okta since this morning.",
        "The IdP certificate was rotated; uploaded the new certificate.",
        "pro",
        "en",
        "resolved",
        0.8,
        200,
    ),
    "T-102": (
        "Quokkaplan audit export to Splunk fails",
        "Our quokkaplan audit log export to Splunk stopped.",
        "Renewed the HEC token in the SIEM settings.",
        "enterprise",
        "en",
        "resolved",
        0.95,
        None,
    ),
    "T-103": (
        "Password reset loops",
        "Password reset page reloads forever.",
        "Still investigating.",
        "all",
        "en",
        "open",
        0.9,
        3,
    ),
    "T-104": (
        "Password reset via carrier pigeon",
        "I want my password reset sent by pigeon.",
        "Declined.",
        "all",
        "en",
        "wont_fix",
        0.9,
        3,
    ),
    "T-105": (
        "Password reset link broken",
        "The password reset link is broken.",
        "Told them to try again maybe.",
        "all",
        "en",
        "resolved",
        0.3,
        5,
    ),
    "T-106": (
        "Lien de mot de passe croissantine",
        "Le lien password reset croissantine ne marche pas.",
        "Renvoyé le lien.",
        "all",
        "fr",
        "resolved",
        0.9,
        5,
    ),
}

# Documents a free customer in locale "en" must never be shown.
NOT_FOR_FREE_EN = {
    "saml-signature-auth-302",
    "saml-clock-skew-auth-304",
    "audit-log-export",
    "billing-portal-draft",
    "reinitialiser-mot-de-passe",
    "T-101",
    "T-102",
    "T-103",
    "T-104",
    "T-105",
    "T-106",
}


def _breadcrumb(title: str, section: str) -> str:
    return f"{title} › {section}"


async def corpus_records(
    embedder: Embedder | None = None,
) -> tuple[list[Article], list[Chunk], list[Ticket]]:
    """The corpus as domain models, embedded with `embedder` (a FakeEmbedder by default)."""
    embedder = embedder or FakeEmbedder()
    articles: list[Article] = []
    chunks: list[Chunk] = []
    for slug, (title, audience, locale, status, tags, sections) in ARTICLES.items():
        body = "\n\n".join(f"## {s}\n\n{t}" for s, t in sections)
        common: dict[str, Any] = {"audience": audience, "locale": locale, "status": status}
        articles.append(
            Article(
                _id=slug, slug=slug, title=title, body=body, tags=tags, updated_at=NOW, **common
            )
        )
        texts = [t for _, t in sections]
        crumbs = [_breadcrumb(title, s) for s, _ in sections]
        vectors = await embedder.embed_documents(
            [f"{c}\n{t}" for c, t in zip(crumbs, texts, strict=True)]
        )
        for i, (crumb, text, vec) in enumerate(zip(crumbs, texts, vectors, strict=True)):
            chunks.append(
                Chunk(
                    _id=f"{slug}#{i}",
                    article_id=slug,
                    chunk_index=i,
                    text=text,
                    breadcrumb=crumb,
                    embedding=vec,
                    tags=tags,
                    title=title,
                    **common,
                )
            )
    tickets: list[Ticket] = []
    for tid, (subj, symptom, resolution, audience, locale, status, quality, age) in TICKETS.items():
        [vec] = await embedder.embed_documents([f"{subj}\n{symptom}\n{resolution}"])
        tickets.append(
            Ticket(
                _id=tid,
                subject=subj,
                symptom=symptom,
                resolution=resolution,
                product="Workspace",
                audience=audience,
                locale=locale,
                status=status,
                quality=quality,
                resolved_at=None if age is None else NOW - timedelta(days=age),
                embedding=vec,
            )
        )
    return articles, chunks, tickets


async def load_corpus(store: Store, embedder: Embedder | None = None) -> None:
    """Write the corpus through the repositories, as ingestion would."""
    articles, chunks, tickets = await corpus_records(embedder)
    for a in articles:
        await store.articles.upsert(a)
        await store.chunks.replace_for_article(a.id, [c for c in chunks if c.article_id == a.id])
    await store.tickets.upsert_many(tickets)


async def test_corpus_loads_into_local_search(store: Store) -> None:
    await load_corpus(store)
    search = await LocalSearch.build(store)
    assert search.counts == {
        "articles": len(ARTICLES),
        "chunks": sum(len(v[5]) for v in ARTICLES.values()),
        "tickets": len(TICKETS),
    }


async def test_corpus_chunks_carry_parent_metadata(store: Store) -> None:
    await load_corpus(store)
    for chunk in await store.chunks.all():
        article = await store.articles.get(chunk.article_id)
        assert article is not None
        assert (chunk.audience, chunk.locale, chunk.status) == (
            article.audience,
            article.locale,
            article.status,
        )
