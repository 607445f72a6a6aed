"""Post a finished report to a `faultlens serve` server as an incident (for `watch` and `run`).

Standard library only: the agents must not need the `web` extra. The log excerpt is redacted
here, before it leaves the machine; the server redacts again before storing.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request

from ..errors import FaultlensError
from ..redact import redact, redact_json

ENDPOINT = "/api/v1/incidents"
LOG_TAIL_BYTES = 256 << 10


class IncidentPostError(FaultlensError):
    """The server could not be reached or refused the incident."""


def incidents_url(server: str) -> str:
    """The incidents endpoint of a server given by its base URL (or by the endpoint itself)."""
    server = server.rstrip("/")
    return server if server.endswith(ENDPOINT) else server + ENDPOINT


def read_tail(path, limit: int = LOG_TAIL_BYTES) -> str:
    """The last `limit` bytes of a file, from a line start, as text ('' if unreadable)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - limit))
            data = fh.read()
    except OSError:
        return ""
    if size > limit:
        data = data[data.find(b"\n") + 1:]
    return data.decode("utf-8", "replace")


def post_incident(server: str, report: dict, *, source: str, job: str = "", host: str | None = None,
                  token: str | None = None, log: str | None = None, timeout: float = 10) -> dict:
    """POST `report` (the JSON contract) with host and job; returns the server's answer
    ({"id": ..., "url": ...}). Raises IncidentPostError when that fails."""
    body = {"host": host if host is not None else socket.gethostname(), "job": redact(job),
            "source": source, "report": redact_json(report)}
    if log:
        body["log"] = redact(log)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    url = incidents_url(server)
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        raise IncidentPostError(f"{url}: the server refused the incident: {exc.code} "
                                f"{_error_message(exc)}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise IncidentPostError(f"{url}: cannot post the incident ({reason})") from None


def _error_message(exc: urllib.error.HTTPError) -> str:
    """The message of the server's JSON error shape, or the HTTP reason."""
    try:
        return json.loads(exc.read())["error"]["message"]
    except (ValueError, KeyError, TypeError, OSError):
        return exc.reason or ""
