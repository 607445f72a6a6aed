"""Fleet rows rebuilt from stored incidents, so `faultlens serve` shows the same aggregates as
`faultlens scan` (jobs per reference, per host, per day, and the unexplained error templates)."""

from __future__ import annotations

from ..logs.prefix import parse
from ..logs.tracebacks import is_exception_line
from ..redact import redact
from . import clues
from .row import is_explained, new_row

MAX_INCIDENTS = 5000


def rows_from_store(store, filters) -> list[dict]:
    """One scan-style row per incident; error lines are re-read from the stored (redacted) log of
    the incidents without a confident diagnosis."""
    rules = clues.load_rules()
    rows = []
    for inc in store.list_incidents(filters)[:MAX_INCIDENTS]:
        row = new_row(inc.job or f"incident {inc.id}", [])
        row.update(diagnosis=inc.reference, confidence=inc.confidence, host=inc.host or None,
                   day=inc.created_at.date().isoformat())
        if inc.reference:
            row["title"] = inc.reference
        if not is_explained(row):
            full = store.get_incident(inc.id)
            row["error_lines"] = error_lines(full.log or "", rules) if full else []
        rows.append(row)
    return rows


def error_lines(log: str, rules) -> list[str]:
    """Exception lines (`Name: message`) and the rules' error lines of a stored log, as the scan
    worker collects final exception lines and error lines of each file's ends."""
    found = [redact(msg.strip()[:clues.MAX_LINE_CHARS]) for msg in (parse(ln)[1] for ln in log.splitlines())
             if is_exception_line(msg.strip())]
    found += clues.error_lines(log, rules)
    return list(dict.fromkeys(x for x in found if x))[:clues.MAX_ERROR_LINES]
