"""Pages and assets: widget script, /demo, /admin, and the help pages citations open."""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from markdown_it import MarkdownIt

from app.api.deps import ServicesDep
from app.api.security import require_loopback
from app.identity import article_view_plan
from app.links import link_key
from app.safety.screen import without_instructions
from app.turn.entitlement import audience_ladder

WEB = Path(__file__).resolve().parent.parent / "web" / "static"
router = APIRouter(include_in_schema=False)
_md = MarkdownIt("commonmark", {"html": False}).enable("table")


def _asset(name: str, media_type: str) -> FileResponse:
    path = WEB / name
    if not path.is_file():
        raise HTTPException(404, detail=f"{name} is not built")
    return FileResponse(path, media_type=media_type, headers={"Cache-Control": "no-cache"})


@router.get("/widget.js")
async def widget() -> FileResponse:
    return _asset("widget.js", "text/javascript")


@router.get("/demo")
async def demo(request: Request, services: ServicesDep) -> FileResponse:
    """The demo console: only with DEMO=1, and only for this machine."""
    if not services.settings.demo:
        raise HTTPException(404, detail="not found")
    require_loopback(request)
    return _asset("demo.html", "text/html")


@router.get("/admin")
async def admin() -> FileResponse:
    return _asset("admin.html", "text/html")


@router.get("/help/{slug}", response_class=HTMLResponse)
async def help_article(slug: str, services: ServicesDep, v: str | None = None) -> HTMLResponse:
    """A published article. Restricted audiences need the view token the citation carried."""
    article = await services.store.articles.get(slug)
    if article is None or article.status != "published":
        raise HTTPException(404, detail="article not found")
    if article.audience != "all":
        plan = article_view_plan(v, slug, link_key(services.settings))
        if plan is None or article.audience not in audience_ladder(plan, services.tuning):
            raise HTTPException(404, detail="article not found")
    body = _md.render(without_instructions(article.body))  # even from an approved article
    title = html.escape(article.title)
    lang = html.escape(article.locale)
    page = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title} · Help</title>
<link rel="stylesheet" href="/static/help.css"></head><body><main>
<p class="meta">Help center · {html.escape(article.category)} · {html.escape(article.audience)}</p>
<h1>{title}</h1>{body}</main></body></html>"""
    return HTMLResponse(page)
