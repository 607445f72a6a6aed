"""Live diagnosis of growing logs: bytes in, alerts out, the moment a fingerprint completes.

`LiveSession` is fed raw bytes per stream (a followed file, a pipe, a child's stdout); it keeps
one incremental scanner per stream (bounded memory: capped hits, bounded traceback windows, a
partial line of at most MAX_LINE bytes) and re-ranks only when new evidence was kept. Each
reference alerts once per session: an incident is reported when it starts, not on every line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .api import build_report
from .engine.compile import Scanner
from .engine.scan import BlockScanner, FileScan
from .logs.reader import MAX_LINE, ReadStats, first_overlong
from .model import Diagnosis, Report

ALERT_SEVERITIES = ("failure", "warning")


@dataclass(frozen=True)
class Alert:
    diagnosis: Diagnosis
    raised_at: float
    """time.time() when the fingerprint completed."""


@dataclass
class _Stream:
    name: str
    scanner: BlockScanner
    pending: bytearray = field(default_factory=bytearray)
    line_no: int = 1


class LiveSession:
    def __init__(self, scanner: Scanner, env: dict | None = None, min_interval: float = 0.05):
        self.scanner = scanner
        self.env = env or {}
        self.streams: dict[str, _Stream] = {}
        self.order: list[str] = []
        self.alerted: set[str] = set()
        self.dirty = False
        self.min_interval = min_interval
        self._last_eval = 0.0

    def _stream(self, name: str) -> _Stream:
        st = self.streams.get(name)
        if st is None:
            stats = ReadStats(name=name)
            st = self.streams[name] = _Stream(name, BlockScanner(self.scanner, FileScan(name, stats)))
            self.order.append(name)
        return st

    def restart(self, name: str) -> str:
        """The stream was truncated or rotated: keep what was seen, continue as a new segment."""
        n = sum(1 for s in self.order if s == name or s.startswith(name + "#")) + 1
        new = f"{name}#{n}"
        self._stream(new)
        return new

    def feed(self, name: str, data: bytes) -> None:
        """Add bytes to a stream; complete lines are scanned now, a partial line waits."""
        st = self._stream(name)
        st.scanner.result.stats.bytes += len(data)
        st.pending += data
        while True:
            cut = st.pending.rfind(b"\n") + 1
            if cut == 0 and len(st.pending) >= MAX_LINE:
                cut = MAX_LINE
            if not cut:
                return
            long_at = first_overlong(st.pending, 0, cut, MAX_LINE)
            if long_at >= 0:  # a line over MAX_LINE inside the data is split too
                cut = long_at
                st.scanner.result.stats.split_lines += 1
            if st.scanner.feed(st.pending, 0, cut, st.line_no):
                self.dirty = True
            st.line_no += st.pending.count(b"\n", 0, cut)
            del st.pending[:cut]

    def flush(self, name: str) -> None:
        """End of a stream: scan its last, unterminated line."""
        st = self.streams.get(name)
        if st and st.pending:
            if st.scanner.feed(st.pending, 0, len(st.pending), st.line_no):
                self.dirty = True
            st.line_no += 1
            st.pending.clear()

    def report(self, origins: bool = True) -> Report:
        """The report so far; alerts skip the origins look-up (the final report has it)."""
        scans = []
        for name in self.order:
            st = self.streams[name]
            st.scanner.finish()
            st.scanner.result.stats.lines = st.line_no - 1
            scans.append(st.scanner.result)
        return build_report(self.scanner, scans, self.env, origins=origins)

    def poll_alerts(self, force: bool = False) -> list[Alert]:
        """New alerts since the last call (re-ranks at most every `min_interval` seconds)."""
        now = time.monotonic()
        if not self.dirty or (not force and now - self._last_eval < self.min_interval):
            return []
        self.dirty = False
        self._last_eval = now
        alerts = []
        for d in self.report(origins=False).diagnoses:
            if d.severity in ALERT_SEVERITIES and d.id not in self.alerted:
                self.alerted.add(d.id)
                alerts.append(Alert(d, time.time()))
        return alerts
