"""Scan time with the catalogue and with 10x as many references (synthetic copies with new ids
and distinct literals), on the same generated log.

usage: python bench/scale.py [--size-mb 256] [--factor 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import OUT, HERE, faultlens_cmd, median_run

ROOT = HERE.parent


def _distinct(regex: str, k: int) -> str:
    """A variant of `regex` that only matches lines carrying an extra literal, so Hyperscan cannot
    merge the copies and they do not match the same lines."""
    tag = f"copy{k} "
    flags = re.match(r"\(\?[a-z]+\)", regex)
    head = flags.group(0) if flags else ""
    body = regex[len(head):]
    if "^" not in body:
        return f"{head}{tag}(?:{body})"
    if "$" not in body:
        return f"{head}(?:{body}) {tag}"
    return regex  # anchored at both ends: left as is (merged with the original)


def multiply(src: Path, dst: Path, factor: int) -> int:
    """Copy the catalogue `factor` times; copy k renames ids and makes every regex distinct."""
    import yaml

    shutil.copytree(src, dst)
    count = 0
    for ref in sorted(src.glob("*/*/reference.yaml")):
        data = yaml.safe_load(ref.read_text())
        count += 1
        for k in range(1, factor):
            copy = dict(data, id=f"{data['id']}-x{k}")
            copy["signals"] = {name: ({**sig, "regex": _distinct(sig["regex"], k)} if "regex" in sig else sig)
                               for name, sig in data["signals"].items()}
            folder = dst / ref.parent.parent.name / copy["id"]
            folder.mkdir(parents=True)
            (folder / "reference.yaml").write_text(yaml.safe_dump(copy, sort_keys=False))
            count += 1
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    log = OUT / f"noise-{args.size_mb}mb.log"
    if not log.exists():
        subprocess.run([sys.executable, str(HERE / "generate_log.py"), str(log), "--size-mb",
                        str(args.size_mb)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "catalogue"
        n_big = multiply(ROOT / "catalogue", big, args.factor)
        n_small = len(list((ROOT / "catalogue").glob("*/*/reference.yaml")))
        rows = []
        for label, cat in (("catalogue", ROOT / "catalogue"), (f"{args.factor}x", big)):
            env = {**os.environ, "FAULTLENS_CATALOGUE": str(cat), "FAULTLENS_CACHE": str(Path(tmp) / label)}
            cmd = faultlens_cmd() + ["diagnose", "--json", str(log)]
            median_run(cmd, 1, env)  # compile and cache the scanner
            rows.append((label, median_run(cmd, args.repeat, env)[0], scan_pass(cat, Path(tmp) / label, log)))
    print(f"log: {log.name}; references: {n_small} vs {n_big}")
    print(f"  {'catalogue':<10} {'process s':>10} {'scan pass s':>12}")
    for label, t, scan in rows:
        print(f"  {label:<10} {t:10.2f} {scan:12.2f}")
    print(f"ratio {args.factor}x/1x: whole process {rows[1][1] / rows[0][1]:.2f}, "
          f"Hyperscan pass alone {rows[1][2] / rows[0][2]:.2f}")


def scan_pass(cat: Path, cache: Path, log: Path) -> float:
    """Seconds of the one Hyperscan pass over `log` (reading included), in this process, best of 3."""
    import time

    os.environ["FAULTLENS_CACHE"] = str(cache)
    from faultlens.engine.compile import load_scanner
    from faultlens.logs.reader import ReadStats, iter_blocks

    db = load_scanner(cat).database
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for buf, begin, end, _line in iter_blocks(str(log), ReadStats(str(log))):
            with memoryview(buf) as view:
                db.scan(view[begin:end], match_event_handler=lambda *a: None)
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    main()
