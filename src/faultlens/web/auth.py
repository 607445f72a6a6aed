"""The write token. Writes (storing incidents) need it whenever the server has one, and the
server refuses to listen beyond loopback without one (commands/serve.py)."""

from __future__ import annotations

import hmac

from fastapi import Request

from .errors import ApiError


def token_ok(given: str | None, token: str | None) -> bool:
    """Whether `given` grants writes on a server whose token is `token` (None: no token needed)."""
    if not token:
        return True
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def require_write(given: str | None, token: str | None, hint: str = "") -> None:
    if not token_ok(given, token):
        raise ApiError(401, "unauthorized", "this server stores incidents only with its token: "
                                            f"send 'Authorization: Bearer <token>'{hint}",
                       headers={"WWW-Authenticate": "Bearer"})
