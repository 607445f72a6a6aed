"""Diagnose an uploaded log and, when asked, store it as an incident. Runs in a worker thread."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..redact import redact_json
from ..render.json import report_dict
from ..store.incidents import Incident, StoreError
from .context import AppContext
from .errors import ApiError
from .intake import Upload


@dataclass(frozen=True)
class Outcome:
    report: dict
    """The report in the JSON contract, redacted."""
    incident: Incident | None


def diagnose_upload(ctx: AppContext, upload: Upload, *, source: str, save: bool, host: str = "",
                    job: str = "") -> Outcome:
    try:
        report = report_dict(ctx.scanners.diagnose(upload.data, upload.name))
    except InputError as exc:
        raise ApiError(422, "unreadable_log", str(exc)) from None
    if upload.compression:  # the engine was handed the log already decompressed
        report["input"]["files"][0]["compression"] = upload.compression
    if not save:
        return Outcome(redact_json(report), None)
    try:
        incident = ctx.store.add_incident(report, log=upload.data, host=host, job=job, source=source)
    except StoreError as exc:
        raise ApiError(503, "store_unavailable", str(exc)) from None
    return Outcome(incident.diagnosis, incident)
