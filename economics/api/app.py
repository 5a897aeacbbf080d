"""The HTTP API's application: the routes (:mod:`economics.api.routes`), the worker pools they compute in, and
what every request passes through — the body limit, the optional bearer token, the version header, the access log
and the error shape for every failure, a bug included (never a trace).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import sys
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from economics.api import errors, openapi, routes, settings, store_routes
from economics.api.errors import ApiError, Code
from economics.api.workers import Pool
from economics.version import __version__

VERSION_HEADER = "token-economics-version"
OPEN_PATHS = frozenset({"/v1/health"})
"""Paths served without the bearer token (a load balancer's health check)."""

access_log = logging.getLogger("economics.api.access")


def _error_response(error: ApiError) -> Response:
    return Response(errors.body_bytes(error), status_code=error.code.status, media_type="application/json",
                    headers={"www-authenticate": "Bearer"} if error.code is Code.UNAUTHORIZED else None)


async def _send_error(send: Send, error: ApiError) -> None:
    """The error shape as an ASGI answer (the :class:`Guard` every answer passes adds the version header)."""
    body = errors.body_bytes(error)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if error.code is Code.UNAUTHORIZED:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": error.code.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def bearer_credentials(header: bytes) -> bytes | None:
    """The credentials of an ``Authorization: Bearer <token>`` header, the scheme's name in any case and one or more
    spaces after it (RFC 7235); None for another scheme or none.

    >>> bearer_credentials(b"bearer  abc"), bearer_credentials(b"Basic abc"), bearer_credentials(b"Bearer")
    (b'abc', None, None)
    """
    scheme, space, credentials = header.partition(b" ")
    if not space or scheme.lower() != b"bearer":
        return None
    return credentials.lstrip(b" ") or None


class TokenCheck:
    """The bearer token of every request but :data:`OPEN_PATHS`, compared in constant time. It sits inside the CORS
    middleware (:func:`create_app`), so that a browser's preflight is answered before it and its 401 carries the
    CORS headers a browser needs to read it.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorized request on; answer 401 otherwise."""
        if scope["type"] != "http" or not self.token or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = bearer_credentials(dict(scope["headers"]).get(b"authorization", b""))
        if given is not None and hmac.compare_digest(given, self.token):
            await self.app(scope, receive, send)
            return
        await _send_error(send, ApiError(Code.UNAUTHORIZED, "missing or wrong bearer token: send "
                                                            "'Authorization: Bearer <token>'"))


class Guard:
    """Every request: the body limited (by its Content-Length before any byte is read, and as it arrives), the
    version header added, one access-log line written, and any failure not answered yet answered in the error
    shape. The outermost layer: it sees every request, a CORS preflight and a refused token included.
    """

    def __init__(self, app: ASGIApp, config: settings.Settings) -> None:
        self.app, self.config = app, config

    def _too_large(self, scope: Scope) -> bool:
        length = dict(scope["headers"]).get(b"content-length", b"")
        return length.isdigit() and int(length) > self.config.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass one request through the checks to the application."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, seen = time.perf_counter(), {"in": 0, "out": 0, "status": 0}
        limit = self.config.max_body_bytes

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                message["headers"] = [*message.get("headers", []), (VERSION_HEADER.encode(), __version__.encode())]
            elif message["type"] == "http.response.body":
                seen["out"] += len(message.get("body", b""))
            await send(message)

        async def limited() -> Message:
            message = await receive()
            seen["in"] += len(message.get("body", b""))
            if seen["in"] > limit:
                raise ApiError(Code.TOO_LARGE, f"the body is over the server's {self.config.max_body_mb:g} MB limit")
            return message

        try:
            if self._too_large(scope):
                await _send_error(counted, ApiError(Code.TOO_LARGE, "the body is over the server's "
                                                    f"{self.config.max_body_mb:g} MB limit"))
            else:
                await self.app(scope, limited, counted)
        except ApiError as exc:
            if not seen["status"]:
                await _send_error(counted, exc)
        except Exception as exc:  # the last line of defence: the error shape, never a trace
            if not seen["status"]:
                await _send_error(counted, ApiError(Code.INTERNAL, f"internal error: {type(exc).__name__}"))
        finally:
            _log(scope, seen, time.perf_counter() - start)


def _log(scope: Scope, seen: dict[str, int], seconds: float) -> None:
    """One JSON line per request (json.dumps escapes every control character of the path)."""
    client = scope.get("client") or ("", 0)
    access_log.info(json.dumps({
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "id": uuid.uuid4().hex[:12], "client": client[0],
        "method": scope.get("method", ""), "path": scope.get("path", "")[:500], "status": seen["status"],
        "ms": round(seconds * 1000, 1), "bytes_in": seen["in"], "bytes_out": seen["out"]}))


def _validation_problems(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for e in exc.errors():
        where = [str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body")]
        name = ".".join(where) or "request"
        out.append({"row": None, "name": "", "field": name, "value": e.get("input"),
                    "message": f"{name}: {e.get('msg', 'invalid')}"})
    return out


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Any, exc: ApiError) -> Response:
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(_: Any, exc: RequestValidationError) -> Response:
        problems = _validation_problems(exc)
        return _error_response(ApiError(Code.UNUSABLE_INPUT, "; ".join(p["message"] for p in problems), problems))

    @app.exception_handler(HTTPException)
    async def http_error(_: Any, exc: HTTPException) -> Response:
        code = {404: Code.NOT_FOUND, 405: Code.METHOD_NOT_ALLOWED}.get(exc.status_code, Code.UNUSABLE_INPUT)
        return _error_response(ApiError(code, str(exc.detail)))


def create_app(config: settings.Settings | None = None) -> FastAPI:
    """The application with ``config`` (default: from the environment, :func:`economics.api.settings.from_environment`);
    its worker pools start with it and end with it.
    """
    config = config or settings.from_environment()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        timeout, queue = config.request_timeout_s, config.queue_timeout_s
        app.state.pools = {
            "evaluate": Pool("evaluate", config.evaluate_workers, config.worker_memory_mb, config.max_rows,
                             timeout, queue),
            "study": Pool("study", config.study_workers, config.worker_memory_mb, config.max_rows, timeout, queue)}
        try:
            yield
        finally:
            for pool in app.state.pools.values():
                pool.close()

    # the interactive docs (/docs, /redoc) from files in the package, never a CDN: they work on a closed network
    app = FastAPIOffline(title="Token economics API", version=__version__, lifespan=lifespan,
                         static_url="/docs-static",
                         description="Cost per million tokens, fleets, retrofit, uncertainty and plans over HTTP: "
                                     "the CLI's commands, the same numbers. Every failure is answered in one error "
                                     "shape (components/schemas/Error).")
    app.state.settings = config
    app.include_router(routes.router)
    app.include_router(store_routes.router)
    _handlers(app)
    base_openapi = app.openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi.document(base_openapi())
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
    app.add_middleware(TokenCheck, token=config.token)  # inside CORS: a preflight never needs the token
    if config.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"], allow_headers=["authorization", "content-type"])
    app.add_middleware(Guard, config=config)
    return app


def configure_access_log(stream: Any = None) -> None:
    """The access log's lines on ``stream`` (standard error by default), one JSON object a line."""
    if not access_log.handlers:
        handler = logging.StreamHandler(stream or sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access_log.addHandler(handler)
        access_log.setLevel(logging.INFO)
        access_log.propagate = False


def application() -> FastAPI:
    """The application a uvicorn worker process serves (``token-economics serve``): its settings from the
    environment the command wrote, its access log on standard error.
    """
    configure_access_log()
    return create_app(settings.from_environment())
