"""Alert latency of `faultlens watch`: time from a line being written to its alert being emitted.

A temporary catalogue holds the real catalogue plus N synthetic references (one distinctive line
each), so every written failure line raises a new alert while the full catalogue is re-ranked.
A writer appends noise and then one failure line, flushes, and waits for the alert on the
watcher's stdout; median, p99 and max over N alerts are printed, and the watcher's CPU use while
idle afterwards (from /proc).

usage: python bench/alert_latency.py [--alerts 200] [--idle 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import HERE, faultlens_cmd

REF = """id: bench-alert-{k}
title: Benchmark reference {k} - a synthetic failure line used to time alerts
category: bench
severity: failure
summary: A synthetic reference for the alert-latency benchmark; it matches one distinctive line only.
mechanism: Synthetic. Exists only so that every line the benchmark writes completes a new fingerprint and raises its own alert.
symptoms: [BENCH-ALERT-{k} fired]
affects: [benchmarks only]
signals:
  line: {{regex: 'BENCH-ALERT-{k} fired', level: error}}
fingerprint:
  all: [line]
checks:
  - {{id: line, text: The benchmark line is in the log., signal: line}}
fix:
  - {{do: Nothing to fix - this is a benchmark reference.}}
sources:
  - {{url: https://github.com/intel/hyperscan}}
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alerts", type=int, default=200)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--catalogue", default=str(HERE.parent / "catalogue"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cat = Path(tmp) / "catalogue"
        shutil.copytree(args.catalogue, cat)
        for k in range(args.alerts):
            folder = cat / "bench" / f"bench-alert-{k}"
            folder.mkdir(parents=True)
            (folder / "reference.yaml").write_text(REF.format(k=k))
        env = {**os.environ, "FAULTLENS_CATALOGUE": str(cat), "FAULTLENS_CACHE": str(Path(tmp) / "cache")}
        subprocess.run(faultlens_cmd() + ["refs", "list"], env=env, capture_output=True, check=True)
        log = Path(tmp) / "job.log"
        log.write_text("")
        watcher = subprocess.Popen(faultlens_cmd() + ["watch", "--json", str(log)], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        received: dict[str, float] = {}
        got = threading.Condition()

        def reader():
            for line in watcher.stdout:
                msg = json.loads(line)
                if msg.get("type") == "alert":
                    with got:
                        received[msg["id"]] = time.perf_counter()
                        got.notify_all()

        threading.Thread(target=reader, daemon=True).start()
        time.sleep(1.5)  # let the watcher load the compiled catalogue
        latencies = []
        noise = "".join(f"[rank{r}]: step 100 | loss 0.51 | lr 3.0e-04\n" for r in range(8))
        with open(log, "a") as fh:
            for k in range(args.alerts):
                fh.write(noise)
                fh.write(f"[rank{k % 8}]:RuntimeError: BENCH-ALERT-{k} fired\n")
                fh.flush()
                written = time.perf_counter()
                rid = f"bench-alert-{k}"
                with got:
                    got.wait_for(lambda: rid in received, timeout=5)
                if rid in received:
                    latencies.append(received[rid] - written)
        time.sleep(0.5)
        before = cpu_seconds(watcher.pid)
        time.sleep(args.idle)
        idle_cpu = (cpu_seconds(watcher.pid) - before) / args.idle
        watcher.terminate()
        watcher.wait(timeout=10)
    lat = sorted(latencies)
    p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
    print(f"alerts: {len(lat)}/{args.alerts} received; catalogue + {args.alerts} synthetic references")
    print(f"latency median {statistics.median(lat) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
          f"max {lat[-1] * 1000:.1f} ms (target p99 < 200 ms)")
    print(f"idle CPU of the watcher: {idle_cpu * 100:.2f}% of one core")


if __name__ == "__main__":
    main()
