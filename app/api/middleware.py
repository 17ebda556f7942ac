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
        # Read the whole body first (it is small by definition): a chunked body over the limit
        # is refused here with 413, before any framework code could turn the cut into a 400.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message, receive), send)
                return
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.max_bytes:
                await self._reject(send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(chunks, None, receive), send)

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


def _replay(chunks: list[bytes], first: Message | None, receive: Receive) -> Receive:
    """A receive that hands out the buffered body once, then defers to the real one."""
    pending: list[Message] = (
        [first] if first is not None else [{"type": "http.request", "body": b"".join(chunks)}]
    )

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


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
