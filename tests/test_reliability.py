"""Issue 13: the server and the agents under hostile or heavy input - decompression, work off
the event loop, bounded memory, malformed requests - each test named for the issue's item."""

from __future__ import annotations

import bz2
import gzip
import os
import subprocess
import sys
import threading
import tracemalloc

import pytest
import zstandard
from conftest import DATA, ROOT
from fastapi.testclient import TestClient

from faultlens.web.app import create_app
from faultlens.web.evidence import LogLines, shown_lines

OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
RAW = {"content-type": "application/octet-stream"}
WAIT_S = 60  # only ever reached when the behaviour under test is broken


@pytest.fixture
def make_client(tmp_path):
    def make(**kw):
        return TestClient(create_app(str(tmp_path / "incidents.db"), catalogue=DATA / "catalogue", **kw))
    return make


def error_code(resp) -> str:
    return resp.json()["error"]["code"]


# --- item 2 and 4: decompression -------------------------------------------------------------------

def test_issue13_item2_multi_member_gzip_upload(make_client):
    client = make_client()
    body = gzip.compress(b"INFO start\n") * 5000 + gzip.compress(OOM)
    resp = client.post("/api/v1/diagnose?store=false", content=body, headers=RAW)
    assert resp.status_code == 200, resp.text
    assert resp.json()["diagnoses"][0]["id"] == "demo-oom"
    assert resp.json()["input"]["files"][0]["lines"] == 5001


def test_issue13_item4_nested_compression_counts_against_the_limit(make_client):
    """A 1,436-byte gzip of a zstd stream made the engine read 2 GiB."""
    client = make_client(max_upload_bytes=1 << 20)
    inner = zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 << 20))
    body = gzip.compress(inner)
    assert len(body) < 64 << 10
    resp = client.post("/api/v1/diagnose?store=false", content=body, headers=RAW)
    assert resp.status_code == 413 and error_code(resp) == "too_large"


def test_issue13_item4_nested_compression_within_the_limit_is_read(make_client):
    client = make_client()
    resp = client.post("/api/v1/diagnose?store=false", content=gzip.compress(bz2.compress(OOM)),
                       headers=RAW)
    assert resp.status_code == 200 and resp.json()["diagnoses"][0]["id"] == "demo-oom"
    assert resp.json()["input"]["files"][0]["compression"] == "gzip"


@pytest.mark.parametrize("inner", [b"\x28\xb5\x2f\xfdgarbage\n", b"BZh91AY&SYgarbage\n",
                                   b"\xfd7zXZ\x00garbage\n", b"\x1f\x8b\x08garbage\n"])
def test_issue13_item4_gzip_around_a_corrupt_inner_stream_is_a_4xx(make_client, inner):
    resp = make_client().post("/api/v1/diagnose?store=false", content=gzip.compress(inner), headers=RAW)
    assert resp.status_code == 422 and error_code(resp) == "unreadable_log", resp.text


def test_issue13_item4_truncated_zstd_upload_is_refused(make_client):
    data = zstandard.ZstdCompressor().compress(OOM * 1000)
    resp = make_client().post("/api/v1/diagnose?store=false", content=data[:-5], headers=RAW)
    assert resp.status_code == 422 and "truncated" in resp.json()["error"]["message"]


# --- item 3: heavy work off the event loop ---------------------------------------------------------

def _slow_diagnose(monkeypatch, started: threading.Event, release: threading.Event):
    from faultlens.web.scanners import ScannerPool

    real = ScannerPool.diagnose

    def slow(self, data, name):
        started.set()
        release.wait(WAIT_S)
        return real(self, data, name)

    monkeypatch.setattr(ScannerPool, "diagnose", slow)


def test_issue13_item3_a_get_is_answered_while_a_diagnosis_runs(make_client, monkeypatch):
    """The diagnosis cannot finish before the GET has been answered (it waits for it): if the
    diagnosis held the event loop, the GET would never come back and neither would it."""
    started, release = threading.Event(), threading.Event()
    _slow_diagnose(monkeypatch, started, release)
    results = {}
    with make_client() as client:
        def upload():
            results["post"] = client.post("/api/v1/diagnose?store=false", content=OOM, headers=RAW)

        poster = threading.Thread(target=upload)
        poster.start()
        assert started.wait(WAIT_S)
        try:
            get = client.get("/api/v1/references", timeout=WAIT_S)
            page = client.get("/", timeout=WAIT_S)
            assert get.status_code == 200 and page.status_code == 200
            assert "post" not in results  # the diagnosis was still running
        finally:
            release.set()
            poster.join(WAIT_S)
    assert results["post"].status_code == 200


def test_issue13_item3_a_request_over_its_budget_gets_503(make_client, monkeypatch):
    started, release = threading.Event(), threading.Event()
    _slow_diagnose(monkeypatch, started, release)
    with make_client(budget_s=0.2) as client:
        try:
            resp = client.post("/api/v1/diagnose?store=false", content=OOM, headers=RAW)
        finally:
            release.set()
        assert resp.status_code == 503 and error_code(resp) == "too_slow"


def test_issue13_item3_a_saturated_server_says_busy(make_client, monkeypatch):
    started, release = threading.Event(), threading.Event()
    _slow_diagnose(monkeypatch, started, release)
    with make_client(scanners=1) as client:
        client.app.state.faultlens.heavy.max_pending = 1
        poster = threading.Thread(target=lambda: client.post("/api/v1/diagnose?store=false",
                                                             content=OOM, headers=RAW))
        poster.start()
        try:
            assert started.wait(WAIT_S)
            resp = client.post("/api/v1/diagnose?store=false", content=OOM, headers=RAW)
            assert resp.status_code == 503 and error_code(resp) == "busy"
            assert resp.headers["retry-after"]
        finally:
            release.set()
            poster.join(WAIT_S)


# --- item 8: the evidence view -------------------------------------------------------------------

def test_issue13_item8_evidence_view_keeps_only_the_windows():
    """POST /diagnose with 31 MB of short lines peaked near 900 MiB: the view split the whole
    log into one object per line. Now only the lines around the evidence are kept."""
    n = 300_000
    data = b"".join(b"step %d ok\n" % i for i in range(1, n + 1))
    diagnosis = {"id": "x", "evidence": [{"file": "f", "line": n - 10, "signal": "s"},
                                         {"file": "f", "line": 7, "signal": "s"}]}
    tracemalloc.start()
    lines = LogLines(data, shown_lines([diagnosis], "f"))
    _size, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(lines) == n and len(lines._lines) == 10
    assert lines[n - 11] == b"step %d ok" % (n - 10) and lines[6] == b"step 7 ok"
    assert peak < len(data) // 10  # a list of every line would be several times the log


def test_issue13_item8_diagnose_page_shows_evidence_of_a_long_log(make_client):
    log = b"".join(b"INFO step %d\n" % i for i in range(100_000)) + OOM + b"INFO after\n"
    page = make_client().post("/diagnose", files={"file": ("big.log", log)})
    assert page.status_code == 200
    assert "100001" in page.text and "INFO step 99999" in page.text and "INFO after" in page.text


# --- item 11: malformed requests -----------------------------------------------------------------

@pytest.mark.parametrize("path,status", [
    ("/api/v1/incidents/9999999999999999999999", 404),
    ("/api/v1/incidents/-5", 404),
    ("/incidents/9999999999999999999999", 404),
    ("/api/v1/incidents?offset=99999999999999999999999", 422),
])
def test_issue13_item11_huge_numbers_are_404_or_422(make_client, path, status):
    resp = make_client().get(path)
    assert resp.status_code == status, resp.text


def _report(**diagnosis) -> dict:
    d = {"id": "demo-oom", "title": "t", "severity": "failure", "confidence": 0.5, "evidence": []}
    d.update(diagnosis)
    return {"schema": 1, "diagnoses": [d]}


def test_issue13_item11_a_report_with_no_diagnoses_renders(make_client):
    client = make_client()
    for report in ({"schema": 1, "diagnoses": []},
                   {"schema": 1, "diagnoses": [], "input": {"files": []}, "failure": False}):
        created = client.post("/api/v1/incidents", json={"report": report, "log": "x\n"})
        assert created.status_code == 201, created.text
        page = client.get(created.json()["url"])
        assert page.status_code == 200 and "Nothing in the catalogue matched" in page.text


@pytest.mark.parametrize("report", [
    _report(confidence="abc"), _report(confidence=True), _report(confidence=1e300),
    _report(id=5), _report(severity=None), _report(evidence="x"),
    _report(evidence=[{"file": "f", "line": "3", "text": "t"}]), _report(first={"line": None}),
    _report(checks=[1]), {"schema": 1, "diagnoses": [7]}, {"schema": 1, "diagnoses": [], "input": []},
])
def test_issue13_item11_malformed_report_fields_are_422(make_client, report):
    resp = make_client().post("/api/v1/incidents", json={"report": report})
    assert resp.status_code == 422, resp.text


def test_issue13_item11_the_store_refuses_a_malformed_report(tmp_path):
    from faultlens.store.incidents import IncidentStore

    store = IncidentStore(str(tmp_path / "i.db"))
    with pytest.raises(ValueError, match="confidence"):
        store.add_incident(_report(confidence="high"))
    assert store.get_incident(10 ** 30) is None and store.get_incident(0) is None


# --- items 7, 10, 12: run, watch, scan ---------------------------------------------------------

def test_issue13_item7_run_queue_is_bounded_and_the_log_complete(tmp_path, monkeypatch, capfd):
    """A child printing 300 MB drove RSS to 309 MB: the queue between the pipe readers and the
    scanner grew without bound. With a slow scanner the readers now wait (the child blocks on
    its pipe) and the saved log still holds every byte."""
    import queue

    from faultlens.cli import main
    from faultlens.commands import run
    from faultlens.live import LiveSession

    seen = []

    class Tracking(queue.Queue):
        def put(self, item, *a, **kw):
            super().put(item, *a, **kw)
            seen.append(self.qsize())

    real_feed = LiveSession.feed

    def slow_feed(self, name, data):
        threading.Event().wait(0.002)  # the scanner falls behind the child
        real_feed(self, name, data)

    monkeypatch.setattr(run.queue, "Queue", Tracking)
    monkeypatch.setattr(LiveSession, "feed", slow_feed)
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    log = tmp_path / "run.log"
    lines = 400_000
    child = ("import sys\nw = sys.stdout.write\n"
             f"for i in range({lines}): w('torch.OutOfMemoryError: CUDA out of memory. line %d\\n' % i)\n")
    assert main(["run", "--no-env", "--no-alerts", "--log", str(log), "--", sys.executable, "-c", child]) == 0
    capfd.readouterr()
    saved = log.read_bytes()
    assert saved.count(b"\n") == lines and saved.endswith(b"line %d\n" % (lines - 1))
    assert len(seen) > run.QUEUE_CHUNKS and max(seen) <= run.QUEUE_CHUNKS


def test_issue13_item6_live_session_splits_long_lines_ending_inside_the_data(demo_scanner):
    from faultlens.live import LiveSession

    session = LiveSession(demo_scanner)
    session.feed("x", b"a" * (3 << 20) + b"\n" + OOM)
    report = session.report()
    assert session.streams["x"].line_no == 3  # the split pieces keep one line number
    assert session.streams["x"].scanner.result.stats.split_lines == 2
    assert report.top is not None and report.top.id == "demo-oom"


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.log"
    os.mkfifo(path)
    return path


def test_issue13_item10_watch_idle_exit_on_a_fifo_with_no_writer(fifo, tmp_path):
    env = {**os.environ, "FAULTLENS_CATALOGUE": str(DATA / "catalogue"),
           "FAULTLENS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run([sys.executable, "-m", "faultlens", "watch", "--idle-exit", "1", str(fifo)],
                         capture_output=True, text=True, env=env, timeout=WAIT_S, check=False)
    assert res.returncode == 0, res.stderr


def test_issue13_item10_watch_reads_a_fifo_whenever_a_writer_comes(fifo):
    from faultlens.commands.watch import FileFollower

    follower = FileFollower(str(fifo), from_end=False)
    try:
        assert follower.read() == (b"", None)  # no writer: nothing, no waiting
        writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(writer, OOM)
        os.close(writer)
        assert follower.read() == (OOM, None)
        assert follower.read() == (b"", None)  # the writer left
    finally:
        follower.close()


def test_issue13_item10_scan_dir_skips_fifos(fifo, tmp_path):
    from faultlens.fleet.jobs import expand

    (tmp_path / "a.log").write_bytes(OOM)
    files, unmatched = expand([str(tmp_path)])
    assert files == [str(tmp_path / "a.log")] and not unmatched
    files, _ = expand([str(tmp_path / "*.log")])
    assert files == [str(tmp_path / "a.log")]


def test_issue13_item10_scan_cli_on_a_folder_with_a_fifo_finishes(fifo, tmp_path):
    (tmp_path / "a.log").write_bytes(OOM)
    env = {**os.environ, "FAULTLENS_CATALOGUE": str(DATA / "catalogue"),
           "FAULTLENS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run([sys.executable, "-m", "faultlens", "scan", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=WAIT_S * 2, check=False)
    assert res.returncode == 0, res.stderr
    assert "demo-oom" in res.stdout


def test_issue13_item12_watch_rereads_a_file_truncated_and_regrown_past_the_offset(tmp_path):
    from faultlens.commands.watch import FileFollower

    path = tmp_path / "train.log"
    path.write_bytes(b"2026-01-01 step 1\n2026-01-01 step 2\n")
    follower = FileFollower(str(path), from_end=False)
    try:
        assert follower.read()[0] == b"2026-01-01 step 1\n2026-01-01 step 2\n"
        new = b"2026-01-02 restart\n" + OOM + b"2026-01-02 step 1 loss 0.5\n"
        path.write_bytes(new)  # truncated and rewritten, longer than before, between polls
        assert follower.read() == (b"", "truncated")
        assert follower.read() == (new, None)
        with open(path, "ab") as fh:  # ordinary growth is not a rewrite
            fh.write(b"more\n")
        assert follower.read() == (b"more\n", None)
    finally:
        follower.close()


def test_issue13_item12_same_first_bytes_rewritten_is_still_noticed(tmp_path):
    from faultlens.commands.watch import FileFollower

    path = tmp_path / "train.log"
    path.write_bytes(b"INFO starting\n" + b"step 1 loss 0.9\n")
    follower = FileFollower(str(path), from_end=False)
    try:
        follower.read()
        path.write_bytes(b"INFO starting\n" + b"step 1 loss 0.7\n" + OOM)
        assert follower.read() == (b"", "truncated")
    finally:
        follower.close()


# --- item 3: every way out of the server is redacted -------------------------------------------

def test_issue13_item3_probe_secrets_reach_no_page_api_or_store(make_client, tmp_path):
    from faultlens.store.incidents import IncidentStore

    probe = (DATA / "issue13" / "leaking-secrets.log").read_bytes()
    secrets = (DATA / "issue13" / "leaking-secrets.secrets").read_text().split()
    # each probe line next to an evidence line (in the page's context windows), and the
    # one-line kinds on evidence lines too, so that they reach the diagnosis itself
    log = b"".join(OOM + line + b"\n" for line in probe.splitlines()) + b"".join(
        OOM.rstrip(b"\n") + b" " + line + b"\n" for line in probe.splitlines()
        if not line.startswith((b"-----", b"MII", b"Zp3")))
    client = make_client()
    page = client.post("/diagnose", data={"text": log.decode(), "save": "1"})
    api = client.post("/api/v1/diagnose", content=log, headers=RAW)
    assert page.status_code == 200 and api.status_code == 200
    incident = api.headers["x-faultlens-incident"]
    agent = client.post("/api/v1/incidents", json={"report": api.json(), "log": log.decode(),
                                                   "host": "h", "job": probe.decode()[:200]})
    shown = [page.text, api.text, client.get(f"/incidents/{incident}").text,
             client.get(f"/api/v1/incidents/{incident}").text, client.get("/incidents/1").text,
             client.get(agent.json()["url"]).text, client.get("/api/v1/incidents").text]
    store = IncidentStore(str(tmp_path / "incidents.db"))
    for i in (1, int(incident), agent.json()["id"]):
        found = store.get_incident(i)
        shown += [found.log, str(found.diagnosis), found.job]
    for text in shown:
        for secret in secrets:
            assert secret[:16] not in text, (secret, text[:200])
