"""Where a citation links (the help page, signed with a view token for restricted articles) and
the anchors a help page gives its headings."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

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


_md = MarkdownIt("commonmark", {"html": False}).enable("table")
_NOT_ANCHOR = re.compile(r"[^\w\- ]+")


def heading_anchor(text: str, seen: dict[str, int] | None = None) -> str:
    """A heading's anchor as GitHub and most site generators write it ("Set up: Sync" →
    `set-up-sync`); `seen` makes repeats unique (`faq`, `faq-1`)."""
    base = _NOT_ANCHOR.sub("", text.strip().lower()).replace(" ", "-") or "section"
    if seen is None:
        return base
    count = seen.get(base, 0)
    seen[base] = count + 1
    return base if count == 0 else f"{base}-{count}"


def _heading_texts(tokens: list[Token]) -> list[tuple[Token, str]]:
    out: list[tuple[Token, str]] = []
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open" and k + 1 < len(tokens):
            inline = tokens[k + 1]
            text = "".join(
                c.content for c in inline.children or [] if c.type in ("text", "code_inline")
            )
            out.append((tok, text))
    return out


def render_help(markdown: str) -> str:
    """An article body as help-page HTML; every heading carries its anchor as `id`."""
    tokens = _md.parse(markdown)
    seen: dict[str, int] = {}
    for tok, text in _heading_texts(tokens):
        tok.attrSet("id", heading_anchor(text, seen))
    return str(_md.renderer.render(tokens, _md.options, {}))


def anchors_of(markdown: str) -> set[str]:
    """The anchors `render_help` gives this body's headings."""
    seen: dict[str, int] = {}
    return {heading_anchor(text, seen) for _, text in _heading_texts(_md.parse(markdown))}
