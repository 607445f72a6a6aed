"""The HTML pages: references, search, diagnose, incidents. Server-rendered, no JavaScript."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

from fastapi import APIRouter, Query, Request
from starlette.responses import HTMLResponse

from ..refs import search as search_refs
from ..store.incidents import IncidentFilter
from ..store.schema import SOURCES
from . import evidence, views
from .auth import token_ok
from .context import AppContext, context
from .errors import ApiError
from .intake import Upload, read_upload
from .service import diagnose_upload

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)


@router.get("/")
def home(request: Request):
    ctx = context(request)
    return ctx.page("home.html", **views.home_context(ctx.catalogue.references))


@router.get("/search")
def search(request: Request, q: str = Query("", max_length=2000)):
    ctx = context(request)
    results = search_refs(ctx.catalogue.references, q) if q.strip() else []
    return ctx.page("search.html", query=q, results=results)


@router.get("/categories/{name}")
def category(request: Request, name: str):
    ctx = context(request)
    data = views.category_context(ctx.catalogue.references, name)
    if not data["refs"]:
        raise ApiError(404, "not_found", f"no category '{name}'")
    return ctx.page("category.html", **data)


@router.get("/references/{ref_id}")
def reference(request: Request, ref_id: str):
    ctx = context(request)
    ref = ctx.catalogue.by_id.get(ref_id)
    if ref is None:
        raise ApiError(404, "not_found", f"no reference with id '{ref_id}'")
    return ctx.page("reference.html", **views.reference_context(ref, ctx.known))


def _form(ctx: AppContext, **values) -> dict:
    return {"max_mb": round(ctx.max_upload_bytes / 2**20, 1), "token_required": bool(ctx.token),
            "host": "", "job": "", "report": None, "contexts": {}, "incident": None,
            "known": ctx.known, "not_saved": False, **values}


@router.get("/diagnose")
def diagnose_form(request: Request):
    ctx = context(request)
    return ctx.page("diagnose.html", **_form(ctx))


@router.post("/diagnose")
async def diagnose(request: Request):
    ctx = context(request)
    upload = await read_upload(request, ctx.max_upload_bytes, ctx.heavy)
    fields = upload.fields
    host, job = fields.get("host", "")[:255], fields.get("job", "")[:255]
    wants_save = fields.get("save") == "1"
    allowed = token_ok(fields.get("token") or None, ctx.token)  # without it: diagnose, store nothing
    outcome = await ctx.heavy.run(diagnose_upload, ctx, upload, source="web",
                                  save=wants_save and allowed, host=host, job=job)
    contexts = await ctx.heavy.run(_contexts, ctx, upload, outcome.report)
    return ctx.page("diagnose.html", **_form(ctx, host=host, job=job, report=outcome.report,
                                             contexts=contexts, incident=outcome.incident,
                                             not_saved=wants_save and not allowed))


def _contexts(ctx: AppContext, upload: Upload, report: dict) -> dict:
    lines = evidence.LogLines(upload.data, evidence.shown_lines(report["diagnoses"], upload.name))
    refs = ctx.catalogue.by_id
    return {i: evidence.evidence_context(lines, upload.name, d, refs)
            for i, d in enumerate(report["diagnoses"])}


def _day(value: str, name: str, end: bool = False) -> datetime | None:
    """A YYYY-MM-DD filter as a UTC instant: the day's start, or the next day's start for `end`."""
    if not value:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise ApiError(422, "invalid_request", f"{name}: expected a date like 2026-01-31") from None
    return datetime.combine(day + timedelta(days=1 if end else 0), time(), tzinfo=timezone.utc)


FLEET_LIMIT = 5000


def _filters(reference: str, host: str, job: str, source: str, since: str, until: str,
             limit: int) -> tuple[IncidentFilter, dict]:
    """The store filter of the incident and fleet pages, and the values to show in the form."""
    if source and source not in SOURCES:
        raise ApiError(422, "invalid_request", f"source: one of {', '.join(SOURCES)}")
    filters = IncidentFilter(reference=reference or None, host=host or None, job=job or None,
                             source=source or None, since=_day(since, "since"),
                             until=_day(until, "until", end=True), limit=limit)
    shown = {"reference": reference, "host": host, "job": job, "source": source, "since": since,
             "until": until}
    return filters, shown


def fleet_summary(store, filters) -> dict:
    from ..fleet.aggregate import summarize
    from ..fleet.from_store import rows_from_store

    rows = rows_from_store(store, filters)
    try:
        return summarize(rows)
    except ImportError:  # drain3 comes with the fleet extra
        no_templates = [dict(r, error_lines=[]) for r in rows]
        return {**summarize(no_templates), "templates_unavailable": True}


@router.get("/incidents")
def incidents(request: Request, reference: str = "", host: str = "", job: str = "", source: str = "",
              since: str = "", until: str = ""):
    ctx = context(request)
    filters, shown = _filters(reference, host, job, source, since, until, 200)
    return ctx.page("incidents.html", filters=shown, sources=SOURCES,
                    incidents=ctx.store.list_incidents(filters),
                    counts=views.counts_table(ctx.store.counts(filters)))


@router.get("/fleet")
def fleet(request: Request, reference: str = "", host: str = "", job: str = "", source: str = "",
          since: str = "", until: str = ""):
    """The aggregates `faultlens scan` prints, over the stored incidents."""
    ctx = context(request)
    filters, shown = _filters(reference, host, job, source, since, until, FLEET_LIMIT)
    return ctx.page("fleet.html", filters=shown, sources=SOURCES, summary=fleet_summary(ctx.store, filters))


@router.get("/incidents/{incident_id}")
def incident(request: Request, incident_id: int):
    ctx = context(request)
    found = ctx.store.get_incident(incident_id)
    if found is None:
        raise ApiError(404, "not_found", f"no incident {incident_id}")
    # evidence is shown from the diagnosis: a stored log may be capped or only a tail
    return ctx.page("incident.html", incident=found, report=views.shown_report(found.diagnosis),
                    contexts={}, known=ctx.known)
