"""Issue 17: big blocks are scanned in line-aligned parts on several threads, with the same result
as one scan; small blocks start no threads."""

from __future__ import annotations

import random

from faultlens.engine import scan as scan_mod
from faultlens.engine.scan import PARALLEL_MIN, BlockScanner, FileScan, scan_file
from faultlens.logs.reader import ReadStats

HIT = "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor"
TRACEBACK = ['Traceback (most recent call last):', '  File "/w/a.py", line 3, in f', "KeyError: 'k'"]


def _log(tmp_path, size: int):
    rng = random.Random(7)
    lines, n = [], 0
    while n < size:
        r = rng.random()
        if r < 0.002:
            chunk = TRACEBACK
        elif r < 0.01:
            chunk = [HIT]
        elif r < 0.012:
            chunk = ["pickled by the launcher"]  # a context signal of the demo catalogue
        else:
            chunk = [f"step {n} loss {rng.random():.4f} " + "x" * rng.randrange(0, 200)]
        lines += chunk
        n += sum(len(c) + 1 for c in chunk)
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _snapshot(fs: FileScan):
    return ({pid: (h.first, list(h.last), h.count) for pid, h in fs.hits.items()},
            fs.lines, fs.windows)


def test_parallel_scan_matches_one_thread(demo_scanner, tmp_path):
    path = _log(tmp_path, 3 * PARALLEL_MIN)
    one = scan_file(demo_scanner, str(path), threads=1)
    assert one.hits and one.windows, "the log must exercise hits and traceback windows"
    for threads in (2, 3, 5):
        assert _snapshot(scan_file(demo_scanner, str(path), threads=threads)) == _snapshot(one)
    # blocks smaller than a file: several blocks, each split
    small_blocks = scan_file(demo_scanner, str(path), threads=2, chunk_size=PARALLEL_MIN + 4096)
    assert _snapshot(small_blocks) == _snapshot(scan_file(demo_scanner, str(path), threads=1,
                                                          chunk_size=PARALLEL_MIN + 4096))


def test_parts_end_after_a_newline_and_a_long_line_stays_whole():
    buf = bytearray(b"a" * 100 + b"\n" + b"b" * 50 + b"\n" + b"c" * 30 + b"\n")
    parts = scan_mod._line_aligned_parts(buf, 0, len(buf), 3)
    assert parts[0][0] == 0 and parts[-1][1] == len(buf)
    assert all(a < b for a, b in parts)
    assert all(buf[b - 1] == 10 for _, b in parts)
    assert [(a2 == b1) for (_, b1), (a2, _) in zip(parts, parts[1:])] == [True] * (len(parts) - 1)
    one_line = bytearray(b"z" * 1000)
    assert scan_mod._line_aligned_parts(one_line, 0, len(one_line), 4) == [(0, 1000)]


def test_small_blocks_start_no_threads(demo_scanner):
    block = bytearray((HIT + "\n").encode() * 100)
    bs = BlockScanner(demo_scanner, FileScan(name="x", stats=ReadStats(name="x")), threads=4)
    bs.feed(block, 0, len(block), 1)
    assert bs._scratch is None
    assert bs.result.hits
