"""A small log, warm: the whole `faultlens diagnose` process, against `python -c pass` and ripgrep.

usage: python bench/startup.py [--repeat 21] [--log PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from _common import OUT, HERE, faultlens_cmd, median_run, need_rg

DEFAULT_LOG = HERE.parent / "examples" / "vllm-nvfp4-emulation-crash.log"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--log", default=str(DEFAULT_LOG))
    args = ap.parse_args()
    rg = need_rg()
    OUT.mkdir(exist_ok=True)
    patterns = OUT / "patterns.txt"
    with open(patterns, "w") as fh:
        subprocess.run(faultlens_cmd() + ["refs", "patterns"], stdout=fh, check=True)
    cmds = {
        "faultlens diagnose": faultlens_cmd() + ["diagnose", args.log],
        "python -c pass": [sys.executable, "-c", "pass"],
        "rg -f patterns": [rg, "-n", "-f", str(patterns), args.log],
    }
    # warm, as a user's second run is: the compiled scanner is cached on disk and the modules'
    # bytecode is written (a shell with PYTHONDONTWRITEBYTECODE=1 would recompile stale modules
    # of a development checkout on every run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    median_run(cmds["faultlens diagnose"], 2, env)
    results = {name: median_run(cmd, args.repeat, env)[0] for name, cmd in cmds.items()}
    print(f"small log: {args.log}, median of {args.repeat} runs")
    for name, t in results.items():
        print(f"  {name:<20} {t * 1000:7.1f} ms")
    base = results["python -c pass"]
    print(f"faultlens / bare interpreter: {results['faultlens diagnose'] / base:.1f}x; "
          f"budget 250 ms: {'met' if results['faultlens diagnose'] < 0.25 else 'NOT met'}")


if __name__ == "__main__":
    main()
