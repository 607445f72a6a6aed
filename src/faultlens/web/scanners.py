"""Concurrent diagnoses. A Hyperscan scanner holds scratch space that two scans must not share
at once, so each worker thread borrows its own copy of the compiled scanner from a pool."""

from __future__ import annotations

import dataclasses
import queue
import threading
from contextlib import contextmanager

from ..api import build_report
from ..engine.compile import Scanner
from ..engine.scan import scan_file
from ..model import Report


class ScannerPool:
    def __init__(self, scanner: Scanner, size: int):
        self.scanner = scanner
        self.size = max(1, size)
        self._free: queue.LifoQueue = queue.LifoQueue()
        self._made = 0
        self._lock = threading.Lock()

    @contextmanager
    def borrow(self):
        """A scanner of one's own; waits while `size` are in use."""
        try:
            scanner = self._free.get_nowait()
        except queue.Empty:
            scanner = self._new()
        try:
            yield scanner
        finally:
            self._free.put(scanner)

    def _new(self) -> Scanner:
        with self._lock:
            if self._made >= self.size:
                scanner = None
            else:
                self._made += 1
                # a shallow copy: the catalogue is shared, the database and scratch are not
                scanner = dataclasses.replace(self.scanner, _db=None, _re={})
        return scanner if scanner is not None else self._free.get()

    def diagnose(self, data: bytes, name: str) -> Report:
        with self.borrow() as scanner:
            return build_report(scanner, [scan_file(scanner, data, name)])
