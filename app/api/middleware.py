"""Request-size limit and error mapping (domain errors → HTTP)."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import InvalidInput, MessageTooLong, RateLimited, StoreUnavailable, Unauthenticated

log = logging.getLogger(__name__)


class BodySizeLimit:
    """413 for bodies over `max_bytes`, whether or not the client sent Content-Length."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited_receive, send)
        except _TooLarge:
            await self._reject(send)

    async def _reject(self, send: Send) -> None:
        body = json.dumps(
            {"detail": f"request body too large (max {self.max_bytes} bytes)"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


def install_error_handlers(app: FastAPI) -> None:
    def handler(status: int, headers: dict[str, str] | None = None) -> Any:
        async def handle(request: Request, exc: Exception) -> JSONResponse:
            extra = dict(headers or {})
            if isinstance(exc, RateLimited):
                extra["Retry-After"] = str(exc.retry_after_s)
            return JSONResponse({"detail": str(exc)}, status_code=status, headers=extra)

        return handle

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        """422 with what to fix, per field; the offending input is not echoed back."""
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        detail = [
            {
                "loc": list(e.get("loc", ())),
                "msg": str(e.get("msg", "invalid")),
                "type": str(e.get("type", "")),
            }
            for e in errors
        ]
        summary = "; ".join(
            f"{'.'.join(str(p) for p in d['loc'][1:]) or 'body'}: {d['msg']}" for d in detail
        )
        return JSONResponse(
            {"detail": summary or "invalid request", "errors": detail}, status_code=422
        )

    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(Unauthenticated, handler(401, {"WWW-Authenticate": "Bearer"}))
    app.add_exception_handler(MessageTooLong, handler(413))
    app.add_exception_handler(InvalidInput, handler(422))
    app.add_exception_handler(RateLimited, handler(429))

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.error("store unavailable", extra={"error": str(exc), "path": request.url.path})
        return JSONResponse(
            {
                "detail": "The service is temporarily unavailable (database unreachable). Nothing "
                "was half-saved; please retry shortly."
            },
            status_code=503,
            headers={"Retry-After": "5"},
        )

    app.add_exception_handler(StoreUnavailable, unavailable)
