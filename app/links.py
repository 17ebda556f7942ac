"""Where a citation links: the help page, signed with a view token for restricted articles."""

from __future__ import annotations

from app.identity import article_view_token, view_key
from app.settings import Settings


def link_key(settings: Settings) -> str:
    """The article-view key of this deployment (never the session key itself)."""
    own = settings.view_secret.get_secret_value() if settings.view_secret else None
    return view_key(settings.session_secret.get_secret_value(), own)


def article_url(
    slug: str, audience: str, key: str, plan: str | None = None, *, page: int | None = None
) -> str:
    """`/help/<slug>`, plus `?v=<token>` unless the article is for every audience, plus
    `#page=N` for a passage from a PDF's page N. The token is bound to the slug and to the
    viewer's plan (default: the lowest plan the audience allows)."""
    anchor = f"#page={page}" if page is not None else ""
    if audience == "all":
        return f"/help/{slug}{anchor}"
    return f"/help/{slug}?v={article_view_token(slug, plan or audience, key)}{anchor}"
