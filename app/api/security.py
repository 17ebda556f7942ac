"""Transport-level security: the real client address, loopback-only routes, response headers.

The client address is the TCP peer unless that peer is a configured trusted proxy
(`TRUSTED_PROXIES`); then it is the right-most X-Forwarded-For entry that is not itself a trusted
proxy. X-Forwarded-For from anyone else is ignored, so it cannot pick a fresh rate-limit bucket.
Run uvicorn with `--no-proxy-headers` (as `make run` does): uvicorn's own handling rewrites the
peer from X-Forwarded-For when the peer is 127.0.0.1, before this code can see who really called.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache

from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# The pages we serve satisfy this: scripts and styles from our origin only (the widget styles its
# Shadow DOM with a constructed stylesheet), no framing by anyone, fetches to our origin only.
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# /docs (Swagger UI, served from /docs-assets) styles some of its widgets with inline styles.
DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_DOCS_PATHS = ("/docs", "/redoc")


@lru_cache(maxsize=64)
def _networks(entries: tuple[str, ...]) -> tuple[IpNetwork, ...]:
    return tuple(ipaddress.ip_network(e.strip(), strict=False) for e in entries if e.strip())


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(host: str, networks: Sequence[IpNetwork]) -> bool:
    ip = _ip(host)
    return ip is not None and any(ip in net for net in networks)


def resolve_client(peer: str | None, forwarded_for: str | None, trusted: Sequence[str]) -> str:
    """The real client address (pure; see the module doc)."""
    host = peer or "unknown"
    networks = _networks(tuple(trusted))
    if not networks or not forwarded_for or not _trusted(host, networks):
        return host
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if _ip(hop) is None:
            return host  # a malformed chain is not evidence of anything
        if not _trusted(hop, networks):
            return hop
    return hops[0] if hops else host


def client_address(request: Request) -> str:
    """The caller's address, trusting X-Forwarded-For only from configured proxies."""
    settings = request.app.state.services.settings
    peer = request.client.host if request.client else None
    return resolve_client(peer, request.headers.get("x-forwarded-for"), settings.trusted_proxies)


def is_loopback(address: str) -> bool:
    ip = _ip(address)
    return ip is not None and ip.is_loopback


def require_loopback(request: Request) -> None:
    """Demo-only routes answer the machine they run on, nobody else (404: they do not exist)."""
    if not is_loopback(client_address(request)):
        raise HTTPException(404, detail="not found")


class SecurityHeaders:
    """nosniff and no-referrer on every response; CSP and no framing on every HTML page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        csp = DOCS_CSP if path.startswith(_DOCS_PATHS) else PAGE_CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {k.lower() for k, _ in headers}
                content_type = dict(headers).get(b"content-type", b"")
                extra = [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cross-origin-opener-policy", b"same-origin"),
                ]
                if content_type.startswith(b"text/html"):
                    extra += [
                        (b"content-security-policy", csp.encode()),
                        (b"x-frame-options", b"DENY"),
                    ]
                headers += [(k, v) for k, v in extra if k not in names]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
