"""The application factory of `faultlens serve`."""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from .. import __version__
from ..engine.compile import load_scanner
from ..store.incidents import IncidentStore
from . import api, docs, errors, pages
from .access import AccessLog
from .context import AppContext
from .heavy import DEFAULT_BUDGET_S, HeavyWork
from .limits import BodyLimit
from .scanners import ScannerPool
from .templating import environment

DEFAULT_MAX_UPLOAD_BYTES = 32 << 20
STATIC = Path(__file__).resolve().parent / "static"


def create_app(db_url: str | None = None, token: str | None = None,
               max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES, *,
               catalogue: str | Path | None = None, scanners: int | None = None,
               budget_s: float = DEFAULT_BUDGET_S) -> FastAPI:
    """The web UI and HTTP API over the catalogue at `catalogue` (default: the usual one) and
    the incident store at `db_url` (default: $FAULTLENS_DB or the per-user SQLite file).

    `token`: writes need it as a bearer token (None: no token, for loopback only).
    `scanners`: how many diagnoses run at once (default: the CPU count, at most 8).
    `budget_s`: the most a request's heavy work may take before it is answered 503.
    """
    scanner = load_scanner(catalogue)
    workers = scanners or min(8, os.cpu_count() or 1)
    ctx = AppContext(catalogue=scanner.catalogue, scanners=ScannerPool(scanner, workers),
                     store=IncidentStore(db_url), token=token or None,
                     max_upload_bytes=max_upload_bytes, templates=environment(),
                     heavy=HeavyWork(workers, budget_s))

    @asynccontextmanager
    async def lifespan(_app):
        yield
        ctx.heavy.close()
        ctx.store.close()

    app = FastAPI(title="faultlens", version=__version__, lifespan=lifespan, redoc_url=None,
                  docs_url=None,  # served below from packaged assets: the docs work offline
                  description="Diagnose GPU training and inference failures from their logs, "
                              "browse the catalogue of error references, and keep incidents.")
    app.state.faultlens = ctx
    errors.install(app)
    app.add_middleware(BodyLimit, max_log_bytes=max_upload_bytes)
    app.add_middleware(AccessLog)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    docs.install(app)
    return app
