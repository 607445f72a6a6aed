"""A request-body limit for the whole server, as ASGI middleware: a body announced too large
(Content-Length) or found too large while streaming (chunked) is refused with 413."""

from __future__ import annotations

from .errors import ApiError

SLACK_BYTES = 1 << 20
"""Room for multipart framing and the form's other fields on top of the log limit."""


def size_text(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / 2**20:.1f} MB"
    return f"{n / 1024:.1f} kB" if n >= 1024 else f"{n} bytes"


def too_large(what: str, size: int | None, limit: int) -> ApiError:
    found = f" is {size_text(size)}" if size is not None else " is too large"
    return ApiError(413, "too_large", f"{what}{found}; this server accepts logs up to "
                                      f"{size_text(limit)} (faultlens serve --max-upload-mb)")


class BodyLimit:
    def __init__(self, app, max_log_bytes: int):
        self.app = app
        self.max_log_bytes = max_log_bytes
        self.max_body = max_log_bytes + SLACK_BYTES

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        announced = int(declared) if declared.isdigit() else None
        seen = 0

        async def limited_receive():
            # raised where the app reads the body, so the app's error handlers answer
            nonlocal seen
            if announced is not None and announced > self.max_body:
                raise too_large("the request", announced, self.max_log_bytes)
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise too_large("the request", None, self.max_log_bytes)
            return message

        await self.app(scope, limited_receive, send)
