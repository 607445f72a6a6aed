"""Fleet scan throughput: jobs/s on a 1-worker and a 2-worker Dask LocalCluster and the local pool.

Generates N synthetic job logs under bench/out/fleet/ (default 2,000 of 1-20 MB each): the noise
of generate_log.py (steps, tqdm bars, NCCL INFO, warnings, vLLM and checkpoint lines), a first
NCCL line naming the job's node, then a failure tail copied from a catalogue example, in a known
mix (MIX), and a last dated line. Some jobs end in errors no reference explains (UNEXPLAINED),
some finish cleanly. The hardware failures land mostly on one node (BAD_NODE), which the
aggregate should single out. Logs are reused when a previous run made the same set.

The baseline is the 1-worker cluster: the 2-worker ratio is the scaling ratio. Each mode is
bounded by --budget-s (jobs/s then counts the jobs finished in time), and generation checks the
free disk first.

usage: python bench/fleet_scan.py [--jobs 2000] [--size-scale 1.0] [--budget-s 600] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import sys
import time

from _common import HERE, OUT
from generate_log import noise_block

ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from faultlens.engine.compile import load_scanner
from faultlens.fleet import aggregate, runner
from faultlens.fleet.jobs import expand, group

FLEET = OUT / "fleet"
MIX = {  # planted reference -> share of the jobs
    "cuda-out-of-memory": 0.28,
    "nccl-watchdog-collective-timeout": 0.10,
    "cuda-illegal-memory-access": 0.08,
    "cuda-device-side-assert": 0.08,
    "distributed-port-in-use": 0.07,
    "dataloader-worker-oom-deadlock": 0.06,
    "huggingface-hub-error": 0.05,
    "xid-79-fallen-off-bus": 0.05,
    "xid-ecc-uncorrectable": 0.05,
    "unexplained": 0.13,
    "healthy": 0.05,
}
HARDWARE = ("xid-79-fallen-off-bus", "xid-ecc-uncorrectable")
NODES = [f"node-{i:02d}" for i in range(64)]
BAD_NODE = "node-13"
UNEXPLAINED = [
    "ERROR storage: checkpoint upload to s3://ckpt/run-{a}/step_{n}.pt failed: SlowDown (retry {k}/5)",
    "FATAL rendezvous: etcd lease 0x{h} expired after {n} ms, giving up",
    "ERROR reward model at http://10.0.{a}.{k}:8000 answered 503 after {n} ms",
]
NOISE_BLOCKS = 32
FORMAT = 2
"""Bumped whenever the generated logs change, so that old ones are not reused."""


def example_tail(ref_id: str) -> str:
    """The first match example of a catalogue reference: a real failure excerpt."""
    found = sorted(ROOT.glob(f"catalogue/*/{ref_id}/examples/match-*.log"))
    if not found:
        raise SystemExit(f"catalogue has no reference {ref_id} with a match example: edit MIX")
    return found[0].read_text()


def tail_for(label: str, rng: random.Random, job: str) -> str:
    if label == "healthy":
        return f"{job}: training finished, final loss {rng.random():.4f}\n"
    if label == "unexplained":
        tpl = rng.choice(UNEXPLAINED)
        return "".join(tpl.format(a=rng.randrange(256), n=rng.randrange(10, 90000), k=k,
                                  h=f"{rng.getrandbits(32):x}") + "\n" for k in range(1, 4))
    return example_tail(label)


def plan(jobs: int, size_scale: float, seed: int) -> list[dict]:
    rng = random.Random(seed)
    labels = rng.choices(list(MIX), weights=list(MIX.values()), k=jobs)
    out = []
    for i, label in enumerate(labels):
        host = BAD_NODE if label in HARDWARE and rng.random() < 0.7 else rng.choice(NODES)
        size = max(4096, int(rng.uniform(1, 20) * size_scale * (1 << 20)))
        out.append({"job": f"job-{i:05d}", "label": label, "host": host, "bytes": size,
                    "day": f"2026-11-{rng.randrange(23, 30)}"})
    return out


def generate(entries: list[dict], seed: int) -> None:
    """Write every planned log (skipped when the same plan was written before)."""
    manifest = FLEET / "manifest.json"
    wanted = {"format": FORMAT, "jobs": entries}
    if manifest.exists() and json.loads(manifest.read_text()) == wanted:
        print(f"reusing {len(entries)} logs in {FLEET}")
        return
    need = sum(e["bytes"] for e in entries)
    shutil.rmtree(FLEET, ignore_errors=True)
    FLEET.mkdir(parents=True)
    free = shutil.disk_usage(FLEET).free
    if free < need * 1.1 + (1 << 30):
        raise SystemExit(f"{need / 1e9:.1f} GB of logs need more than the {free / 1e9:.1f} GB free "
                         "here: lower --jobs or --size-scale")
    rng = random.Random(seed + 1)
    blocks = [noise_block(rng, 7000).encode() for _ in range(NOISE_BLOCKS)]
    start = time.perf_counter()
    for e in entries:
        head = (f"{e['day']} 08:00:00,000 INFO launcher: starting {e['job']}\n"
                f"{e['host']}:4121:4180 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n").encode()
        tail = (tail_for(e["label"], rng, e["job"]) +
                f"{e['day']} 10:40:15,000 INFO launcher: {e['job']} exited\n").encode()
        with open(FLEET / f"{e['job']}.log", "wb") as fh:
            fh.write(head)
            written = len(head) + len(tail)
            while written < e["bytes"]:
                block = blocks[rng.randrange(NOISE_BLOCKS)][:e["bytes"] - written]
                block = block[:block.rfind(b"\n") + 1]  # whole lines only
                if not block:
                    break
                fh.write(block)
                written += len(block)
            fh.write(tail)
    manifest.write_text(json.dumps(wanted))
    print(f"generated {len(entries)} logs, {need / 1e9:.2f} GB, in {time.perf_counter() - start:.0f} s")


def timed(rows, budget_s: float) -> tuple[list[dict], float]:
    """Consume rows until done or out of budget; (rows, seconds)."""
    start = time.perf_counter()
    out = []
    for row in rows:
        out.append(row)
        if time.perf_counter() - start > budget_s:
            break
    return out, time.perf_counter() - start


def _load_catalogue() -> None:
    load_scanner()


def scan_dask(jobs, workers: int, budget_s: float) -> tuple[list[dict], float]:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(_load_catalogue)  # in each worker, before the clock starts
        futures = runner.submit(jobs, client)
        rows, seconds = timed(runner.gather(futures, jobs), budget_s)
        client.cancel(futures)
    return rows, seconds


def scan_pool(jobs, workers: int, budget_s: float) -> tuple[list[dict], float]:
    stream = runner.scan_local(jobs, workers=workers)
    rows, seconds = timed(stream, budget_s)
    stream.close()
    for child in multiprocessing.active_children():  # let cancelled work end before the next mode
        child.join()
    return rows, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--size-scale", type=float, default=1.0,
                    help="multiply every log's 1-20 MB size by this (e.g. 0.05 for a quick run)")
    ap.add_argument("--budget-s", type=float, default=600, help="time limit per mode")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    entries = plan(args.jobs, args.size_scale, args.seed)
    generate(entries, args.seed)
    load_scanner()  # compile once into the on-disk cache that every worker reads
    jobs = group(expand([str(FLEET / "*.log")])[0])
    total = sum(e["bytes"] for e in entries)
    cores = os.cpu_count()
    print(f"fleet_scan: {len(jobs)} jobs, {total / 1e9:.2f} GB "
          f"({min(e['bytes'] for e in entries) / 1e6:.1f}-{max(e['bytes'] for e in entries) / 1e6:.1f}"
          f" MB each), {cores} cores; baseline: the 1-worker cluster")
    modes = [("dask LocalCluster, 1 worker", lambda: scan_dask(jobs, 1, args.budget_s)),
             ("dask LocalCluster, 2 workers", lambda: scan_dask(jobs, 2, args.budget_s)),
             (f"local pool, {cores} processes", lambda: scan_pool(jobs, cores, args.budget_s))]
    results = {}
    print(f"{'mode':<32} {'jobs':>6} {'seconds':>8} {'jobs/s':>8} {'MB/s':>7} {'ratio':>6}")
    for name, run in modes:
        rows, seconds = run()
        done = sum(r["bytes"] or 0 for r in rows)
        results[name] = (rows, len(rows) / seconds)
        base = results[modes[0][0]][1]
        print(f"{name:<32} {len(rows):>6} {seconds:>8.1f} {len(rows) / seconds:>8.1f} "
              f"{done / seconds / 1e6:>7.0f} {len(rows) / seconds / base:>6.2f}")
    one, two = (results[m[0]][1] for m in modes[:2])
    print(f"scaling ratio, 2 workers / 1 worker: {two / one:.2f}")
    report(entries, [results[m[0]][0] for m in modes])


def report(entries: list[dict], runs: list[list[dict]]) -> None:
    """Check the rows against the planted mix: the figures mean nothing if the scan was wrong."""
    planted = {e["job"]: e for e in entries}
    complete = [r for r in runs if len(r) == len(entries)]
    by_job = [{r["job"].rsplit("/", 1)[-1][:-4]: r for r in rows} for rows in complete]
    if len(by_job) > 1:
        same = all(sorted(map(json.dumps, b.values())) == sorted(map(json.dumps, by_job[0].values()))
                   for b in by_job[1:])
        print(f"rows identical across the {len(by_job)} complete modes: {'yes' if same else 'NO'}")
    if not by_job:
        print("no mode finished within --budget-s: no accuracy check")
        return
    rows = by_job[0]
    failures = [j for j, e in planted.items() if e["label"] not in ("healthy", "unexplained")]
    hit = sum(1 for j in failures if rows[j]["diagnosis"] == planted[j]["label"])
    hosts = sum(1 for j in planted if rows[j]["host"] == planted[j]["host"])
    days = sum(1 for j in planted if rows[j]["day"] == planted[j]["day"])
    print(f"planted failure ranked first: {hit}/{len(failures)}; host found: {hosts}/{len(planted)}; "
          f"day found: {days}/{len(planted)}")
    summary = aggregate.summarize(list(rows.values()))
    standing = [h["host"] + " (" + ", ".join(f"{x['id']} x{x['jobs']}" for x in h["repeated"]) + ")"
                for h in summary["hosts"] if h["repeated"]]
    print(f"hosts standing out: {'; '.join(standing) or 'none'}")
    print(f"unexplained: {summary['unexplained']} jobs, "
          f"{len(summary['unexplained_templates'])} templates: "
          + "; ".join(f"{t['template'][:70]} ({t['jobs']} jobs)"
                      for t in summary["unexplained_templates"][:3]))


if __name__ == "__main__":
    main()
