"""The HTTP API, /api/v1 (OpenAPI at /docs). Reads are open; storing an incident needs the
server's token when it has one. Every error has the shape of errors.py."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field, ValidationError, field_validator
from starlette.responses import JSONResponse

from ..refs import search as search_refs
from ..render.json import SCHEMA, reference_dict
from ..store.incidents import (
    MAX_ID,
    Incident,
    IncidentFilter,
    IncidentSummary,
    StoreError,
    report_problem,
)
from .auth import bearer, require_write
from .context import context
from .errors import ApiError
from .intake import read_upload
from .service import diagnose_upload

router = APIRouter(prefix="/api/v1")
Source = Literal["web", "api", "run", "watch", "scan"]

DIAGNOSE_BODY = {"requestBody": {"required": True, "content": {
    "text/plain": {"schema": {"type": "string"}, "example": "torch.OutOfMemoryError: CUDA out of memory."},
    "application/gzip": {"schema": {"type": "string", "format": "binary"}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {
        "file": {"type": "string", "format": "binary", "description": "the log (plain or .gz)"},
        "text": {"type": "string", "description": "or the log as text"}}}},
}}}


class IncidentIn(BaseModel):
    host: str = Field("", max_length=255, description="the machine that ran the job")
    job: str = Field("", max_length=255, description="the job's name")
    source: Source = Field("api", description="who reports it: web, api, run, watch or scan")
    report: dict = Field(description="the report, exactly as `faultlens diagnose --json` prints it")
    log: str | None = Field(None, description="the log or its tail; redacted and capped when stored")

    @field_validator("report")
    @classmethod
    def _is_a_report(cls, value: dict) -> dict:
        if value.get("schema") != SCHEMA or not isinstance(value.get("diagnoses"), list):
            raise ValueError(f"not a faultlens report: expected schema {SCHEMA} and a 'diagnoses' list")
        problem = report_problem(value)
        if problem:
            raise ValueError(f"not a faultlens report: {problem}")
        return value


def incident_dict(incident: IncidentSummary) -> dict:
    out = {"id": incident.id, "created_at": incident.created_at.isoformat(), "host": incident.host,
           "job": incident.job, "source": incident.source, "reference": incident.reference,
           "confidence": incident.confidence, "log_bytes": incident.log_bytes,
           "url": f"/incidents/{incident.id}"}
    if isinstance(incident, Incident):
        out.update(diagnosis=incident.diagnosis, log=incident.log)
    return out


# the reference reads are in-memory and quick: answered on the event loop itself, they need no
# worker thread and so no turn on the GIL behind running diagnoses
@router.get("/references", summary="Every reference: id, title, category, severity, status")
async def list_references(request: Request, category: str | None = None) -> list[dict]:
    refs = context(request).catalogue.references
    return [reference_dict(r) for r in refs if category is None or r.category == category]


@router.get("/references/{ref_id}", summary="One reference in full (as `faultlens refs show --json`)")
async def get_reference(request: Request, ref_id: str) -> dict:
    ref = context(request).catalogue.by_id.get(ref_id)
    if ref is None:
        raise ApiError(404, "not_found", f"no reference with id '{ref_id}'")
    return reference_dict(ref, full=True)


@router.get("/search", summary="References ranked by how well they match the words or error line")
def search(request: Request, q: str = Query(min_length=1, max_length=2000),
           limit: int = Query(20, ge=1, le=100)) -> list[dict]:
    found = search_refs(context(request).catalogue.references, q, limit)
    return [{**reference_dict(r), "score": score} for score, r in found]


@router.post("/diagnose", openapi_extra=DIAGNOSE_BODY,
             summary="Diagnose a log; the answer is the JSON contract of `faultlens diagnose --json`",
             description="Send the log as a text/plain or gzip body, or as a form with 'file' or "
                         "'text'. With store=true (the default) it is also stored as an incident, "
                         "which needs the server's token when it has one; the incident's id and "
                         "page are then in the body's 'incident' object ({id, url}) and in the "
                         "X-Faultlens-Incident and Location headers.")
async def diagnose(request: Request, store: bool = True, host: str = Query("", max_length=255),
                   job: str = Query("", max_length=255)) -> JSONResponse:
    ctx = context(request)
    if store:  # before reading a body that could not be stored anyway
        require_write(bearer(request), ctx.token, hint=", or diagnose without storing: ?store=false")
    upload = await read_upload(request, ctx.max_upload_bytes, ctx.heavy)
    outcome = await ctx.heavy.run(diagnose_upload, ctx, upload, source="api", save=store,
                                  host=host, job=job)
    headers, body = {}, outcome.report
    if outcome.incident:
        url = f"/incidents/{outcome.incident.id}"
        headers = {"X-Faultlens-Incident": str(outcome.incident.id), "Location": url}
        body = {**body, "incident": {"id": outcome.incident.id, "url": url}}
    return JSONResponse(body, headers=headers)


def _writer(request: Request) -> None:
    """A dependency, so the token is checked before the body is validated."""
    require_write(bearer(request), context(request).token)


INCIDENT_BODY = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": IncidentIn.model_json_schema()}}}}


def _store_posted(ctx, raw: bytes):
    """Parse, check and store an agent's incident: all of it CPU work on up to the upload
    limit of JSON, so it runs in the heavy pool, not on the event loop."""
    try:
        body = IncidentIn.model_validate_json(raw)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in ('body', *e.get('loc', ())))}: {e.get('msg', 'invalid')}"
                    for e in exc.errors()]
        raise ApiError(422, "invalid_request", "; ".join(problems) or "invalid request") from None
    try:
        return ctx.store.add_incident(body.report, log=body.log or "", host=body.host,
                                      job=body.job, source=body.source)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    except StoreError as exc:
        raise ApiError(503, "store_unavailable", str(exc)) from None


@router.post("/incidents", status_code=201, dependencies=[Depends(_writer)], openapi_extra=INCIDENT_BODY,
             summary="Store a finished report as an incident (agents)")
async def add_incident(request: Request) -> dict:
    ctx = context(request)
    incident = await ctx.heavy.run(_store_posted, ctx, await request.body())
    return {"id": incident.id, "url": f"/incidents/{incident.id}"}


@router.get("/incidents", summary="Stored incidents, newest first, with filters")
def list_incidents(request: Request, reference: str | None = None, host: str | None = None,
                   job: str | None = None, source: Source | None = None,
                   since: datetime | None = None, until: datetime | None = None,
                   limit: int = Query(100, ge=1, le=1000),
                   offset: int = Query(0, ge=0, le=MAX_ID)) -> dict:
    filters = IncidentFilter(reference=reference, host=host, job=job, source=source, since=since,
                             until=until, limit=limit, offset=offset)
    return {"incidents": [incident_dict(i) for i in context(request).store.list_incidents(filters)]}


@router.get("/incidents/{incident_id}", summary="One incident with its diagnosis and stored log")
def get_incident(request: Request, incident_id: int) -> dict:
    incident = context(request).store.get_incident(incident_id)
    if incident is None:
        raise ApiError(404, "not_found", f"no incident {incident_id}")
    return incident_dict(incident)


@router.get("/fleet", summary="The aggregates of `faultlens scan` over the stored incidents")
def fleet(request: Request, reference: str | None = None, host: str | None = None,
          job: str | None = None, source: Source | None = None) -> dict:
    from .pages import FLEET_LIMIT, fleet_summary

    filters = IncidentFilter(reference=reference, host=host, job=job, source=source, limit=FLEET_LIMIT)
    return fleet_summary(context(request).store, filters)
