"""Shared helpers for the benchmark scripts: timing whole processes and their peak memory."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

# the wrapper times the child itself: its own interpreter start is not part of the figure
_MEASURE = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "t = time.perf_counter() - t\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, t)")


def run_measured(cmd: list[str], env=None) -> tuple[float, int, int]:
    """Run `cmd` once; return (wall seconds, peak RSS in KiB, exit code). Output is discarded."""
    res = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, env=env)
    code, rss, wall = res.stdout.split()
    return float(wall), int(rss), int(code)


def median_run(cmd: list[str], repeat: int, env=None) -> tuple[float, int]:
    walls, peak = [], 0
    for _ in range(repeat):
        wall, rss, code = run_measured(cmd, env)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} exited with {code}")
        walls.append(wall)
        peak = max(peak, rss)
    return statistics.median(walls), peak


def faultlens_cmd() -> list[str]:
    exe = shutil.which("faultlens")
    return [exe] if exe else [sys.executable, "-m", "faultlens"]


def need_rg() -> str:
    rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep (rg) is needed as the baseline: apt-get install ripgrep, or "
                         "cargo install ripgrep")
    return rg
