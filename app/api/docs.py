"""The API reference at /docs: Swagger UI, served from this process.

The browser bundle comes from the pinned `fastapi-offline` package (MIT; it ships the Swagger UI
distribution under its own Apache-2.0 licence), served from its install directory, so the page
works with no network. The page loads only same-origin scripts (no inline code). ReDoc is not
offered: its bundle fetches its logo from a CDN, so it cannot render fully offline.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse

from app.api.deps import ServicesDep

router = APIRouter(include_in_schema=False)
_spec = importlib.util.find_spec("fastapi_offline")
VENDOR = Path(_spec.origin).parent / "static" if _spec and _spec.origin else None
WEB = Path(__file__).resolve().parent.parent / "web" / "static"
_ASSETS = {  # what each URL serves: (directory, file name, media type)
    "swagger-ui-bundle.js": (VENDOR, "swagger-ui-bundle.js", "text/javascript"),
    "swagger-ui.css": (VENDOR, "swagger-ui.css", "text/css"),
    "favicon.png": (VENDOR, "favicon.png", "image/png"),
    "docs.js": (WEB, "docs.js", "text/javascript"),
}


def _page(title: str, head: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<link rel="icon" type="image/png" href="/docs-assets/favicon.png">{head}</head>
<body>{body}</body></html>"""
    )


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return _page(
        "Concierge API",
        '<link rel="stylesheet" href="/docs-assets/swagger-ui.css">',
        '<div id="swagger-ui" data-openapi="/openapi.json"></div>'
        '<script src="/docs-assets/swagger-ui-bundle.js"></script>'
        '<script src="/docs-assets/docs.js"></script>',
    )


@router.get("/docs-assets/{name}")
async def docs_asset(name: str) -> FileResponse:
    folder, file, media_type = _ASSETS.get(name, (None, "", ""))
    if folder is None or not (folder / file).is_file():
        raise HTTPException(404, detail="not found")
    return FileResponse(
        folder / file, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"}
    )


@router.get("/")
async def root(services: ServicesDep) -> RedirectResponse:
    """The demo console in demo mode, else the API reference."""
    return RedirectResponse("/demo" if services.settings.demo else "/docs", status_code=307)
