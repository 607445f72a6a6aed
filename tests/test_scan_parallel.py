"""Issue 17: big blocks are scanned in line-aligned parts, on several threads, with a single-match
database first and only the parts that hold needed hits again: the kept hits are exactly those of
one plain scan, repeated matches cost no Python call each, and small blocks start no threads."""

from __future__ import annotations

import itertools
import random

import pytest

from faultlens.engine import scan as scan_mod
from faultlens.engine.scan import (
    BIG_BLOCK,
    FIRST_HITS,
    LAST_HITS,
    BlockScanner,
    FileScan,
    scan_file,
)
from faultlens.logs.reader import ReadStats

HIT = "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor"
TRACEBACK = ['Traceback (most recent call last):', '  File "/w/a.py", line 3, in f', "KeyError: 'k'"]


def _log(tmp_path, size: int, flood: int = 20000):
    """Noise with sparse hits, context lines and tracebacks (more than MAX_TRACEBACKS), and a
    flood of one error line repeated `flood` times in the middle."""
    rng = random.Random(7)
    lines, n = [], 0
    while n < size:
        r = rng.random()
        if r < 0.01:
            chunk = TRACEBACK
        elif r < 0.012:
            chunk = [HIT + " " + HIT]  # two matches on one line count once
        elif r < 0.014:
            chunk = ["pickled by the launcher"]  # a context signal of the demo catalogue
        elif flood and abs(n - size // 2) < 200:
            chunk = [HIT] * flood
            flood = 0
        else:
            chunk = [f"step {n} loss {rng.random():.4f} " + "x" * rng.randrange(0, 200)]
        lines += chunk
        n += sum(len(c) + 1 for c in chunk)
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _kept(fs: FileScan):
    return ({pid: (h.first, list(h.last)) for pid, h in fs.hits.items()}, fs.lines, fs.windows)


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    return _log(tmp_path_factory.mktemp("big"), 3 * BIG_BLOCK)


def test_parts_keep_the_hits_of_one_plain_scan(demo_scanner, big_log, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(scan_mod, "BIG_BLOCK", 1 << 62)  # every block in one plain scan
        plain = scan_file(demo_scanner, str(big_log), threads=1)
    pid = demo_scanner.expressions.index("indices should be either on cpu or on the same device")
    assert len(plain.hits[pid].first) == FIRST_HITS and len(plain.hits[pid].last) == LAST_HITS
    assert len(plain.windows) == scan_mod.MAX_TRACEBACKS
    for threads in (1, 2, 3):
        assert _kept(scan_file(demo_scanner, str(big_log), threads=threads)) == _kept(plain)
    # small parts: many rounds of re-scans, hits of one pattern spread over many parts
    monkeypatch.setattr(scan_mod, "PART", 4096)
    assert _kept(scan_file(demo_scanner, str(big_log), threads=2)) == _kept(plain)
    # several big blocks: first hits complete in an early block, last ones in the final block
    chunk = BIG_BLOCK + 12345
    monkeypatch.setattr(scan_mod, "BIG_BLOCK", 1 << 62)
    plain_blocks = scan_file(demo_scanner, str(big_log), threads=1, chunk_size=chunk)
    monkeypatch.setattr(scan_mod, "BIG_BLOCK", BIG_BLOCK)
    assert _kept(scan_file(demo_scanner, str(big_log), threads=2, chunk_size=chunk)) == _kept(plain_blocks)


def test_a_big_block_that_starts_inside_the_buffer(demo_scanner, big_log, monkeypatch):
    """Blocks need not start at the buffer's first byte (the reader yields several per read)."""
    data = big_log.read_bytes()[: 3 * BIG_BLOCK]
    data = data[: data.rfind(b"\n") + 1]
    junk = b"RuntimeError: indices should be either on cpu or on the same device\n" * 999

    def scan(big: int) -> FileScan:
        monkeypatch.setattr(scan_mod, "BIG_BLOCK", big)
        buf = bytearray(junk + data + junk)
        bs = BlockScanner(demo_scanner, FileScan(name="x", stats=ReadStats(name="x")), threads=2)
        bs.feed(buf, len(junk), len(junk) + len(data), 1)
        return bs.finish()

    plain = scan(1 << 62)
    assert plain.hits
    assert _kept(scan(BIG_BLOCK)) == _kept(plain)
    monkeypatch.setattr(scan_mod, "FLOOD", 10)  # the parts path too
    assert _kept(scan(BIG_BLOCK)) == _kept(plain)


def test_a_repeated_message_costs_no_python_call_per_line(demo_scanner):
    """Counted, not timed: the matches that reach Python for a block where one error line repeats
    on every line are a small fraction of the lines, and the hits kept are still exact."""
    lines = 90000
    block = bytearray((HIT + "\n").encode() * lines)
    assert len(block) >= BIG_BLOCK
    bs = BlockScanner(demo_scanner, FileScan(name="x", stats=ReadStats(name="x")), threads=2)
    bs.feed(block, 0, len(block), 1)
    assert bs.flooded
    pid = demo_scanner.expressions.index("indices should be either on cpu or on the same device")
    hits = bs.finish().hits[pid]
    assert hits.first == list(range(1, FIRST_HITS + 1))
    assert [n for n, _ in hits.last] == list(range(lines - LAST_HITS + 1, lines + 1))
    assert 0 < bs.reached < lines // 10, bs.reached


def test_spans_end_after_a_newline_and_a_long_line_stays_whole():
    buf = bytearray(b"a" * 100 + b"\n" + b"b" * 50 + b"\n" + b"c" * 30 + b"\n")
    spans = scan_mod._line_aligned_spans(buf, 0, len(buf), 40)
    assert spans[0][0] == 0 and spans[-1][1] == len(buf)
    assert all(buf[b - 1] == 10 for _, b in spans)
    assert all(b1 == a2 for (_, b1), (a2, _) in itertools.pairwise(spans))
    assert len(spans) == 3
    one_line = bytearray(b"z" * 1000)
    assert scan_mod._line_aligned_spans(one_line, 0, len(one_line), 64) == [(0, 1000)]


def test_small_blocks_start_no_threads(demo_scanner):
    block = bytearray((HIT + "\n").encode() * 100)
    bs = BlockScanner(demo_scanner, FileScan(name="x", stats=ReadStats(name="x")), threads=4)
    bs.feed(block, 0, len(block), 1)
    assert bs._scratch == {} and bs.single_db is None
    assert bs.result.hits
