"""What every request handler needs, built once by create_app and kept in app.state."""

from __future__ import annotations

from dataclasses import dataclass, field

import jinja2
from fastapi import Request
from starlette.responses import HTMLResponse

from ..catalogue import Catalogue
from ..store.incidents import IncidentStore
from .heavy import HeavyWork
from .links import ServerLinks
from .scanners import ScannerPool
from .templating import render


@dataclass
class AppContext:
    catalogue: Catalogue
    scanners: ScannerPool
    store: IncidentStore
    token: str | None
    """Writes need this bearer token; None when the server has none (loopback only)."""
    max_upload_bytes: int
    templates: jinja2.Environment
    heavy: HeavyWork
    """Where decompression, diagnosis, redaction and the evidence view run."""
    links: ServerLinks = field(default_factory=ServerLinks)

    @property
    def known(self) -> set[str]:
        return set(self.catalogue.by_id)

    def page(self, template: str, status: int = 200, **context) -> HTMLResponse:
        return HTMLResponse(render(self.templates, template, self.links, **context), status_code=status)


def context(request: Request) -> AppContext:
    return request.app.state.faultlens
