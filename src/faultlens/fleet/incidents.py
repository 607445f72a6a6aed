"""--db: record each scanned job as an incident in the incident store (faultlens.store), the
one `faultlens serve` shows.

Rows are written here, in the process that runs the scan, as they arrive: a task that a Dask
worker ran twice (after a lost worker) still yields one row, hence one incident. Unreadable jobs
are not incidents (nothing was diagnosed); their reasons are in the --out rows and the report.
The incident's time is the job's day (00:00 UTC) when the log dates it, so the store's per-day
counts agree with the scan's; otherwise the time of the scan.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..errors import UsageError


class IncidentWriter:
    def __init__(self, url: str):
        try:
            from ..store.incidents import IncidentStore
        except ImportError as exc:
            raise UsageError(f"--db needs the incident store's packages ({exc.name} is missing)",
                             tip="pip install 'faultlens[web]'") from None
        self.store = IncidentStore(url)
        self.added = 0

    def write(self, row: dict) -> None:
        if row["error"] or row.get("report") is None:
            return
        when = (datetime.fromisoformat(row["day"]).replace(tzinfo=timezone.utc)
                if row["day"] else None)
        self.store.add_incident(row["report"], log=row["log"] or "", host=row["host"] or "",
                                job=row["job"], source="scan", created_at=when)
        self.added += 1

    def close(self) -> None:
        self.store.close()
