"""Soak `faultlens serve` (loopback only): 8 clients for 60 s posting a mix of normal, large and
adversarial uploads while a probe measures a plain GET.

A server is started on 127.0.0.1 (a free port, a temporary incident store, the real catalogue).
First the probe alone measures GET /api/v1/references/<id> on the idle server for --idle-seconds
(the baseline, same run); then --clients threads post for --seconds, each request drawn from
the mix below, while the probe keeps measuring the same GET every --probe-ms. The server's peak
RSS is sampled every 100 ms. Every loop is bounded by its deadline and every request by a
timeout, so the script stops by itself.

The mix (weights): normal - a 60 KB training log, diagnosed (half stored); large - an 8 MiB log,
gzipped; adversarial - 20,000 two-byte gzip members, a gzip of a zstd stream of 64 MiB (the
upload limit is 32 MiB), gzip around a corrupt zstd stream, 'a.'*128000 + ' x://' stored
(redaction), a 3 MiB line ending inside a block, a truncated zstd stream, a log full of secrets
(stored), GET /api/v1/incidents/<huge int>. Catalogue regexes that backtrack (issue 13 item 1)
are left to --with-regex-probe: they measure the engine's verification, not the server.

usage: python bench/soak.py [--seconds 60] [--clients 8] [--probe-ms 50] [--with-regex-probe]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import random
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import zstandard

from serve_load import make_log, percentile, start_server

REQUEST_TIMEOUT_S = 150
TARGET_P99_MS = 250
PROBE_PATH = "/api/v1/references/{id}"


def payloads(with_regex_probe: bool) -> list[tuple[str, int, str, str, bytes, str]]:
    """(kind, weight, method, path, body, content type)."""
    normal = make_log(1)[-60_000:].split(b"\n", 1)[1]
    large = gzip.compress(make_log(8), compresslevel=1)
    secrets = (b"export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345\n"
               b"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;\n"
               b"git clone HTTPS://user:pa/ss0rd@example.com/r.git\n"
               b"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
               b"-----END PRIVATE KEY-----\n") * 200 + normal
    zst = zstandard.ZstdCompressor().compress(normal * 20)
    text, raw = "text/plain", "application/octet-stream"
    mix = [
        ("normal", 30, "POST", "/api/v1/diagnose?store=false", normal, text),
        ("normal+store", 30, "POST", "/api/v1/diagnose", normal, text),
        ("large 8 MiB gz", 15, "POST", "/api/v1/diagnose?store=false", large, raw),
        ("gzip x20000 members", 4, "POST", "/api/v1/diagnose?store=false",
         gzip.compress(b"x\n") * 20_000, raw),
        ("gzip(zstd 64 MiB)", 3, "POST", "/api/v1/diagnose?store=false",
         gzip.compress(zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 << 20))), raw),
        ("gzip(corrupt zstd)", 3, "POST", "/api/v1/diagnose?store=false",
         gzip.compress(b"\x28\xb5\x2f\xfdgarbage\n"), raw),
        ("redaction a.*128000", 3, "POST", "/api/v1/diagnose", b"a." * 128_000 + b" x://\n", text),
        ("3 MiB line", 3, "POST", "/api/v1/diagnose?store=false",
         b"x" * (3 << 20) + b"\n" + normal, text),
        ("truncated zstd", 3, "POST", "/api/v1/diagnose?store=false", zst[: len(zst) // 2], raw),
        ("secrets+store", 3, "POST", "/api/v1/diagnose", secrets, text),
        ("GET huge id", 3, "GET", "/api/v1/incidents/9999999999999999999999", b"", text),
    ]
    if with_regex_probe:
        mix.append(("regex probe 4 KiB", 3, "POST", "/api/v1/diagnose?store=false",
                    b"backward_cuda" * 315 + b"\n", text))
    return mix


def request(conn, method: str, path: str, body: bytes, ctype: str) -> int:
    conn.request(method, path, body=body or None, headers={"Content-Type": ctype})
    resp = conn.getresponse()
    resp.read()
    return resp.status


def probe(port: int, ref_id: str, until: float, every_s: float, out: list[float], stop: threading.Event):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    path = PROBE_PATH.format(id=ref_id)
    while time.perf_counter() < until and not stop.is_set():
        t0 = time.perf_counter()
        try:
            ok = request(conn, "GET", path, b"", "text/plain") == 200
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        out.append(time.perf_counter() - t0 if ok else float("inf"))
        time.sleep(max(0.0, every_s - (time.perf_counter() - t0)))
    conn.close()


def client(port: int, mix, until: float, seed: int, tally: Counter, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    weights = [m[1] for m in mix]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    while time.perf_counter() < until:
        kind, _w, method, path, body, ctype = rng.choices(mix, weights)[0]
        try:
            status = request(conn, method, path, body, ctype)
        except (OSError, http.client.HTTPException) as exc:
            status = type(exc).__name__
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        with lock:
            tally[(kind, status)] += 1
    conn.close()


def sample_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    proc = psutil.Process(pid)
    while not stop.is_set():
        try:
            rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
        except psutil.Error:
            return
        peak[0] = max(peak[0], rss)
        stop.wait(0.1)


def summary(latencies: list[float]) -> str:
    done = sorted(x for x in latencies if x != float("inf"))
    failed = len(latencies) - len(done)
    if not done:
        return f"no GET completed ({failed} failed)"
    return (f"{len(done)} GETs, p50 {percentile(done, 0.5) * 1000:.1f} ms, "
            f"p99 {percentile(done, 0.99) * 1000:.1f} ms, max {done[-1] * 1000:.1f} ms, {failed} failed")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--idle-seconds", type=float, default=5.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--probe-ms", type=float, default=50.0)
    ap.add_argument("--with-regex-probe", action="store_true")
    args = ap.parse_args()
    mix = payloads(args.with_regex_probe)
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_server(Path(tmp))
        stop = threading.Event()
        peak = [0]
        sampler = threading.Thread(target=sample_rss, args=(proc.pid, stop, peak), daemon=True)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
            conn.request("GET", "/api/v1/references")
            ref_id = __import__("json").loads(conn.getresponse().read())[0]["id"]
            conn.close()
            sampler.start()
            idle: list[float] = []
            probe(port, ref_id, time.perf_counter() + args.idle_seconds, args.probe_ms / 1000, idle, stop)
            idle_rss = peak[0]
            loaded: list[float] = []
            tally: Counter = Counter()
            lock = threading.Lock()
            until = time.perf_counter() + args.seconds
            threads = [threading.Thread(target=client, args=(port, mix, until, i, tally, lock))
                       for i in range(args.clients)]
            threads.append(threading.Thread(target=probe, args=(port, ref_id, until, args.probe_ms / 1000,
                                                                loaded, stop)))
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join(args.seconds + REQUEST_TIMEOUT_S + 30)
            wall = time.perf_counter() - started
            alive = proc.poll() is None
        finally:
            stop.set()
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except Exception:  # noqa: BLE001 - a server that hangs on exit is killed
                proc.kill()
    print(f"faultlens serve on 127.0.0.1, {args.clients} clients for {args.seconds:.0f} s "
          f"(took {wall:.0f} s), {psutil.cpu_count()} CPUs; GET {PROBE_PATH.format(id=ref_id)} "
          f"every {args.probe_ms:.0f} ms")
    print(f"idle server (baseline): {summary(idle)}")
    print(f"under load:             {summary(loaded)}")
    done = sorted(x for x in loaded if x != float("inf"))
    idle_done = sorted(x for x in idle if x != float("inf"))
    if done and idle_done:
        p99 = percentile(done, 0.99) * 1000
        print(f"p99 under load / idle p99: {p99 / (percentile(idle_done, 0.99) * 1000):.1f}x; "
              f"target p99 <= {TARGET_P99_MS} ms: {'met' if p99 <= TARGET_P99_MS else 'NOT met'}")
    print(f"server peak RSS: {peak[0] / 2**20:.0f} MiB (idle {idle_rss / 2**20:.0f} MiB); "
          f"server {'still up' if alive else 'DIED'}")
    print(f"{'upload':<24}{'answers'}")
    for kind in dict.fromkeys(m[0] for m in mix):
        answers = ", ".join(f"{status}: {n}" for (k, status), n in sorted(tally.items(), key=str) if k == kind)
        print(f"{kind:<24}{answers or '-'}")


if __name__ == "__main__":
    main()
