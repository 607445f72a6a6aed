"""Fleet scans (faultlens.fleet, `faultlens scan`): grouping, per-job rows, outputs, the aggregate,
and reliability on a local process pool, on a Dask LocalCluster that loses a worker mid-scan, and
on S3 (moto's server on loopback)."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import DATA, ROOT

from faultlens.cli import main
from faultlens.errors import UsageError
from faultlens.fleet import aggregate, clues, output, runner
from faultlens.fleet.jobs import Job, expand, group
from faultlens.fleet.row import FIELDS
from faultlens.fleet.worker import scan_job

FLEET = DATA / "fleet"
CATALOGUE = str(DATA / "catalogue")
KINDS = ("torchrun-oom", "syslog-driver", "rendezvous-unexplained", "healthy")


@pytest.fixture(autouse=True)
def demo_catalogue(monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", CATALOGUE)


def make_fleet(root, jobs: int = 8):
    """logs/job-NNN/rank0.log (one of the four kinds, in turn) and rank1.log (healthy)."""
    for i in range(jobs):
        folder = root / "logs" / f"job-{i:03d}"
        folder.mkdir(parents=True)
        shutil.copy(FLEET / f"{KINDS[i % len(KINDS)]}.log", folder / "rank0.log")
        shutil.copy(FLEET / "healthy.log", folder / "rank1.log")
    return root / "logs"


def by_job(rows):
    return {r["job"]: r for r in rows}


def job(path) -> Job:
    return Job(str(path), (str(path),))


# ---- grouping ---------------------------------------------------------------------------------

def test_expand_walks_folders_and_globs_and_reports_what_matched_nothing(tmp_path):
    logs = make_fleet(tmp_path, 2)
    (logs / "job-000" / ".hidden.log").write_text("x\n")
    files, unmatched = expand([str(logs), str(tmp_path / "**" / "rank1.log"),
                               str(tmp_path / "*.nothing"), str(tmp_path / "missing.log")])
    assert files == [str(logs / f"job-00{i}" / f"rank{r}.log") for i in (0, 1) for r in (0, 1)] \
        + [str(tmp_path / "missing.log")]  # globbed duplicates once; a missing path is a job
    assert unmatched == [str(tmp_path / "*.nothing")]


def test_default_grouping_is_one_job_per_file():
    jobs = group(["b/x.log", "a/y.log"])
    assert [(j.name, j.files) for j in jobs] == [("a/y.log", ("a/y.log",)), ("b/x.log", ("b/x.log",))]


def test_job_pattern_groups_files_and_names_hosts():
    files = ["logs/j1/node-2/rank1.log", "logs/j1/node-1/rank0.log", "logs/j2/node-3/rank0.log",
             "other/stray.log"]
    jobs = group(files, r"logs/(?P<job>[^/]+)/(?P<host>[^/]+)/rank\d+\.log")
    assert [(j.name, j.files, j.hosts) for j in jobs] == [
        ("j1", ("logs/j1/node-1/rank0.log", "logs/j1/node-2/rank1.log"), ("node-1", "node-2")),
        ("j2", ("logs/j2/node-3/rank0.log",), ("node-3",)),
        ("other/stray.log", ("other/stray.log",), (None,)),  # not matched: a job of its own
    ]
    assert jobs[0].host_of("logs/j1/node-2/rank1.log") == "node-2"


def test_job_per_dir():
    jobs = group(["a/1.log", "a/2.log", "b/1.log", "s3://bkt/c/1.log", "s3://bkt/c/2.log"],
                 per_dir=True)
    assert [(j.name, len(j.files)) for j in jobs] == [("a", 2), ("b", 1), ("s3://bkt/c", 2)]


@pytest.mark.parametrize("pattern, message", [
    (r"logs/([^/]+)/", "named group (?P<job>"),
    (r"logs/(?P<job>[^/]+", "not a valid regex"),
])
def test_bad_job_pattern(pattern, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace("?", r"\?")):
        group(["logs/a/rank0.log"], pattern)


# ---- clues: host, day, error lines from the ends of a log ----------------------------------------

def test_log_ends_keep_whole_head_and_tail_lines_once():
    lines = [f"line {i:05d}" for i in range(5000)]
    data = ("\n".join(lines) + "\n").encode()
    ends = clues.LogEnds(head_bytes=1000, tail_bytes=3000)
    for start in range(0, len(data), 777):  # blocks that do not fall on line ends
        ends.feed(data, start, min(start + 777, len(data)))
    kept = [line for line in ends.text().split("\n") if line]
    assert kept[0] == "line 00000" and kept[-1] == "line 04999"
    assert kept == sorted(set(kept)) and all(line in lines for line in kept)
    assert 1000 - 11 <= sum(len(x) + 1 for x in kept if x < "line 02500") <= 1000
    small = clues.LogEnds(head_bytes=1000, tail_bytes=3000)
    small.feed(data, 0, 3300)
    assert small.text() == data[:3300].decode()  # head and tail overlap: every line once


def test_host_day_and_error_lines_come_from_the_rules():
    rules = clues.load_rules()
    oom = (FLEET / "torchrun-oom.log").read_text()
    assert clues.find_host(oom, rules) == "node-0"  # the root cause, not the other failure
    assert clues.find_day(oom, rules) == "2026-11-29"
    assert clues.find_host((FLEET / "syslog-driver.log").read_text(), rules) == "gpu-3"
    assert clues.find_host("ray (RayWorkerWrapper pid=7, ip=10.1.2.3) INFO up\n", rules) == "10.1.2.3"
    assert clues.find_host("step 1\n", rules) is None
    assert clues.find_day("2026-13-45 10:00:00 impossible\n", rules) is None
    # the latest date is far from the end: found after the first windows
    assert clues.find_day("2026-11-20 10:00:00 up\n" + "step\n" * 20_000, rules) == "2026-11-20"
    text = (FLEET / "rendezvous-unexplained.log").read_text()
    assert clues.error_lines(text, rules) == [
        "connection to 10.0.0.12:29500 refused after 3 retries",
        "connection to 10.0.0.17:29500 refused after 5 retries",
        "upload failed: Authorization: Bearer <redacted>"]
    assert clues.error_lines(text, rules, limit=1) == ["upload failed: Authorization: Bearer <redacted>"]


def test_every_bundled_rule_compiles_with_its_groups():
    rules = clues.load_rules()
    assert rules.host and rules.day and rules.errors and rules.masks


# ---- worker: one job, one row, never an exception --------------------------------------------------

def test_row_of_a_diagnosed_job():
    row = scan_job(job(FLEET / "torchrun-oom.log"), CATALOGUE)
    assert set(row) == set(FIELDS)
    assert row["diagnosis"] == "demo-oom" and row["process"] == "rank3"
    assert row["host"] == "node-0" and row["day"] == "2026-11-29"
    assert row["evidence_line"] == 6 and "CUDA out of memory" in row["evidence"]
    assert row["error"] is None and row["error_lines"] == []  # explained: no error lines needed
    assert len(row["catalogue"]) >= 16


def test_evidence_and_error_lines_are_redacted():
    row = scan_job(job(FLEET / "syslog-driver.log"), CATALOGUE)
    assert row["diagnosis"] == "demo-driver-too-old" and row["host"] == "gpu-3"
    assert "hf_" not in row["evidence"] and "<redacted>" in row["evidence"]
    row = scan_job(job(FLEET / "rendezvous-unexplained.log"), CATALOGUE)
    assert row["diagnosis"] is None
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in row["error_lines"]
    assert not any("abcdefghijklmnop" in line for line in row["error_lines"])


def test_unreadable_logs_are_reported_per_job(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "binary.log").write_bytes(b"\x7fELF\x02\x01\x00\x00" + bytes(range(256)) * 8)
    (tmp_path / "folder.log").mkdir()
    reasons = {}
    for name in ("empty.log", "binary.log", "folder.log", "missing.log"):
        row = scan_job(job(tmp_path / name), CATALOGUE)
        assert row["diagnosis"] is None and row["error"]
        reasons[name] = row["error"]
    assert "is empty" in reasons["empty.log"] and "binary" in reasons["binary.log"]
    assert "is a directory" in reasons["folder.log"] and "no such file" in reasons["missing.log"]


def test_one_unreadable_file_of_a_job_is_a_warning(tmp_path):
    (tmp_path / "rank1.log").write_bytes(b"")
    shutil.copy(FLEET / "torchrun-oom.log", tmp_path / "rank0.log")
    row = scan_job(Job("j", (str(tmp_path / "rank0.log"), str(tmp_path / "rank1.log"))), CATALOGUE)
    assert row["diagnosis"] == "demo-oom" and row["error"] is None
    assert row["warnings"] == [f"{tmp_path / 'rank1.log'}: is empty"]


def test_day_is_printed_in_the_logs_else_the_file_time(tmp_path):
    shutil.copy(FLEET / "torchrun-oom.log", tmp_path / "rank0.log")
    undated = tmp_path / "rank1.log"
    undated.write_text("step 1\n")
    os.utime(undated, (86400 * 365, 86400 * 365))
    both = scan_job(Job("j", (str(tmp_path / "rank0.log"), str(undated))), CATALOGUE)
    assert both["day"] == "2026-11-29"  # not the undated file's time
    assert scan_job(job(undated), CATALOGUE)["day"] == "1971-01-01"


def test_compressed_log_and_pattern_host(tmp_path):
    path = tmp_path / "rank0.log.gz"
    path.write_bytes(gzip.compress((FLEET / "torchrun-oom.log").read_bytes()))
    row = scan_job(Job("j", (str(path),), ("node-from-path",)), CATALOGUE)
    assert row["diagnosis"] == "demo-oom" and row["host"] == "node-from-path"


def test_a_worker_error_becomes_a_row(monkeypatch):
    from faultlens.fleet import worker

    def explode(*_):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(worker, "_read", explode)
    row = scan_job(job(FLEET / "healthy.log"), CATALOGUE)
    assert row["error"] == "RuntimeError: disk on fire"


# ---- output ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_rows():
    return [scan_job(job(FLEET / f"{kind}.log"), CATALOGUE) for kind in KINDS] + \
        [scan_job(job(FLEET / "missing.log"), CATALOGUE)]


def _read_csv(path):
    import csv

    cast = {"str": str, "float": float, "int": int, "list": json.loads}
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: cast[FIELDS[k]](v) if v != "" else None for k, v in rec.items()}
                for rec in csv.DictReader(fh)]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_rows_round_trip_through_every_format(tmp_path, sample_rows, suffix):
    path = str(tmp_path / f"rows{suffix}")
    writer = output.open_writer(path)
    for row in sample_rows:
        writer.write({**row, "report": {"not": "written"}})
    writer.close()
    if suffix == ".jsonl":
        with open(path, encoding="utf-8") as fh:
            back = [json.loads(line) for line in fh]
    elif suffix == ".csv":
        back = _read_csv(path)
    else:
        import pyarrow.parquet as pq

        back = pq.read_table(path).to_pylist()
    assert back == sample_rows


def test_unknown_output_format():
    with pytest.raises(UsageError, match="unknown format"):
        output.open_writer("rows.txt")


# ---- aggregate ---------------------------------------------------------------------------------------

def _row(name, ref=None, conf=0.7, host=None, day="2026-11-29", lines=(), error=None):
    return {**{k: ([] if v == "list" else None) for k, v in FIELDS.items()},
            "job": name, "files": [name], "diagnosis": ref, "title": ref and f"title {ref}",
            "confidence": conf if ref else None, "host": host, "day": day,
            "error_lines": list(lines), "error": error, "catalogue": "abc"}


def test_every_job_is_diagnosed_unexplained_or_unreadable():
    rows = [_row("a", "oom"), _row("b", "oom", conf=0.3), _row("c"), _row("d", error="x: is empty")]
    s = aggregate.summarize(rows, catalogue="abc")
    assert (s["jobs"], s["diagnosed"], s["unexplained"], s["unreadable"]) == (4, 1, 2, 1)
    assert s["references"] == [{"id": "oom", "title": "title oom", "category": None, "jobs": 1,
                                 "hosts": 0, "examples": ["a"]}]
    assert s["unreadable_examples"] == [{"job": "d", "error": "x: is empty"}]
    assert s["catalogue_mismatch"] == []
    assert aggregate.summarize(rows, catalogue="other")["catalogue_mismatch"] == ["a", "b", "c", "d"]


def test_a_node_with_repeated_hardware_failures_stands_out():
    rows = [_row(f"o{i}", "oom", host=f"node-{i % 10}") for i in range(60)]  # six per node
    rows += [_row(f"x{i}", "xid-79", host="node-7") for i in range(8)]
    rows += [_row("x9", "xid-79", host="node-1")]
    hosts = aggregate.summarize(rows)["hosts"]
    assert hosts[0]["host"] == "node-7"
    (flag,) = hosts[0]["repeated"]
    # node-7 ran 14 jobs and 9 of the 69 are xid-79: 1.83 expected, 8 seen
    assert (flag["id"], flag["jobs"], flag["expected"]) == ("xid-79", 8, 1.83)
    assert flag["chance"] < aggregate.CHANCE_MAX
    # six OOMs on each of ten nodes are what the mix predicts: nobody else stands out
    assert [h["host"] for h in hosts if h["repeated"]] == ["node-7"]
    # nor do two failures of a rare kind on a node that ran few jobs
    few = [_row(f"o{i}", "oom", host=f"node-{i % 10}") for i in range(40)]
    few += [_row("a1", "ecc", host="node-3"), _row("a2", "ecc", host="node-3")]
    assert not any(h["repeated"] for h in aggregate.summarize(few)["hosts"])


def test_chance_of_at_least():
    assert aggregate.chance_of_at_least(2, 4, 0.08) == pytest.approx(0.03442688)
    assert aggregate.chance_of_at_least(3, 3, 0.5) == pytest.approx(0.125)
    assert aggregate.chance_of_at_least(1, 3, 0.5) == pytest.approx(0.875)
    assert aggregate.chance_of_at_least(0, 5, 0.1) == 1.0
    assert aggregate.chance_of_at_least(6, 5, 0.1) == 0.0


def test_per_day_counts():
    rows = [_row("a", "oom", day="2026-11-28"), _row("b", day="2026-11-28"),
            _row("c", "oom", day="2026-11-29"), _row("d", day=None, error="gone")]
    days = aggregate.summarize(rows)["days"]
    assert [(d["day"], d["jobs"], d["diagnosed"], d["unexplained"], d["unreadable"]) for d in days] \
        == [("2026-11-28", 2, 1, 1, 0), ("2026-11-29", 1, 1, 0, 0), ("unknown", 1, 0, 0, 1)]


def test_unexplained_error_lines_are_clustered_into_templates():
    rows = [_row(f"j{i}", lines=[f"connection to 10.0.0.{i}:29500 refused after {i} retries",
                                 f"bad shard /data/shard-{i}/part-{i}.arrow at offset 0x{i:04x}"])
            for i in range(5)]
    rows += [_row("k", lines=["NCCL WARN Cuda failure 'unspecified launch failure'"])]
    templates = aggregate.summarize(rows)["unexplained_templates"]
    assert [(t["jobs"], t["lines"]) for t in templates] == [(5, 5), (5, 5), (1, 1)]
    assert templates[0]["examples"] == ["j0", "j1", "j2"]
    joined = [t["template"] for t in templates]
    assert "bad shard <PATH> at offset <HEX>" in joined
    assert "connection to <IP> refused after <NUM> retries" in joined


# ---- runners: local pool and Dask give the same rows, each job once ---------------------------------

def _sorted(rows):
    return sorted(rows, key=lambda r: r["job"])


def test_local_pool_rows(tmp_path):
    logs = make_fleet(tmp_path, 8)
    jobs = group(expand([str(logs)])[0], per_dir=True)
    rows = list(runner.scan_local(jobs, CATALOGUE, workers=2))
    assert len(rows) == 8 and sorted(by_job(rows)) == [j.name for j in jobs]
    assert rows == [r for r in rows if r["error"] is None]
    assert {r["diagnosis"] for r in rows} == {"demo-oom", "demo-driver-too-old", None}


def collect(rows, seconds: float = 60) -> list[dict]:
    """All rows of a runner's iterator, or a test failure (not a hung suite) after `seconds`."""
    out: list[dict] = []
    t = threading.Thread(target=lambda: out.extend(rows), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"the scan did not finish in {seconds} s ({len(out)} rows)"
    return out


def _write_fifo_later(path, data: bytes) -> threading.Thread:
    """Write `data` into the FIFO once a reader opens it (in a thread: open blocks until then)."""
    def write():
        with open(path, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_local_pool_survives_a_killed_process(tmp_path):
    logs = make_fleet(tmp_path, 6)
    stuck = tmp_path / "logs" / "job-stuck"
    stuck.mkdir()
    os.mkfifo(stuck / "rank0.log")  # its reader blocks until the test writes: in flight for sure
    # named explicitly: walking a folder skips FIFOs (issue 13 item 10)
    jobs = group(expand([str(logs), str(stuck / "rank0.log")])[0], per_dir=True)
    before = set(multiprocessing.active_children())
    stream = runner.scan_local(jobs, CATALOGUE, workers=2)
    rows = [next(stream)]
    pool = [p for p in multiprocessing.active_children() if p not in before]
    assert len(pool) == 2
    os.kill(pool[0].pid, signal.SIGKILL)  # the pool is broken: its other process is stopped too
    for process in pool:
        assert multiprocessing.connection.wait([process.sentinel], timeout=30)
    # only now feed the FIFO, so that the job's rerun in a fresh pool reads it
    writer = _write_fifo_later(stuck / "rank0.log", (FLEET / "torchrun-oom.log").read_bytes())
    rows += collect(stream)
    writer.join(timeout=30)
    assert sorted(r["job"] for r in rows) == sorted(j.name for j in jobs)  # each job once
    assert by_job(rows)[str(stuck)]["diagnosis"] == "demo-oom"


@pytest.fixture(scope="module")
def dask_client(tmp_path_factory):
    from distributed import Client, LocalCluster

    env = {"FAULTLENS_CACHE": str(tmp_path_factory.mktemp("dask-cache")),
           "FAULTLENS_CATALOGUE": CATALOGUE}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env=env) as cluster, Client(cluster) as client:
        yield client


def test_local_and_dask_rows_are_identical(tmp_path, dask_client):
    logs = make_fleet(tmp_path, 8)
    (logs / "job-003" / "rank1.log").write_bytes(b"")
    jobs = group(expand([str(logs)])[0], per_dir=True)
    local = list(runner.scan_local(jobs, CATALOGUE, workers=2))
    dask = list(runner.scan_dask(jobs, dask_client, CATALOGUE))
    assert len(dask) == len(jobs)
    assert _sorted(local) == _sorted(dask)


def test_scan_command_on_a_dask_scheduler(tmp_path, dask_client, capsys):
    logs = make_fleet(tmp_path, 4)
    address = dask_client.scheduler.address
    assert main(["scan", str(logs), "--job-per-dir", "--scheduler", address, "--workers", "2",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["jobs"], summary["diagnosed"], summary["unexplained"]) == (4, 2, 2)


def test_dask_worker_killed_mid_scan_loses_and_repeats_nothing(tmp_path, dask_client):
    logs = make_fleet(tmp_path, 12)
    stuck = logs / "job-000-stuck"
    stuck.mkdir()
    os.mkfifo(stuck / "rank0.log")
    # named explicitly: walking a folder skips FIFOs (issue 13 item 10)
    jobs = group(expand([str(logs), str(stuck / "rank0.log")])[0], per_dir=True)
    futures = runner.submit(jobs, dask_client, CATALOGUE)
    stuck_key = futures[[j.name for j in jobs].index(str(stuck))].key
    deadline = time.monotonic() + 60
    while not (victim := [w for w, keys in dask_client.processing().items() if stuck_key in keys]):
        assert time.monotonic() < deadline, "the blocked task was never scheduled"
        time.sleep(0.05)
    pid = dask_client.run(os.getpid, workers=victim)[victim[0]]
    os.kill(pid, signal.SIGKILL)  # mid-scan: its task cannot finish before the FIFO is written
    while victim[0] in dask_client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.workers)):
        assert time.monotonic() < deadline, "the scheduler never noticed the dead worker"
        time.sleep(0.05)
    # only now feed the FIFO, so that the task's rerun, not the dying worker, reads it
    writer = _write_fifo_later(stuck / "rank0.log", (FLEET / "torchrun-oom.log").read_bytes())
    rows = collect(runner.gather(futures, jobs))
    writer.join(timeout=30)
    assert sorted(r["job"] for r in rows) == sorted(j.name for j in jobs)  # each job exactly once
    assert by_job(rows)[str(stuck)]["diagnosis"] == "demo-oom"  # rerun on a live worker
    assert not any(r["error"] for r in rows)


# ---- S3 through fsspec, against moto's server on loopback -----------------------------------------

@pytest.fixture(scope="module")
def s3_server():
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch):
    import boto3
    import s3fs

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    s3fs.S3FileSystem.clear_instance_cache()
    client = boto3.client("s3", endpoint_url=s3_server)
    client.create_bucket(Bucket="fleet")
    oom = (FLEET / "torchrun-oom.log").read_bytes()
    client.put_object(Bucket="fleet", Key="jobs/a/rank0.log", Body=oom)
    client.put_object(Bucket="fleet", Key="jobs/a/rank1.log", Body=(FLEET / "healthy.log").read_bytes())
    client.put_object(Bucket="fleet", Key="jobs/b/rank0.log.gz",
                      Body=gzip.compress((FLEET / "syslog-driver.log").read_bytes()))
    client.put_object(Bucket="fleet", Key="jobs/c/rank0.log", Body=b"")
    client.put_object(Bucket="fleet", Key="jobs/d/big.log", Body=b"noise line\n" * 40_000 + oom)
    yield client
    for obj in client.list_objects_v2(Bucket="fleet").get("Contents", []):
        client.delete_object(Bucket="fleet", Key=obj["Key"])
    client.delete_bucket(Bucket="fleet")


def test_s3_objects_are_read_by_the_worker(s3, monkeypatch):
    from faultlens.fleet import remote

    monkeypatch.setattr(remote, "SPOOL_BYTES", 64 << 10)  # big.log (440 KB) spills to a file
    files, _ = expand(["s3://fleet/jobs/"])
    jobs = group(files, per_dir=True)
    assert [j.name for j in jobs] == [f"s3://fleet/jobs/{x}" for x in "abcd"]
    rows = by_job(scan_job(j, CATALOGUE) for j in jobs)
    a, b, c, d = (rows[f"s3://fleet/jobs/{x}"] for x in "abcd")
    assert a["diagnosis"] == "demo-oom" and a["evidence_file"] == "s3://fleet/jobs/a/rank0.log"
    assert a["host"] == "node-0" and a["day"] == "2026-11-29"
    assert b["diagnosis"] == "demo-driver-too-old"  # gzip detected by its magic bytes
    assert "is empty" in c["error"]
    assert d["diagnosis"] == "demo-oom" and d["evidence_line"] == 40_006
    missing = scan_job(Job("m", ("s3://fleet/jobs/nope.log",)), CATALOGUE)
    assert "no such object" in missing["error"]


def test_scan_command_on_s3(s3, tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    code = main(["scan", "s3://fleet/jobs/*/rank0.log*", "--job-per-dir", "--out", str(out),
                 "--workers", "2", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    # the glob leaves out jobs/a/rank1.log and jobs/d/big.log
    assert (summary["jobs"], summary["diagnosed"], summary["unreadable"]) == (3, 2, 1)
    assert len(out.read_text().splitlines()) == 3


# ---- the command ---------------------------------------------------------------------------------

def test_scan_command_text_report(tmp_path, capsys):
    logs = make_fleet(tmp_path, 8)
    (logs / "job-009").mkdir()
    (logs / "job-009" / "rank0.log").write_bytes(b"\x00\x01binary")
    out = tmp_path / "rows.parquet"
    code = main(["scan", str(logs), "--job-pattern", r"logs/(?P<job>job-\d+)/", "--out", str(out),
                 "--workers", "2"])
    text, err = capsys.readouterr()
    assert code == 0
    assert text.startswith("faultlens scan: 9 jobs: 4 diagnosed, 4 unexplained, 1 unreadable")
    assert "demo-oom" in text and "node-0" in text and "2026-11-29" in text
    assert "connection to <IP> refused after <NUM> retries" in text
    assert "job-009" in text and "binary" in text
    assert "9 rows written" in err

    import pyarrow.parquet as pq

    assert sorted(pq.read_table(out).column("job").to_pylist()) == [f"job-{i:03d}" for i in
                                                                    (*range(8), 9)]


@pytest.mark.parametrize("argv, code, message", [
    (["--job-pattern", "no-group"], 2, "named group"),
    (["--out", "rows.txt"], 2, "unknown format"),
    (["--workers", "0"], 2, "--workers"),
    (["--job-pattern", "(?P<job>x)", "--job-per-dir"], 2, "not allowed with"),
])
def test_scan_usage_errors(tmp_path, capsys, argv, code, message):
    log = tmp_path / "a.log"
    log.write_text("x\n")
    try:
        got = main(["scan", str(log), *argv])
    except SystemExit as exc:  # argparse's own errors
        got = exc.code
    assert got == code
    assert message in capsys.readouterr().err


def test_scan_with_nothing_matched(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "*.log")]) == 3
    assert "no log file matched" in capsys.readouterr().err


def test_scan_records_incidents_in_the_store(tmp_path, capsys):
    from faultlens.store.incidents import IncidentFilter, IncidentStore

    logs = make_fleet(tmp_path, 4)
    for rank in (0, 1):
        (logs / "job-001" / f"rank{rank}.log").write_bytes(b"")
    db = tmp_path / "incidents.db"
    assert main(["scan", str(logs), "--job-per-dir", "--db", str(db), "--workers", "2"]) == 0
    assert "3 incidents added" in capsys.readouterr().err
    store = IncidentStore(str(db))
    stored = {i.job: i for i in store.list_incidents(IncidentFilter(source="scan"))}
    store.close()
    assert sorted(stored) == [str(logs / f"job-00{i}") for i in (0, 2, 3)]  # not the unreadable one
    oom = stored[str(logs / "job-000")]
    assert (oom.reference, oom.host, oom.created_at.date().isoformat()) == \
        ("demo-oom", "node-0", "2026-11-29")


def test_diagnose_start_up_imports_no_fleet_dependency(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("x\n")
    code = ("import sys; from faultlens.cli import main; main(['diagnose', sys.argv[1]]); "
            "heavy = {'dask', 'distributed', 'fsspec', 'drain3', 'pyarrow', 'rich', 's3fs'}; "
            "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))")
    res = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=False)
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stderr
