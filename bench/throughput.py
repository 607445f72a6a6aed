"""Throughput and peak memory on a large log, side by side with ripgrep and a Hyperscan ceiling.

faultlens runs the whole diagnosis (scan, structure, score, JSON report). The baselines search the
same file for every catalogue regex (`faultlens refs patterns`):
  rg -n -f   ripgrep printing matching lines with their numbers
  rg -c -f   ripgrep counting matching lines (no output per line: its fastest mode)
  hs single  the same patterns in one Hyperscan database with single-match flags, scanned in
             8 MiB blocks by one thread with a no-op callback: the ceiling for one core (also
             reported as "hs scan only": its scan time alone, without start-up and compilation)
All are whole processes, warm page cache; each round runs every tool once, in turn, so they share
the machine's noise; the median of --repeat rounds is reported with the spread of the ratios.
With --compressed, faultlens also reads gzip and zstd copies of the log (ripgrep is not given
those: it would call an external decompressor).

usage: python bench/throughput.py [--size-mb 1024] [--repeat 3] [--log PATH] [--compressed]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import HERE, OUT, faultlens_cmd, need_rg

_MEASURE = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(r.returncode, u.ru_maxrss, u.ru_utime + u.ru_stime)")


def run_measured(cmd: list[str]) -> tuple[float, int, int, float]:
    """Run `cmd` once: (wall seconds, peak RSS KiB, exit code, CPU seconds of all its threads)."""
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True,
                         check=False)
    wall = time.perf_counter() - start
    code, rss, cpu = res.stdout.split()
    return wall, int(rss), int(code), float(cpu)

CEILING = r"""
import sys, time, hyperscan
patterns = [p.encode() for p in open(sys.argv[1]).read().splitlines() if p]
db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
db.compile(expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns),
           flags=[hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_SINGLEMATCH] * len(patterns))
scratch = hyperscan.Scratch(db)
buf = bytearray(8 << 20)
view = memoryview(buf)
start = time.perf_counter()
with open(sys.argv[2], "rb", buffering=0) as fh:
    while n := fh.readinto(buf):
        db.scan(view[:n], match_event_handler=lambda *a: None, scratch=scratch)
print(f"{time.perf_counter() - start:.3f}", file=sys.stderr)
"""


def _compressed(log: str, kind: str) -> str:
    out = f"{log}.{kind}"
    if not Path(out).exists() or Path(out).stat().st_mtime < Path(log).stat().st_mtime:
        tmp = out + ".tmp"
        cmd = ["gzip", "-c", "-1", log] if kind == "gz" else ["zstd", "-q", "-c", "-3", log]
        with open(tmp, "wb") as fh:
            subprocess.run(cmd, stdout=fh, check=True)
        os.replace(tmp, out)
    return out


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--log", help="use this log instead of generating one")
    ap.add_argument("--compressed", action="store_true", help="also time faultlens on .gz and .zst")
    args = ap.parse_args()
    rg = need_rg()
    OUT.mkdir(exist_ok=True)
    log = args.log or str(OUT / f"noise-{args.size_mb}mb.log")
    if not args.log and not Path(log).exists():
        subprocess.run([sys.executable, str(HERE / "generate_log.py"), log, "--size-mb",
                        str(args.size_mb)], check=True)
    patterns = OUT / "patterns.txt"
    with open(patterns, "w") as fh:
        subprocess.run(faultlens_cmd() + ["refs", "patterns"], stdout=fh, check=True)
    n_patterns = len(patterns.read_text().splitlines())
    size = os.path.getsize(log)
    tools = {
        "faultlens": faultlens_cmd() + ["diagnose", "--json", log],
        "rg -n -f": [rg, "-n", "-f", str(patterns), log],
        "rg -c -f": [rg, "-c", "-f", str(patterns), log],
        "hs single": [sys.executable, "-c", CEILING, str(patterns), log],
    }
    if args.compressed:
        for kind in ("gz", "zst"):
            tools[f"faultlens .{kind}"] = faultlens_cmd() + ["diagnose", "--json", _compressed(log, kind)]
    print(f"log: {log} ({size / 2**20:.0f} MiB), {n_patterns} catalogue patterns, "
          f"{os.cpu_count()} CPUs, load average before: {_loadavg()}")
    run_measured(tools["faultlens"])  # warm the page cache and the compiled-scanner cache
    walls: dict[str, list[float]] = {name: [] for name in tools}
    walls["hs scan only"] = []
    cpus: dict[str, list[float]] = {name: [] for name in walls}
    peaks: dict[str, int] = {name: 0 for name in walls}
    for _ in range(args.repeat):
        for name, cmd in tools.items():
            wall, rss, code, cpu = run_measured(cmd)
            if code not in (0, 1):
                raise SystemExit(f"{' '.join(cmd)} exited with {code}")
            walls[name].append(wall)
            cpus[name].append(cpu)
            peaks[name] = max(peaks[name], rss)
        # the ceiling's scan alone, without interpreter start-up and pattern compilation
        res = subprocess.run(tools["hs single"], capture_output=True, text=True, check=True)
        walls["hs scan only"].append(float(res.stderr.split()[-1]))
    mb = size / 2**20
    print(f"median of {args.repeat} rounds, whole processes; load average after: {_loadavg()}")
    print(f"{'tool':<16}{'median s':>10}{'min s':>8}{'max s':>8}{'MiB/s':>8}{'CPU s':>8}"
          f"{'peak RSS MiB':>14}")
    for name, ws in walls.items():
        med = statistics.median(ws)
        peak = f"{peaks[name] / 1024:.0f}" if peaks[name] else "-"
        cpu = f"{statistics.median(cpus[name]):.2f}" if cpus[name] else "-"
        print(f"{name:<16}{med:>10.2f}{min(ws):>8.2f}{max(ws):>8.2f}{mb / med:>8.0f}{cpu:>8}{peak:>14}")
    fl = walls["faultlens"]
    for base in ("rg -n -f", "rg -c -f", "hs single", "hs scan only"):
        ratios = [b / f for b, f in zip(walls[base], fl)]
        print(f"faultlens vs {base:<10} {statistics.median(walls[base]) / statistics.median(fl):5.2f}x "
              f"faster (per round {min(ratios):.2f}x to {max(ratios):.2f}x)")
    print(f"CPU seconds, rg -c -f / faultlens: "
          f"{statistics.median(cpus['rg -c -f']) / statistics.median(cpus['faultlens']):.2f}x "
          "(less sensitive to other load than wall time; faultlens spreads its CPU over every core)")


if __name__ == "__main__":
    main()
