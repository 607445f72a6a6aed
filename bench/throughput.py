"""Throughput and peak memory on a large log, side by side with ripgrep on the same patterns.

faultlens runs the whole diagnosis (scan, structure, score, JSON report); ripgrep searches the same
file for every catalogue regex (`faultlens refs patterns`), printing matching lines with numbers.
Both are timed as whole processes, warm page cache, median of --repeat runs.

usage: python bench/throughput.py [--size-mb 1024] [--repeat 3] [--log PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from _common import OUT, HERE, faultlens_cmd, median_run, need_rg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--log", help="use this log instead of generating one")
    args = ap.parse_args()
    rg = need_rg()
    OUT.mkdir(exist_ok=True)
    log = args.log or str(OUT / f"noise-{args.size_mb}mb.log")
    if not args.log:
        from pathlib import Path
        if not Path(log).exists():
            subprocess.run([sys.executable, str(HERE / "generate_log.py"), log, "--size-mb",
                            str(args.size_mb)], check=True)
    patterns = OUT / "patterns.txt"
    with open(patterns, "w") as fh:
        subprocess.run(faultlens_cmd() + ["refs", "patterns"], stdout=fh, check=True)
    n_patterns = sum(1 for _ in open(patterns))
    size = __import__("os").path.getsize(log)
    fl = faultlens_cmd() + ["diagnose", "--json", log]
    rgc = [rg, "-n", "-f", str(patterns), log]
    median_run(fl, 1)  # warm the page cache and the compiled-scanner cache
    median_run(rgc, 1)
    t_fl, rss_fl = median_run(fl, args.repeat)
    t_rg, rss_rg = median_run(rgc, args.repeat)
    mb = size / 2**20
    print(f"log: {log} ({mb:.0f} MiB), {n_patterns} catalogue patterns")
    print(f"{'tool':<12}{'median s':>10}{'MiB/s':>10}{'peak RSS MiB':>14}")
    print(f"{'faultlens':<12}{t_fl:>10.2f}{mb / t_fl:>10.0f}{rss_fl / 1024:>14.0f}")
    print(f"{'ripgrep':<12}{t_rg:>10.2f}{mb / t_rg:>10.0f}{rss_rg / 1024:>14.0f}")
    print(f"throughput ratio faultlens/ripgrep: {t_rg / t_fl:.2f}x")


if __name__ == "__main__":
    main()
