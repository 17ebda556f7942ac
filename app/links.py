"""Where a citation links: the help page, signed with a view token for restricted articles."""

from __future__ import annotations

from app.identity import article_view_token


def article_url(slug: str, audience: str, secret: str) -> str:
    """`/help/<slug>`, plus `?v=<token>` unless the article is for every audience."""
    if audience == "all":
        return f"/help/{slug}"
    return f"/help/{slug}?v={article_view_token(slug, secret)}"
