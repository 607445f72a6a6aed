"""Diagnose one job into a plain result row. Runs in a pool process or on a Dask worker.

`scan_job` is pure and idempotent: it only reads the job's files and returns a row, so a task
rerun after a lost worker gives the same row. It never raises: a job that cannot be read gets a
row whose `error` says why, and one unreadable file of a multi-file job becomes a warning.
"""

from __future__ import annotations

from ..api import build_report
from ..engine.compile import Scanner, load_scanner
from ..engine.scan import BlockScanner, FileScan
from ..errors import InputError
from ..logs.reader import ReadStats, iter_blocks
from ..redact import redact
from . import clues, remote
from .jobs import Job
from .row import STORE_LOG_BYTES, STORE_TOP, is_explained, new_row

MAX_JOB_ERROR_LINES = 64

_scanners: dict[str | None, Scanner] = {}


def scan_job(job: Job, catalogue: str | None = None, for_store: bool = False) -> dict:
    """The row of one job (see row.FIELDS; with `for_store`, also row.STORE_FIELDS). Never
    raises."""
    try:
        return _scan_job(job, catalogue, for_store)
    except Exception as exc:  # one job must not stop a fleet scan, whatever went wrong
        row = new_row(job.name, job.files)
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row


def _scanner(catalogue: str | None) -> Scanner:
    """The compiled catalogue, loaded once per process (from faultlens' disk cache)."""
    if catalogue not in _scanners:
        _scanners[catalogue] = load_scanner(catalogue)
    return _scanners[catalogue]


def _scan_job(job: Job, catalogue: str | None, for_store: bool) -> dict:
    scanner = _scanner(catalogue)
    rules = clues.load_rules()
    row = new_row(job.name, job.files)
    row["catalogue"] = scanner.catalogue.digest
    scans: list[FileScan] = []
    ends: dict[str, str] = {}
    for path in job.files:
        try:
            scan, text = _read(scanner, path)
        except InputError as exc:
            row["warnings"].append(str(exc))
            continue
        scans.append(scan)
        ends[path] = text
    if not scans:
        row["error"] = "; ".join(row["warnings"])
        row["warnings"] = []
        return row
    report = build_report(scanner, scans)
    row["bytes"] = sum(f.bytes for f in report.inputs)
    row["warnings"] += [w for f in report.inputs for w in f.warnings]
    row["day"] = _day(ends, rules)
    top = report.top
    first_file = None
    if top is not None:
        first = top.first or (top.evidence[0] if top.evidence else None)
        row.update(diagnosis=top.id, title=top.title, category=top.category,
                   confidence=top.confidence)
        if first is not None:
            first_file = first.file
            row.update(process=first.process or None, evidence_file=first.file,
                       evidence_line=first.line, evidence=redact(first.text))
    row["host"] = _host(job, ends, first_file, rules)
    if not is_explained(row):
        row["error_lines"] = _error_lines(report, ends, rules)
    if for_store:
        from ..render.json import report_dict

        text = ends.get(first_file) or next(iter(ends.values()))
        row["report"] = report_dict(report, STORE_TOP)
        row["log"] = _last_lines(text, STORE_LOG_BYTES)
    return row


def _read(scanner: Scanner, path: str) -> tuple[FileScan, str]:
    """Scan one file (or URL) and keep its ends; the same steps as engine.scan.scan_file."""
    if remote.is_url(path):
        with remote.local_copy(path) as source:
            return _scan_source(scanner, source, path)
    return _scan_source(scanner, path, path)


def _scan_source(scanner: Scanner, source, name: str) -> tuple[FileScan, str]:
    stats = ReadStats(name=name)
    blocks = BlockScanner(scanner, FileScan(name=name, stats=stats))
    ends = clues.LogEnds()
    for buf, begin, end, first_line in iter_blocks(source, stats):
        blocks.feed(buf, begin, end, first_line)
        ends.feed(buf, begin, end)
    return blocks.finish(), ends.text()


def _host(job: Job, ends: dict[str, str], first_file: str | None, rules: clues.Rules) -> str | None:
    """The pattern's host, else the one the log names: in the file of the first failure first."""
    named = job.host_of(first_file)
    if named:
        return named
    order = ([first_file] if first_file in ends else []) + [f for f in ends if f != first_file]
    for f in order:
        host = clues.find_host(ends[f], rules)
        if host:
            return host
    return None


def _day(ends: dict[str, str], rules: clues.Rules) -> str | None:
    """The latest day the logs print, else the latest modification day of the files."""
    days = [d for d in (clues.find_day(text, rules) for text in ends.values()) if d]
    if not days:
        days = [d for d in (remote.modified_day(f) if remote.is_url(f) else
                            remote.local_modified_day(f) for f in ends) if d]
    return max(days, default=None)


def _error_lines(report, ends: dict[str, str], rules: clues.Rules) -> list[str]:
    """Final exception lines of the rebuilt tracebacks, then the error lines of each file's ends."""
    lines = [redact(t.final_exception[:clues.MAX_LINE_CHARS]) for t in report.tracebacks]
    for text in ends.values():
        lines += clues.error_lines(text, rules)
    return list(dict.fromkeys(line for line in lines if line.strip()))[:MAX_JOB_ERROR_LINES]


def _last_lines(text: str, limit: int) -> str:
    """The whole lines within the last `limit` bytes of `text`."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    tail = data[-limit:]
    return tail[tail.find(b"\n") + 1:].decode("utf-8", "replace")
