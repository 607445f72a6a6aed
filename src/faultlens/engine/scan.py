"""One Hyperscan pass over a log's bytes: which patterns hit which lines.

Only hit lines (and a bounded window after each traceback header) are kept as bytes; everything
else stays in C. Per pattern, the first FIRST_HITS and the last LAST_HITS lines are kept and the
rest only counted, so a message repeated a million times costs a counter, not memory.
"""

from __future__ import annotations

import itertools
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
BIG_BLOCK = 2 << 20
"""A block at least this big is scanned in parts, on every core; smaller ones (small logs, live
streams) in one scan in the calling thread, so they start no threads."""
PART = 64 << 10
"""Size of the parts of a flooded big block (each ends at a line end)."""
FLOOD = 2048
"""Matches in one thread's share of a big block after which its plain scan stops: the block is
flooded with repeated hits and is scanned in parts instead."""


@dataclass
class PatternHits:
    first: list[int] = field(default_factory=list)
    last: deque = field(default_factory=lambda: deque(maxlen=LAST_HITS))
    """(line number, bytes) of the latest hits past the first ones; old ones fall out."""
    count: int = 0
    """Hit lines looked at: in a big block, the lines of parts that need not be looked at (a
    pattern's hits between its first and its last ones) are not counted."""

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
    paste: object = None
    """A `logs.paste.Normalised` when a cleaned copy of a pasted log was scanned: it maps the
    scanned lines back to the original line numbers."""


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
        self.scanner = scanner
        self.single_db = None  # loaded with the first big block
        self.threads = threads if threads is not None else _cpus()
        self._scratch: dict[int, list] = {}  # per database: one scratch per thread
        self.flooded = False
        self.reached = 0
        """Matches of big blocks that reached Python (a figure for tests and profiles)."""

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
            if stop_at - begin >= BIG_BLOCK and self.scanner.single_db_bytes:
                self._scan_big(buf, view, begin, stop_at)
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

    def _scan_big(self, buf, view, begin: int, stop_at: int) -> None:
        """Put in self.events the matches (end offset from `begin`, pattern id) one scan of
        buf[begin:stop_at] with `database` would report, less those no caller keeps: the hits of a repeated pattern between its first
        FIRST_HITS and its last LAST_HITS lines.

        First the block is cut into one line-aligned share per thread, each scanned with
        `database` (Hyperscan releases the GIL while it scans). A share with more than FLOOD
        matches stops early: then the block is cut into line-aligned parts of about PART bytes,
        every part is scanned with the single-match database (at most one Python call per
        pattern per part: a message repeated on every line costs no call per line), and only the
        parts that hold a pattern's still-needed first hits, or its last ones in the block, are
        scanned again with `database` to get each hit line."""
        every_hit, events = self.every_hit, self.events
        self.flooded = False
        shares = _line_aligned_spans(buf, begin, stop_at, -(-(stop_at - begin) // self.threads))
        found = self._scan_parts(self.db, view, shares, range(len(shares)), limit=FLOOD)
        if not self.flooded:
            first_seen: set[int] = set()
            for share in found:  # single-match patterns: the first hit per block, not per share
                share.sort()
                for end, pid in share:
                    if not every_hit[pid]:
                        if pid in first_seen:
                            continue
                        first_seen.add(pid)
                    events.append((end - begin, pid))
            return
        if self.single_db is None:
            self.single_db = self.scanner.single_database
        parts = _line_aligned_spans(buf, begin, stop_at, PART)
        found = self._scan_parts(self.single_db, view, parts, range(len(parts)))
        first_of: dict[int, tuple[int, int]] = {}
        parts_of: dict[int, list[int]] = {}
        for i, part in enumerate(found):
            for end, pid in part:
                if every_hit[pid]:
                    parts_of.setdefault(pid, []).append(i)
                elif pid not in first_of:
                    first_of[pid] = (end, pid)
        events.extend((end - begin, pid) for end, pid in first_of.values())
        if not parts_of:
            return
        hits, windows = self.result.hits, self.result.windows
        # per pattern: [lines still wanted from the front, next part from the front,
        #               lines still wanted from the back, next part from the back]
        want: dict[int, list[int]] = {}
        for pid, where in parts_of.items():
            front = FIRST_HITS - len(hits[pid].first) if pid in hits else FIRST_HITS
            if pid in self.traceback_ids:
                front = max(front, MAX_TRACEBACKS - len(windows))
            want[pid] = [front, 0, LAST_HITS, len(where) - 1]
        again: dict[int, list[tuple[int, int]]] = {}
        lines_in: dict[int, dict[int, int]] = {}
        while True:
            needed: set[int] = set()
            for pid, w in want.items():
                where = parts_of[pid]
                while w[0] > 0 and w[1] < len(where):  # from the front
                    i = where[w[1]]
                    if i not in again:
                        needed.add(i)
                        break
                    w[0] -= lines_in[i].get(pid, 0)
                    w[1] += 1
                while w[2] > 0 and w[3] >= w[1]:  # from the back, down to where the front stopped
                    i = where[w[3]]
                    if i not in again:
                        needed.add(i)
                        break
                    w[2] -= lines_in[i].get(pid, 0)
                    w[3] -= 1
            if not needed:
                break
            order = sorted(needed)
            for i, part in zip(order, self._scan_parts(self.db, view, parts, order)):
                part = [ev for ev in part if every_hit[ev[1]]]
                part.sort()
                again[i] = part
                lines_in[i] = _lines_per_pattern(buf, parts[i], part)
        for i in sorted(again):
            events.extend((end - begin, pid) for end, pid in again[i])

    def _scan_parts(self, db, view, parts: list[tuple[int, int]], which,
                    limit: int = 0) -> list[list[tuple[int, int]]]:
        """Scan the parts numbered `which` with `db`, on up to self.threads threads; for each,
        its matches as (end offset in the buffer, pattern id). With a `limit`, a part that has
        more matches stops there, and so do the others, and self.flooded is set."""
        import hyperscan

        which = list(which)
        threads = max(1, min(self.threads, len(which)))
        scratch = self._scratch.get(id(db))
        if scratch is None or len(scratch) < threads:
            scratch = self._scratch[id(db)] = [hyperscan.Scratch(db) for _ in range(threads)]
        out: list[list[tuple[int, int]]] = [[] for _ in which]

        def run(t: int) -> None:
            found: list = []
            append = found.append

            def on_match(pid, _start, end, _flags, shift):
                append((end + shift, pid))
                return limit and (len(found) > limit or self.flooded)  # true: stop scanning

            for k in range(t, len(which), threads):
                lo, hi = parts[which[k]]
                found.clear()
                try:
                    db.scan(view[lo:hi], match_event_handler=on_match, context=lo, scratch=scratch[t])
                except hyperscan.ScanTerminated:
                    self.flooded = True
                    return
                finally:
                    self.reached += len(found)
                out[k] = list(found)

        futures = [_pool(self.threads).submit(run, t) for t in range(1, threads)]
        run(0)
        for f in futures:
            f.result()
        return out

    def finish(self) -> FileScan:
        """Make the latest hits of each pattern available as lines; call before observing."""
        for hits in self.result.hits.values():
            for n, raw in hits.last:
                self.result.lines.setdefault(n, raw)
        return self.result


def scan_file(scanner: Scanner, path, display_name: str | None = None,
              progress=None, chunk_size: int = CHUNK_SIZE, threads: int | None = None) -> FileScan:
    """Scan one log. `progress(bytes_read)` is called after every chunk when given; `threads`
    (default: every core) scan the parts of blocks of BIG_BLOCK bytes or more."""
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


def _line_aligned_spans(buf, begin: int, stop_at: int, size: int) -> list[tuple[int, int]]:
    """Spans of about `size` bytes covering buf[begin:stop_at], each ending after a newline (a
    line longer than `size` stays in one span)."""
    cuts = [begin]
    while stop_at - cuts[-1] > size:
        nl = buf.find(b"\n", cuts[-1] + size - 1, stop_at)
        if nl < 0 or nl + 1 >= stop_at:
            break
        cuts.append(nl + 1)
    cuts.append(stop_at)
    return list(itertools.pairwise(cuts))


def _lines_per_pattern(buf, span: tuple[int, int], events: list[tuple[int, int]]) -> dict[int, int]:
    """How many lines of buf[span] each pattern hits, from its sorted matches (by end): linear in
    the span, whatever the number of matches on one line."""
    lo, hi = span
    count: dict[int, int] = {}
    seen: set[int] = set()
    stop = -1
    for end, pid in events:
        last = max(end - 1, lo)
        if last > stop:  # a later line: its end is the next newline (none between the lines)
            stop = buf.find(b"\n", last, hi)
            stop = hi if stop < 0 else stop
            seen.clear()
        if pid not in seen:
            seen.add(pid)
            count[pid] = count.get(pid, 0) + 1
    return count


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
