"""Load on `faultlens serve`: concurrent POST /api/v1/diagnose with 1 MB logs, loopback only.

A server is started on 127.0.0.1 (a free port, a temporary incident store, the real catalogue);
1, 8 and 32 clients (threads, one keep-alive connection each) post the same 1 MB log for
--seconds each, first diagnosing only (?store=false), then also storing each log as an incident
(redacted, capped, written to SQLite). Printed per client count: requests, throughput, p50 and
p99 latency. The baseline is `faultlens diagnose` of the same file as a whole process, measured
in the same run. Total time is about 2 x len(--clients) x --seconds, plus start-up.

usage: python bench/serve_load.py [--seconds 8] [--clients 1 8 32] [--size-mb 1]
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _common import faultlens_cmd, median_run
from generate_log import FAILURE, noise_block

REQUEST_TIMEOUT_S = 120


def make_log(size_mb: int) -> bytes:
    rng = random.Random(0)
    noise = b""
    while len(noise) < (size_mb << 20) - len(FAILURE):
        noise += noise_block(rng, 2000).encode()
    return noise[: (size_mb << 20) - len(FAILURE)].rsplit(b"\n", 1)[0] + b"\n" + FAILURE.encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(faultlens_cmd() + ["serve", "--host", "127.0.0.1", "--port", str(port),
                                               "--db", str(tmp / "incidents.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/references", timeout=2).close()
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("faultlens serve did not start (is the web extra installed?)")
            time.sleep(0.1)


def load(port: int, clients: int, seconds: float, body: bytes, path: str) -> tuple[list[float], int, float]:
    """(latencies in seconds, errors, wall seconds) of `clients` threads posting for `seconds`."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    start = time.perf_counter()
    deadline = start + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        mine, failed = [], 0
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers={"Content-Type": "text/plain"})
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
            if ok:
                mine.append(time.perf_counter() - t0)
            else:
                failed += 1
        conn.close()
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0], time.perf_counter() - start


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=8.0, help="how long each client count runs")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--size-mb", type=int, default=1)
    args = ap.parse_args()
    body = make_log(args.size_mb)
    modes = {"diagnose only": "/api/v1/diagnose?store=false", "diagnose + store": "/api/v1/diagnose"}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "job.log"
        log.write_bytes(body)
        median_run(faultlens_cmd() + ["diagnose", str(log)], 1)  # warm the compiled-scanner cache
        base, _ = median_run(faultlens_cmd() + ["diagnose", str(log)], 5)
        proc, port = start_server(Path(tmp))
        try:
            load(port, 1, 1.0, body, modes["diagnose only"])  # warm up the pool's scanners
            rows = [(mode, n, *load(port, n, args.seconds, body, path))
                    for mode, path in modes.items() for n in args.clients]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    mb = len(body) / 2**20
    print(f"POST /api/v1/diagnose with a {mb:.1f} MiB log, {args.seconds:.0f} s per client count, "
          f"{os.cpu_count()} CPUs, loopback")
    print(f"baseline: `faultlens diagnose` of the same file as a process, median of 5: {base * 1000:.0f} ms")
    print(f"{'':<18}{'clients':>8}{'requests':>10}{'errors':>8}{'req/s':>9}{'MiB/s':>8}{'p50 ms':>9}"
          f"{'p99 ms':>9}{'p50/baseline':>14}")
    for mode, clients, latencies, errors, wall in rows:
        lat = sorted(latencies)
        if not lat:
            print(f"{mode:<18}{clients:>8}{0:>10}{errors:>8}  no request completed")
            continue
        p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
        print(f"{mode:<18}{clients:>8}{len(lat):>10}{errors:>8}{len(lat) / wall:>9.1f}{len(lat) * mb / wall:>8.1f}"
              f"{p50 * 1000:>9.0f}{p99 * 1000:>9.0f}{p50 / base:>13.2f}x")


if __name__ == "__main__":
    main()
