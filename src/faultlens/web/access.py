"""One access-log line per request, as ASGI middleware: client, method, path, status, bytes sent
and time taken, to the `faultlens.access` logger (`faultlens serve` sends it to stderr).

The query string is left out (it may carry a host or job name someone did not mean to log);
request bodies and headers, where a token travels, are never logged.
"""

from __future__ import annotations

import logging
import time

LOGGER = logging.getLogger("faultlens.access")


def line(client: str, method: str, path: str, status: int, sent: int, ms: float) -> str:
    return f'{client} "{method} {path}" {status} {sent} {ms:.1f}ms'


class AccessLog:
    def __init__(self, app, logger: logging.Logger = LOGGER):
        self.app = app
        self.logger = logger

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not self.logger.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status, sent = 500, 0

        async def counting_send(message):
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            client = (scope.get("client") or ("-",))[0]
            self.logger.info(line(client, scope["method"], scope["path"], status, sent,
                                  (time.perf_counter() - start) * 1000))
