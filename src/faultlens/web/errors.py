"""One error shape for every error the server returns, pinned by tests/test_web.py:

    {"error": {"code": "not_found", "message": "no reference with id 'x'"}}

A browser asking for a page (Accept: text/html, outside /api/) gets the same code and message
as an HTML page instead."""

from __future__ import annotations

from http import HTTPStatus

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, JSONResponse, Response

from .links import ServerLinks
from .templating import render

CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
         405: "method_not_allowed", 413: "too_large", 415: "unsupported_media_type",
         422: "invalid_request", 500: "internal_error", 503: "unavailable"}


class ApiError(HTTPException):
    """An error with its own code; a subclass of HTTPException so that FastAPI lets it through
    even while it reads a request body."""

    def __init__(self, status: int, code: str, message: str, headers: dict | None = None):
        super().__init__(status_code=status, detail=message, headers=headers)
        self.code = code


def error_body(code: str, message: str) -> dict:
    return {"error": {"code": code, "message": message}}


def _respond(request: Request, status: int, code: str, message: str,
             headers: dict | None = None) -> Response:
    accept = request.headers.get("accept", "")
    if "text/html" in accept and not request.url.path.startswith("/api/"):
        html = render(request.app.state.faultlens.templates, "error.html", ServerLinks(),
                      status=status, phrase=HTTPStatus(status).phrase, message=message,
                      suggestions=did_you_mean(request) if status == 404 else [])
        return HTMLResponse(html, status_code=status, headers=headers)
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


def did_you_mean(request: Request, limit: int = 3) -> list:
    """References whose words are closest to the missing page's path (for a 404 page)."""
    from ..refs import search

    words = " ".join(p for p in request.url.path.replace("-", " ").split("/")
                     if p and p not in ("references", "categories", "d", "incidents"))
    if not words.strip():
        return []
    try:
        return [r for _, r in search(request.app.state.faultlens.catalogue.references, words, limit)]
    except Exception:  # a 404 page never fails for its suggestions
        return []


async def http_error(request: Request, exc: HTTPException) -> Response:
    status = exc.status_code
    message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(status).phrase
    if not isinstance(exc, ApiError):  # the framework's own: routing and methods
        if status == 404:
            message = f"nothing at {request.url.path}"
        elif status == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
    return _respond(request, status, getattr(exc, "code", CODES.get(status, "error")), message,
                    exc.headers)


async def validation_error(request: Request, exc: RequestValidationError) -> Response:
    problems = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
                for e in exc.errors()]
    return _respond(request, 422, CODES[422], "; ".join(problems) or "invalid request")


async def server_error(request: Request, exc: Exception) -> Response:
    return _respond(request, 500, CODES[500], "internal error; the server log has the details")


def install(app) -> None:
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, server_error)
