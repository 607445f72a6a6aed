"""Origins look-up latency: 50 failure lines (the error evidence lines of corpus/ logs) looked up
in the shipped origins index, warm, against a baseline measured in the same run: the same lines
scanned by the catalogue's compiled Hyperscan database (what diagnose already pays per line).

    PYTHONPATH=src python bench/origins_lookup.py [--repeat 20]

Budget (issue 15): 50 lines in under 50 ms.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from faultlens.engine.compile import load_scanner
from faultlens.origins import default_index

ERRORISH = re.compile(r"Error|error|failed|FAILED|Exception|WARN|assert", re.IGNORECASE)


def failure_lines(n: int) -> list[str]:
    lines: list[str] = []
    for log in sorted((HERE.parent / "corpus").glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if ERRORISH.search(line) and 20 < len(line) < 400 and line not in lines:
                lines.append(line)
                break
        if len(lines) >= n:
            break
    return lines


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds (the machine may be shared: CPU time is the steadier one)."""
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--lines", type=int, default=50)
    a = ap.parse_args()
    lines = failure_lines(a.lines)
    index = default_index()
    index.lookup(lines[:1])  # open, unpack and page in once
    db = load_scanner().database

    def scan_lines():
        for line in lines:
            db.scan(line.encode(), match_event_handler=lambda *x: None)

    base = timed(scan_lines, a.repeat)
    look = timed(lambda: index.lookup(lines), a.repeat)
    found = sum(bool(c) for c in index.lookup(lines))
    print(f"{len(lines)} failure lines from corpus/, {found} with an origin")
    print(f"catalogue Hyperscan scan of the lines (baseline): wall {base[0] * 1000:.2f} ms, "
          f"CPU {base[1] * 1000:.2f} ms")
    print(f"origins look-up: wall {look[0] * 1000:.2f} ms, CPU {look[1] * 1000:.2f} ms "
          f"({look[1] / max(base[1], 1e-6):.0f}x baseline CPU; budget 50 ms for 50 lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
