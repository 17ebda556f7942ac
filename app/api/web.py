"""Pages and assets: widget script, /demo, /admin, and the help pages citations open."""

from __future__ import annotations

import gzip
import hashlib
import html
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import brotli  # type: ignore[import-untyped]
from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse, HTMLResponse

from app.api.deps import ServicesDep
from app.api.security import require_loopback
from app.identity import article_view_plan
from app.links import link_key, render_help
from app.safety.screen import without_instructions
from app.turn.entitlement import audience_ladder

WEB = Path(__file__).resolve().parent.parent / "web" / "static"
router = APIRouter(include_in_schema=False)


def _asset(name: str, media_type: str) -> FileResponse:
    path = WEB / name
    if not path.is_file():
        raise HTTPException(404, detail=f"{name} is not built")
    return FileResponse(path, media_type=media_type, headers={"Cache-Control": "no-cache"})


@dataclass(frozen=True)
class Script:
    """widget.js as served: the bytes, their brotli and gzip forms, a content hash and VERSION."""

    body: bytes
    brotli: bytes
    gzipped: bytes
    etag: str
    version: str


_scripts: dict[Path, tuple[int, Script]] = {}
_VERSION = re.compile(rb"const VERSION = '([0-9A-Za-z.-]+)'")


def load_script(path: Path) -> Script:
    """Read, hash and compress once per file modification, not once per page view."""
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise HTTPException(404, detail=f"{path.name} is not built") from None
    cached = _scripts.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    body = path.read_bytes()
    found = _VERSION.search(body)
    script = Script(
        body=body,
        brotli=brotli.compress(body, quality=11),
        gzipped=gzip.compress(body, compresslevel=9, mtime=0),
        etag=hashlib.sha256(body).hexdigest()[:20],
        version=found.group(1).decode() if found else "0",
    )
    _scripts[path] = (stamp, script)
    return script


def _encoding(header: str | None) -> str | None:
    """`br` or `gzip` when the client accepts it (brotli first: about 13 % smaller here)."""
    accepted = set()
    for part in (header or "").lower().split(","):
        name, _, params = part.strip().partition(";")
        if params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            accepted.add(name.strip())
    for coding in ("br", "gzip"):
        if coding in accepted or "*" in accepted:
            return coding
    return None


def script_response(request: Request, script: Script, cache_control: str) -> Response:
    """GET or HEAD, compressed when accepted, a strong ETag per encoding, 304 revalidation."""
    coding = _encoding(request.headers.get("accept-encoding"))
    etag = f'"{script.etag}{"-" + coding if coding else ""}"'
    headers = {
        "ETag": etag,
        "Cache-Control": cache_control,
        "Vary": "Accept-Encoding",
        "X-Content-Type-Options": "nosniff",
        "Cross-Origin-Resource-Policy": "cross-origin",
    }
    wanted = {
        t.strip().removeprefix("W/") for t in request.headers.get("if-none-match", "").split(",")
    }
    if etag in wanted or "*" in wanted:
        return Response(status_code=304, headers=headers)
    if coding:
        headers["Content-Encoding"] = coding
    body = {"br": script.brotli, "gzip": script.gzipped}.get(coding or "", script.body)
    return Response(body, media_type="text/javascript; charset=utf-8", headers=headers)


@router.api_route("/widget.js", methods=["GET", "HEAD"])
async def widget(request: Request) -> Response:
    """The embed script: cached for 5 minutes, then revalidated by ETag (a 304, no body)."""
    script = load_script(WEB / "widget.js")
    return script_response(request, script, "public, max-age=300, stale-while-revalidate=86400")


@router.api_route("/widget-{version}.js", methods=["GET", "HEAD"])
async def widget_pinned(version: str, request: Request) -> Response:
    """A pinned release (`/widget-2.0.0.js`): immutable, cached for a year."""
    script = load_script(WEB / "widget.js")
    if version != script.version:
        raise HTTPException(404, detail=f"this server has widget version {script.version}")
    return script_response(request, script, "public, max-age=31536000, immutable")


@router.get("/demo")
async def demo(request: Request, services: ServicesDep) -> FileResponse:
    """The demo console: only with DEMO=1, and only for this machine."""
    if not services.settings.demo:
        raise HTTPException(404, detail="not found")
    require_loopback(request)
    settings = services.settings
    page = settings.seed_dir / "web" / "demo.html"  # the tenant's own stand-in site, if any
    if not settings.docs_only and page.is_file():
        return FileResponse(page, media_type="text/html", headers={"Cache-Control": "no-cache"})
    return _asset("demo.html", "text/html")  # a generic page: no company words in app/


@router.get("/admin")
async def admin() -> FileResponse:
    return _asset("admin.html", "text/html")


_PAGE_MARKER_HTML = re.compile(r"<p>&lt;!-- page (\d+) --&gt;</p>")


def _page_anchors(rendered: str) -> str:
    """A converted PDF's page markers become anchors, so `/help/<slug>#page=N` scrolls there."""
    return _PAGE_MARKER_HTML.sub(r'<p class="page" id="page=\1">Page \1</p>', rendered)


@router.get("/help", response_class=HTMLResponse)
async def help_index(services: ServicesDep) -> HTMLResponse:
    """Every public article by category: the help center's front page (and a crawler's start).
    Its `lang` is the language most of its pages are written in."""
    articles = await services.store.articles.list({"status": "published", "audience": "all"})
    by_category: dict[str, list[tuple[str, str]]] = {}
    for a in sorted(articles, key=lambda a: (a.category, a.title.lower())):
        by_category.setdefault(a.category, []).append((a.slug, a.title))
    locales = Counter(a.locale for a in articles)
    lang = html.escape(locales.most_common(1)[0][0] if locales else "en")
    sections = "".join(
        f"<h2>{html.escape(category)}</h2><ul>"
        + "".join(
            f'<li><a href="/help/{html.escape(slug)}">{html.escape(title)}</a></li>'
            for slug, title in pages
        )
        + "</ul>"
        for category, pages in by_category.items()
    )
    page = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Help center</title>
<link rel="stylesheet" href="/static/help.css"></head><body><main>
<h1>Help center</h1>{sections or "<p>No articles yet.</p>"}</main></body></html>"""
    return HTMLResponse(page)


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
    body = _page_anchors(render_help(without_instructions(article.body)))  # even if approved
    title = html.escape(article.title)
    lang = html.escape(article.locale)
    page = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title} · Help</title>
<link rel="stylesheet" href="/static/help.css"></head><body><main>
<p class="meta">Help center · {html.escape(article.category)} · {html.escape(article.audience)}</p>
<h1>{title}</h1>{body}</main></body></html>"""
    return HTMLResponse(page)
