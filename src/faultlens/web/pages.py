"""The HTML pages: references, search, diagnose, incidents. Server-rendered; the only script
copies commands to the clipboard."""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from datetime import date, datetime, time, timedelta, timezone

from fastapi import APIRouter, Query, Request
from starlette.responses import HTMLResponse, RedirectResponse

from ..redact import redact
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
            "known": ctx.known, "not_saved": False, "text": "", "message": "", "permalink": "",
            **values}


@router.get("/diagnose")
def diagnose_form(request: Request):
    ctx = context(request)
    return ctx.page("diagnose.html", **_form(ctx))


RESULTS_KEPT = 200
"""Diagnose results kept in memory for their permalink (/d/<key>); saved incidents stay for good."""
TEXT_KEPT = 512 * 1024
"""A pasted log up to this size is kept with its result, to refill the form."""


def _results(request: Request) -> OrderedDict:
    state = request.app.state
    if not hasattr(state, "diagnose_results"):
        state.diagnose_results = OrderedDict()
    return state.diagnose_results


@router.post("/diagnose")
async def diagnose(request: Request):
    """Diagnose, keep the result under a random key and redirect to its permalink (POST, then
    GET: reloading the result page does not post the log again)."""
    ctx = context(request)
    try:
        upload = await read_upload(request, ctx.max_upload_bytes, ctx.heavy)
    except ApiError as exc:
        if exc.code == "empty_log" and "text/html" in request.headers.get("accept", ""):
            return ctx.page("diagnose.html", status=422, **_form(
                ctx, message="Paste a log into the box, or choose a file to upload, then press "
                             "Diagnose."))
        raise
    fields = upload.fields
    host, job = fields.get("host", "")[:255], fields.get("job", "")[:255]
    wants_save = fields.get("save") == "1"
    allowed = token_ok(fields.get("token") or None, ctx.token)  # without it: diagnose, store nothing
    outcome = await ctx.heavy.run(diagnose_upload, ctx, upload, source="web",
                                  save=wants_save and allowed, host=host, job=job)
    contexts = await ctx.heavy.run(_contexts, ctx, upload, outcome.report)
    # kept redacted like everything shown: anyone with the link sees it
    text = redact(upload.data.decode("utf-8", "replace")) if upload.name == "<text>" and \
        len(upload.data) <= TEXT_KEPT else ""
    key = secrets.token_urlsafe(9)
    kept = _results(request)
    kept[key] = dict(host=host, job=job, report=outcome.report, contexts=contexts,
                     incident=outcome.incident, not_saved=wants_save and not allowed, text=text)
    while len(kept) > RESULTS_KEPT:
        kept.popitem(last=False)
    return RedirectResponse(f"/d/{key}#result", status_code=303)


@router.get("/d/{key}")
def diagnose_result(request: Request, key: str):
    """The permalink of a diagnose result: the result first, the form below with the log kept."""
    ctx = context(request)
    found = _results(request).get(key)
    if found is None:
        raise ApiError(404, "not_found", "this result is no longer kept (results live in memory "
                                         "until the server restarts; saved incidents stay under "
                                         "Incidents): diagnose the log again")
    return ctx.page("diagnose.html", **_form(ctx, permalink=f"/d/{key}", **found))


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
    shown = views.shown_report(found.diagnosis)
    return ctx.page("incident.html", incident=found, report=shown,
                    contexts=_incident_contexts(ctx, found, shown), known=ctx.known)


def _incident_contexts(ctx: AppContext, found, shown: dict) -> dict:
    """Evidence in context, as on the diagnose page, when the stored log is whole (a capped log
    has lines left out, so its line numbers no longer match: the evidence alone is shown)."""
    log = found.log or ""
    files = shown["input"].get("files") or []
    if not log or len(files) != 1 or re.search(r"^\[faultlens: \d+ bytes of the log not stored\]$",
                                                log, re.M):
        return {}
    data = log.encode("utf-8")
    lines = evidence.LogLines(data, evidence.shown_lines(shown["diagnoses"], files[0]["path"]))
    refs = ctx.catalogue.by_id
    try:
        return {i: evidence.evidence_context(lines, files[0]["path"], d, refs)
                for i, d in enumerate(shown["diagnoses"])}
    except (KeyError, TypeError):  # a report from an agent may lack what the view needs
        return {}
