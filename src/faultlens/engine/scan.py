"""One Hyperscan pass over a log's bytes: which patterns hit which lines.

Only hit lines (and a bounded window after each traceback header) are kept as bytes; everything
else stays in C. Per pattern, the first FIRST_HITS and the last LAST_HITS lines are kept and the
rest only counted, so a message repeated a million times costs a counter, not memory.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..logs.reader import CHUNK_SIZE, ReadStats, iter_blocks
from .compile import Scanner

FIRST_HITS = 64
LAST_HITS = 16
MAX_TRACEBACKS = 256
TRACEBACK_WINDOW = 400
MAX_KEPT_LINE = 8192
MAX_WINDOW_LINE = 1024


@dataclass
class PatternHits:
    first: list[int] = field(default_factory=list)
    last: deque = field(default_factory=lambda: deque(maxlen=LAST_HITS))
    """(line number, bytes) of the latest hits past the first ones; old ones fall out."""
    count: int = 0

    @property
    def lines(self) -> list[int]:
        kept = set(self.first)
        return self.first + [n for n, _ in self.last if n not in kept]


@dataclass
class FileScan:
    name: str
    stats: ReadStats
    hits: dict[int, PatternHits] = field(default_factory=dict)
    lines: dict[int, bytes] = field(default_factory=dict)
    """Raw bytes of every kept line, by line number."""
    windows: list[tuple[int, bytes, list[tuple[int, bytes]]]] = field(default_factory=list)
    """(traceback header line, its bytes, [(line, bytes) of the lines after it])."""


class BlockScanner:
    """Scans line-aligned blocks of one log as they arrive (a whole file, or a live stream)."""

    def __init__(self, scanner: Scanner, result: FileScan):
        self.result = result
        self.db = scanner.database
        self.traceback_ids = {pid for pid, own in enumerate(scanner.owners)
                              if any(k == "structure" and n == "traceback" for k, _, n in own)}
        self.open_windows: list[list] = []  # [remaining, lines, next line]
        self.events: list[tuple[int, int]] = []
        self.on_match = _collector(self.events)

    def feed(self, buf, begin: int, stop_at: int, first_line: int) -> bool:
        """Scan buf[begin:stop_at], whose first line is `first_line`; True if anything was kept."""
        result = self.result
        grew = False
        if self.open_windows:
            _extend_windows(self.open_windows, buf, begin, stop_at, first_line)
            grew = True
        events = self.events
        events.clear()
        with memoryview(buf) as view:
            self.db.scan(view[begin:stop_at], match_event_handler=self.on_match)
        if not events:
            self.open_windows[:] = [w for w in self.open_windows if w[0] > 0]
            return grew
        events.sort()
        cursor = begin
        line_no = first_line
        # the current line is buf[start:stop] (stop: its newline, or stop_at); matches arrive in
        # order of their end, so each byte is looked at a bounded number of times: linear in the
        # block however many matches one long line holds
        start = stop = -1
        seen_here: set[int] = set()
        for rel_end, pid in events:
            end = begin + rel_end
            last = max(end - 1, begin)  # the match's last byte decides its line
            if last > stop:
                lo = begin if stop < 0 else stop + 1
                nl = buf.rfind(b"\n", lo, last)
                start = lo if nl < 0 else nl + 1
                stop = buf.find(b"\n", last, stop_at)
                stop = stop_at if stop < 0 else stop
                line_no += buf.count(b"\n", cursor, start)
                cursor = start
                seen_here.clear()
            if pid in seen_here:
                continue
            seen_here.add(pid)
            hits = result.hits.get(pid)
            if hits is None:
                hits = result.hits[pid] = PatternHits()
            hits.count += 1
            # an over-long line keeps the bytes around the match, not its head
            lo = start if end - start <= MAX_KEPT_LINE else end - MAX_KEPT_LINE // 2
            raw = bytes(buf[lo:min(stop, lo + MAX_KEPT_LINE)])
            if len(hits.first) < FIRST_HITS:
                hits.first.append(line_no)
                result.lines.setdefault(line_no, raw)
            else:
                hits.last.append((line_no, raw))
            if pid in self.traceback_ids and len(result.windows) < MAX_TRACEBACKS:
                window: list[tuple[int, bytes]] = []
                result.windows.append((line_no, raw, window))
                state = [TRACEBACK_WINDOW, window, line_no + 1]
                if stop < stop_at:
                    _extend_windows([state], buf, stop + 1, stop_at, line_no + 1)
                if state[0] > 0:
                    self.open_windows.append(state)
        self.open_windows[:] = [w for w in self.open_windows if w[0] > 0]
        return True

    def finish(self) -> FileScan:
        """Make the latest hits of each pattern available as lines; call before observing."""
        for hits in self.result.hits.values():
            for n, raw in hits.last:
                self.result.lines.setdefault(n, raw)
        return self.result


def scan_file(scanner: Scanner, path, display_name: str | None = None,
              progress=None, chunk_size: int = CHUNK_SIZE) -> FileScan:
    """Scan one log. `progress(bytes_read)` is called after every chunk when given."""
    stats = ReadStats(name=display_name or (path if isinstance(path, str) else "<text>"))
    block_scanner = BlockScanner(scanner, FileScan(name=stats.name, stats=stats))
    for buf, begin, stop_at, first_line in iter_blocks(path, stats, chunk_size=chunk_size):
        if progress is not None:
            progress(stats.bytes)
        block_scanner.feed(buf, begin, stop_at, first_line)
    return block_scanner.finish()


def _collector(events: list):
    append = events.append

    def on_match(pid, _start, end, _flags, _ctx):
        append((end, pid))

    return on_match


def _extend_windows(windows: list[list], buf: bytearray, pos: int, size: int,
                    first_line: int) -> None:
    """Append the lines of buf[pos:size] to every open traceback window, as far as each needs."""
    need = max(w[0] for w in windows)
    taken: list[tuple[int, bytes]] = []
    n = first_line
    while len(taken) < need and pos < size:
        nl = buf.find(b"\n", pos, size)
        stop = size if nl < 0 else nl
        taken.append((n, bytes(buf[pos:min(stop, pos + MAX_WINDOW_LINE)])))
        n += 1
        pos = stop + 1
    for w in windows:
        k = min(w[0], len(taken))
        w[1].extend(taken[:k])
        w[0] -= k
