"""The incident store: add, get, list and count diagnosed logs.

SQLite (WAL) by default, PostgreSQL by URL, through SQLAlchemy 2. Everything is redacted here,
whoever the caller is: the log (capped to `max_log_bytes`, head and tail kept) and every string
of the diagnosis. Used by `faultlens serve` and, later, `faultlens scan`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import sqlalchemy as sa

from ..errors import FaultlensError
from ..redact import redact, redact_json
from . import schema
from .paths import resolve_db_url

MAX_LOG_BYTES = 256 << 10
TEXT_LIMIT = 255
"""Longest host or job name kept (the columns' size)."""


class StoreError(FaultlensError):
    """The incident store cannot be opened or written."""


@dataclass(frozen=True)
class IncidentSummary:
    id: int
    created_at: datetime
    """When the incident was stored, timezone-aware UTC."""
    host: str
    """The machine that ran the job ('' when not known)."""
    job: str
    """The job's name ('' when not known)."""
    source: str
    """One of schema.SOURCES."""
    reference: str | None
    """The top failure's reference id; None when no failure was diagnosed."""
    confidence: float | None
    """The top failure's confidence."""
    log_bytes: int
    """Size of the log as received; the stored log may be shorter (see MAX_LOG_BYTES)."""


@dataclass(frozen=True)
class Incident(IncidentSummary):
    diagnosis: dict = field(default_factory=dict)
    """The report in the JSON contract of `faultlens diagnose --json`, redacted."""
    log: str = ""
    """The redacted log; when longer than the cap, its head and tail around a marker line."""


@dataclass(frozen=True)
class IncidentFilter:
    """What to select; None means any. `since` is inclusive, `until` exclusive."""

    reference: str | None = None
    host: str | None = None
    job: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True)
class DayCount:
    day: str
    """YYYY-MM-DD, UTC."""
    reference: str | None
    count: int


MAX_ID = (1 << 63) - 1
"""The largest id (and offset) the databases take; a larger one is no incident, not an error."""

_TEXT_OR_NULL = ("title", "category", "variant", "consequence_of", "summary")
_LISTS = {"evidence": ("file", "text", "signal"), "checks": ("text", "status"), "fix": ("do",),
          "rejected_siblings": ("id",)}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def report_problem(report) -> str | None:
    """What is wrong with a report that claims the JSON contract (None: nothing), checked as
    far as the store and the pages read it; an agent's malformed report is refused (422)
    instead of failing in the database or on its page."""
    if not isinstance(report, dict) or not isinstance(report.get("diagnoses"), list):
        return "report: expected an object with a 'diagnoses' list"
    for part in ("input", "catalogue", "tool"):
        if part in report and not isinstance(report[part], dict):
            return f"report.{part}: expected an object"
    inp = report.get("input", {})
    if not isinstance(inp.get("files", []), list) or not all(isinstance(f, dict) for f in inp.get("files", [])):
        return "report.input.files: expected a list of objects"
    if not isinstance(inp.get("facts", {}), dict):
        return "report.input.facts: expected an object"
    for i, d in enumerate(report["diagnoses"]):
        where = f"report.diagnoses[{i}]"
        if not isinstance(d, dict):
            return f"{where}: expected an object"
        if not isinstance(d.get("id"), str) or not d["id"] or len(d["id"]) > 200:
            return f"{where}.id: expected a reference id"
        if not isinstance(d.get("severity"), str):
            return f"{where}.severity: expected failure, warning or info"
        c = d.get("confidence")
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 <= c <= 1:
            return f"{where}.confidence: expected a number from 0 to 1"
        for key in _TEXT_OR_NULL:
            if d.get(key) is not None and not isinstance(d[key], str):
                return f"{where}.{key}: expected text or null"
        first = d.get("first")
        if first is not None and not (isinstance(first, dict) and _is_int(first.get("line"))):
            return f"{where}.first: expected null or an object with a line number"
        for key, texts in _LISTS.items():
            items = d.get(key, [])
            if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
                return f"{where}.{key}: expected a list of objects"
            for j, x in enumerate(items):
                bad = [t for t in texts if x.get(t) is not None and not isinstance(x[t], str)]
                if bad or key == "evidence" and not _is_int(x.get("line")):
                    return f"{where}.{key}[{j}]: malformed ({', '.join(bad) or 'line'})"
        if not isinstance(d.get("sources", []), list):
            return f"{where}.sources: expected a list"
    return None


def top_failure(report: dict) -> tuple[str | None, float | None]:
    """(id, confidence) of the first failure in a report dict, like `Report.top`."""
    for d in report.get("diagnoses", ()):
        if d.get("severity") == "failure":
            return d.get("id"), d.get("confidence")
    return None, None


def cap_log(text: str, max_bytes: int) -> str:
    """`text` if it fits, else its first quarter and last three quarters (cut at line starts)
    around one line saying how much was left out."""
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text
    head = data[: max_bytes // 4]
    head = head[: head.rfind(b"\n") + 1] or head
    tail = data[len(data) - (max_bytes - len(head)):]
    tail = tail[tail.find(b"\n") + 1:]
    omitted = len(data) - len(head) - len(tail)
    return (head.decode("utf-8", "replace") + f"[faultlens: {omitted} bytes of the log not stored]\n"
            + tail.decode("utf-8", "replace"))


def _storable(value):
    """PostgreSQL text cannot hold NUL characters; a log can."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {k: _storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v) for v in value]
    return value


def _naive_utc(when: datetime) -> datetime:
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def _create_engine(url: str) -> sa.Engine:
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(parsed, pool_pre_ping=True)
    database = parsed.database or ""
    if database and database != ":memory:":
        from pathlib import Path

        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(parsed, connect_args={"timeout": 30})

    @sa.event.listens_for(engine, "connect")
    def _pragmas(conn, _record):
        cur = conn.cursor()
        if database and database != ":memory:":
            cur.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    return engine


class IncidentStore:
    def __init__(self, url: str | None = None, *, max_log_bytes: int = MAX_LOG_BYTES):
        """Open (and create if needed) the store at `url`: a SQLAlchemy URL, a file path, or
        None for $FAULTLENS_DB or the per-user default (see paths.py)."""
        self.url = resolve_db_url(url)
        self.max_log_bytes = max_log_bytes
        try:
            self.engine = _create_engine(self.url)
            schema.metadata.create_all(self.engine)
        except (sa.exc.SQLAlchemyError, ImportError, OSError) as exc:
            shown = sa.make_url(self.url).render_as_string(hide_password=True) if "://" in self.url \
                else self.url
            raise StoreError(f"{shown}: cannot open the incident store ({str(exc).splitlines()[0]})",
                             tip="check --db / $FAULTLENS_DB; PostgreSQL URLs look like "
                                 "postgresql://user:password@host/dbname") from None

    def close(self) -> None:
        self.engine.dispose()

    def add_incident(self, report: dict, *, log: str | bytes = "", host: str = "", job: str = "",
                     source: str = "api", created_at: datetime | None = None) -> Incident:
        """Store one diagnosed log; `report` is `render.json.report_dict(...)`. Secrets in the log
        and in the report are redacted before anything is written."""
        if source not in schema.SOURCES:
            raise ValueError(f"source must be one of {', '.join(schema.SOURCES)}, not {source!r}")
        problem = report_problem(report)
        if problem:
            raise ValueError(problem)
        if isinstance(log, bytes):
            log_bytes, log = len(log), log.decode("utf-8", "replace")
        else:
            log_bytes = len(log.encode("utf-8", "replace"))
        diagnosis = _storable(redact_json(report))
        reference, confidence = top_failure(diagnosis)
        row = {
            "created_at": _naive_utc(created_at or datetime.now(timezone.utc)),
            "host": _storable(redact(host))[:TEXT_LIMIT],
            "job": _storable(redact(job))[:TEXT_LIMIT],
            "source": source,
            "reference": reference,
            "confidence": confidence,
            "diagnosis": diagnosis,
            "log": _storable(redact(cap_log(log, self.max_log_bytes))),
            "log_bytes": log_bytes,
        }
        try:
            with self.engine.begin() as conn:
                new_id = conn.execute(sa.insert(schema.incidents).values(**row)).inserted_primary_key[0]
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot store the incident ({str(exc).splitlines()[0]})") from None
        return Incident(**{**row, "id": new_id, "created_at": row["created_at"].replace(tzinfo=timezone.utc)})

    def get_incident(self, incident_id: int) -> Incident | None:
        if not 1 <= incident_id <= MAX_ID:
            return None
        t = schema.incidents
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t).where(t.c.id == incident_id)).mappings().first()
        return None if row is None else Incident(**_aware(row))

    def list_incidents(self, filters: IncidentFilter = IncidentFilter()) -> list[IncidentSummary]:
        """Newest first, without the logs and diagnoses."""
        t = schema.incidents
        query = (sa.select(*(c for c in t.c if c.name not in ("diagnosis", "log")))
                 .where(*_where(filters)).order_by(t.c.created_at.desc(), t.c.id.desc())
                 .limit(filters.limit).offset(filters.offset))
        with self.engine.connect() as conn:
            return [IncidentSummary(**_aware(row)) for row in conn.execute(query).mappings()]

    def counts(self, filters: IncidentFilter = IncidentFilter()) -> list[DayCount]:
        """Incidents per UTC day and reference among those `filters` selects (limit ignored)."""
        t = schema.incidents
        day = sa.func.date(t.c.created_at).label("day")
        query = (sa.select(day, t.c.reference, sa.func.count().label("n"))
                 .where(*_where(filters)).group_by(day, t.c.reference))
        with self.engine.connect() as conn:
            rows = [DayCount(str(r.day), r.reference, r.n) for r in conn.execute(query)]
        return sorted(rows, key=lambda c: (c.day, c.reference or ""))


def _where(f: IncidentFilter) -> list:
    t = schema.incidents
    out = [getattr(t.c, name) == value for name, value in
           (("reference", f.reference), ("host", f.host), ("job", f.job), ("source", f.source))
           if value is not None]
    if f.since is not None:
        out.append(t.c.created_at >= _naive_utc(f.since))
    if f.until is not None:
        out.append(t.c.created_at < _naive_utc(f.until))
    return out


def _aware(row) -> dict:
    data = dict(row)
    data["created_at"] = data["created_at"].replace(tzinfo=timezone.utc)
    return data
