"""One Hyperscan pass over a log's bytes: which patterns hit which lines.

Only hit lines (and a bounded window after each traceback header) are kept as bytes; everything
else stays in C. Per pattern, the first FIRST_HITS and the last LAST_HITS lines are kept and the
rest only counted, so a message repeated a million times costs a counter, not memory.
"""

from __future__ import annotations

import os
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
PARALLEL_MIN = 2 << 20
"""A block at least this big is scanned in parts on every core; smaller ones (small logs, live
streams) in the calling thread, so they start no threads."""


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

    def __init__(self, scanner: Scanner, result: FileScan, threads: int | None = None):
        self.result = result
        self.db = scanner.database
        self.every_hit = scanner.every_hit
        self.traceback_ids = {pid for pid, own in enumerate(scanner.owners)
                              if any(k == "structure" and n == "traceback" for k, _, n in own)}
        self.open_windows: list[list] = []  # [remaining, lines, next line]
        self.events: list[tuple[int, int]] = []
        self.on_match = _collector(self.events)
        self.threads = threads if threads is not None else _cpus()
        self._scratch = None  # one per part, made when a block is first big enough to split

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
            if self.threads > 1 and stop_at - begin >= PARALLEL_MIN:
                self._scan_parallel(buf, view, begin, stop_at)
            else:
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

    def _scan_parallel(self, buf, view, begin: int, stop_at: int) -> None:
        """Scan line-aligned parts of the block on several threads (Hyperscan releases the GIL
        while it scans), each with its own scratch; merge their matches into self.events as one
        scan of the whole block would report them."""
        parts = _line_aligned_parts(buf, begin, stop_at, self.threads)
        if len(parts) == 1:
            self.db.scan(view[begin:stop_at], match_event_handler=self.on_match)
            return
        import hyperscan

        if self._scratch is None or len(self._scratch) < len(parts):
            self._scratch = [hyperscan.Scratch(self.db) for _ in parts]
        found: list[list[tuple[int, int]]] = [[] for _ in parts]

        def scan_part(i: int) -> None:
            lo, hi = parts[i]
            self.db.scan(view[lo:hi], match_event_handler=_collector(found[i]),
                         scratch=self._scratch[i])

        futures = [_pool(self.threads).submit(scan_part, i) for i in range(1, len(parts))]
        scan_part(0)
        for f in futures:
            f.result()
        # single-match patterns report their first hit per block, not per part
        every_hit, first_seen, events = self.every_hit, set(), self.events
        for (lo, _), part in zip(parts, found):
            shift = lo - begin
            part.sort()
            for end, pid in part:
                if not every_hit[pid]:
                    if pid in first_seen:
                        continue
                    first_seen.add(pid)
                events.append((end + shift, pid))

    def finish(self) -> FileScan:
        """Make the latest hits of each pattern available as lines; call before observing."""
        for hits in self.result.hits.values():
            for n, raw in hits.last:
                self.result.lines.setdefault(n, raw)
        return self.result


def scan_file(scanner: Scanner, path, display_name: str | None = None,
              progress=None, chunk_size: int = CHUNK_SIZE, threads: int | None = None) -> FileScan:
    """Scan one log. `progress(bytes_read)` is called after every chunk when given; `threads`
    (default: every core) scan the parts of blocks of PARALLEL_MIN bytes or more."""
    stats = ReadStats(name=display_name or (path if isinstance(path, str) else "<text>"))
    block_scanner = BlockScanner(scanner, FileScan(name=stats.name, stats=stats), threads)
    for buf, begin, stop_at, first_line in iter_blocks(path, stats, chunk_size=chunk_size):
        if progress is not None:
            progress(stats.bytes)
        block_scanner.feed(buf, begin, stop_at, first_line)
    return block_scanner.finish()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_POOL = None


def _pool(threads: int):
    """Worker threads for the parts of big blocks, started only when a block is big enough."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=max(1, threads - 1), thread_name_prefix="faultlens-scan")
    return _POOL


def _line_aligned_parts(buf, begin: int, stop_at: int, n: int) -> list[tuple[int, int]]:
    """Up to n spans of about equal size covering buf[begin:stop_at], each ending after a newline
    (a block that is one long line stays whole)."""
    cuts = [begin]
    for i in range(1, n):
        target = begin + (stop_at - begin) * i // n
        if target < cuts[-1]:
            continue
        nl = buf.find(b"\n", target, stop_at)
        if nl < 0 or nl + 1 >= stop_at:
            break
        cuts.append(nl + 1)
    cuts.append(stop_at)
    return list(zip(cuts, cuts[1:]))


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
