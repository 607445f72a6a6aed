"""The result row of one scanned job: plain values only, so it travels between processes and
machines cheaply and lands unchanged in JSON Lines, CSV, Parquet or the incident store."""

from __future__ import annotations

CONFIDENT = 0.4
"""A job is explained when its top failure diagnosis has at least this confidence. A reference
whose fingerprint is one matched error line scores 0.45; the diagnoses below 0.4 are consequences
of something the log does not show, or tied with an equally good explanation."""

FIELDS: dict[str, str] = {
    "job": "str",            # the job's name (its path, folder, or --job-pattern's `job` group)
    "files": "list",         # the job's files, sorted
    "diagnosis": "str",      # id of the top failure diagnosis, or None
    "title": "str",
    "category": "str",
    "confidence": "float",
    "process": "str",        # the first failing rank or process, e.g. "rank3", when the log says
    "host": "str",           # the node, from --job-pattern's `host` group or the log itself
    "day": "str",            # YYYY-MM-DD of the failure: the log's last dated line, else mtime
    "evidence_file": "str",
    "evidence_line": "int",
    "evidence": "str",       # the diagnosis' first evidence line, secrets redacted
    "error": "str",          # why the job could not be read at all; None when it was
    "warnings": "list",      # files of the job that could not be read, and reader warnings
    "error_lines": "list",   # for jobs without a confident diagnosis: their error lines
    "catalogue": "str",      # digest of the catalogue the worker used
    "bytes": "int",          # bytes read (after decompression)
}

STORE_FIELDS = ("report", "log")
"""Added by the worker only when the scan writes to the incident store (--db): the report in the
JSON contract (top STORE_TOP diagnoses) and the log's last STORE_LOG_BYTES. Never written to
the --out file."""
STORE_TOP = 5
STORE_LOG_BYTES = 64 << 10


def new_row(job: str, files) -> dict:
    """A row with every field present: None, or an empty list for list fields."""
    row = {name: ([] if kind == "list" else None) for name, kind in FIELDS.items()}
    row["job"] = job
    row["files"] = list(files)
    return row


def is_explained(row: dict) -> bool:
    """Whether the job has a confident diagnosis (see CONFIDENT)."""
    return row["diagnosis"] is not None and (row["confidence"] or 0.0) >= CONFIDENT
