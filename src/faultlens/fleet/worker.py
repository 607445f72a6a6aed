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
from .row import is_explained, new_row

MAX_JOB_ERROR_LINES = 64

_scanners: dict[str | None, Scanner] = {}


def scan_job(job: Job, catalogue: str | None = None) -> dict:
    """The row of one job (see row.FIELDS). Never raises."""
    try:
        return _scan_job(job, catalogue)
    except Exception as exc:  # one job must not stop a fleet scan, whatever went wrong
        row = new_row(job.name, job.files)
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row


def _scanner(catalogue: str | None) -> Scanner:
    """The compiled catalogue, loaded once per process (from faultlens' disk cache)."""
    if catalogue not in _scanners:
        _scanners[catalogue] = load_scanner(catalogue)
    return _scanners[catalogue]


def _scan_job(job: Job, catalogue: str | None) -> dict:
    scanner = _scanner(catalogue)
    rules = clues.load_rules()
    row = new_row(job.name, job.files)
    row["catalogue"] = scanner.catalogue.digest
    scans: list[FileScan] = []
    ends: dict[str, str] = {}
    days: list[str] = []
    for path in job.files:
        try:
            scan, text = _read(scanner, path)
        except InputError as exc:
            row["warnings"].append(str(exc))
            continue
        scans.append(scan)
        ends[path] = text
        day = clues.find_day(text, rules) or (
            remote.modified_day(path) if remote.is_url(path) else remote.local_modified_day(path))
        if day:
            days.append(day)
    if not scans:
        row["error"] = "; ".join(row["warnings"])
        row["warnings"] = []
        return row
    report = build_report(scanner, scans)
    row["bytes"] = sum(f.bytes for f in report.inputs)
    row["warnings"] += [w for f in report.inputs for w in f.warnings]
    row["day"] = max(days) if days else None
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


def _error_lines(report, ends: dict[str, str], rules: clues.Rules) -> list[str]:
    """Final exception lines of the rebuilt tracebacks, then the error lines of each file's ends."""
    lines = [redact(t.final_exception[:clues.MAX_LINE_CHARS]) for t in report.tracebacks]
    for text in ends.values():
        lines += clues.error_lines(text, rules)
    return list(dict.fromkeys(line for line in lines if line.strip()))[:MAX_JOB_ERROR_LINES]
