"""env, preflight, check, watch, run and the install() hook (issue: live and before-launch surfaces)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DATA, ROOT

OOM = "[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB\n"


@pytest.fixture
def env(tmp_path):
    e = {**os.environ, "FAULTLENS_CATALOGUE": str(DATA / "catalogue"),
         "FAULTLENS_CACHE": str(tmp_path / "cache"), "FAULTLENS_RUNS": str(tmp_path / "runs"),
         "PYTHONPATH": str(ROOT / "src")}
    e.pop("COLUMNS", None)
    return e


def fl(*args, env, **kw):
    return subprocess.run([sys.executable, "-m", "faultlens", *args], capture_output=True, text=True,
                          env=env, **kw)


# --- env ---------------------------------------------------------------------------------------

def test_env_on_this_gpu_less_machine_never_imports_torch(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz0123")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("WANDB_API_KEY", "0123456789abcdef")  # not a listed prefix: not collected
    from faultlens.facts.snapshot import collect

    before = set(sys.modules)
    snap = collect()
    assert "torch" not in set(sys.modules) - before
    assert snap["schema"] == 1 and snap["kind"] == "faultlens-env"
    facts = snap["facts"]
    assert facts["python.version"].startswith("3.")
    assert facts["os.family"] in {"linux", "macos", "windows"}
    if facts["gpu.count"] == "0":
        assert any("nvidia-smi" in a for a in snap["absent"])
    assert facts["env.HF_TOKEN"] == "<redacted>"
    assert facts["env.NCCL_DEBUG"] == "INFO"
    assert "env.WANDB_API_KEY" not in facts
    assert "hf_abcdefghij" not in json.dumps(snap)


def test_env_cli_json_and_file(tmp_path, env):
    out = tmp_path / "snap.json"
    res = fl("env", "--json", "-o", str(out), env=env)
    assert res.returncode == 0, res.stderr
    # with -o the snapshot goes to the file only, and the command says so
    assert res.stdout == "" and f"snapshot written to {out}" in res.stderr
    assert json.loads(out.read_text())["facts"]["python.version"].startswith("3.")
    dumped = fl("env", "--json", env=env)
    assert json.loads(dumped.stdout)["facts"].keys() == json.loads(out.read_text())["facts"].keys()
    text = fl("env", env=env)
    assert text.returncode == 0 and "python.version" in text.stdout


def test_snapshot_facts_drive_diagnose(tmp_path, env):
    log = tmp_path / "a.log"
    log.write_text("RuntimeError: indices should be either on cpu or on the same device\n"
                   '  File "/x/emulation_utils.py", line 3, in f\n')
    res = fl("diagnose", "--json", "--env", str(DATA / "env" / "gpu-node-snapshot.json"), str(log), env=env)
    data = json.loads(res.stdout)
    assert data["input"]["facts"]["gpu.compute_capability"] == "9.0"
    checks = {c["id"]: c["status"] for c in data["diagnoses"][0]["checks"]}
    assert checks["old-gpu"] == "pass"


# --- preflight and check -----------------------------------------------------------------------

def test_preflight_on_a_recorded_gpu_snapshot(env):
    res = fl("preflight", "--json", "--env", str(DATA / "env" / "gpu-node-snapshot.json"), env=env)
    data = json.loads(res.stdout)
    ids = [f["id"] for f in data["findings"]]
    assert "demo-driver-too-old" in ids
    finding = data["findings"][ids.index("demo-driver-too-old")]
    assert {"condition": "torch.cuda > cuda.version (12.2)", "value": "12.4"} in finding["conditions"]
    assert res.returncode == 1  # a failure-severity precondition holds
    text = fl("preflight", "--env", str(DATA / "env" / "gpu-node-snapshot.json"), env=env)
    assert "FAILURE demo-driver-too-old" in text.stdout and "fix:" in text.stdout


def test_preflight_clean_snapshot_exits_zero(tmp_path, env):
    snap = tmp_path / "ok.json"
    snap.write_text(json.dumps({"facts": {"gpu.count": "8", "torch.cuda": "12.1", "cuda.version": "12.4"}}))
    res = fl("preflight", "--env", str(snap), env=env)
    assert res.returncode == 0 and "no known trap" in res.stdout


def test_preflight_unknown_facts_are_not_findings_unless_asked(tmp_path, env):
    snap = tmp_path / "partial.json"
    snap.write_text(json.dumps({"facts": {"gpu.count": "8"}}))
    assert "demo-driver-too-old" not in fl("preflight", "--env", str(snap), env=env).stdout
    assert "(unknown)" in fl("preflight", "--all", "--env", str(snap), env=env).stdout


def test_check_runs_file_header_and_env_probes(tmp_path, env):
    pointer = tmp_path / "model.safetensors"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 4976698672\n")
    real = tmp_path / "real.safetensors"
    real.write_bytes(b"\x88\x00\x00\x00\x00\x00\x00\x00{\"__metadata__\":{}}")
    hit = fl("check", "demo-lfs-pointer", "--json", "--file", str(pointer), env=env)
    assert hit.returncode == 1 and json.loads(hit.stdout)["probes"][0]["status"] == "hit"
    clear = fl("check", "demo-lfs-pointer", "--file", str(real), env={**env, "HF_HUB_OFFLINE": "0"})
    assert clear.returncode == 0 and "nothing found" in clear.stdout
    offline = fl("check", "demo-lfs-pointer", "--file", str(real), env={**env, "HF_HUB_OFFLINE": "1"})
    assert offline.returncode == 1 and "offline-mode" in offline.stdout
    assert fl("check", "demo-oom", env=env).returncode == 2


# --- watch -------------------------------------------------------------------------------------

def _start_watch(env, *args):
    return subprocess.Popen([sys.executable, "-m", "faultlens", "watch", "--json", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _read_alert(proc, timeout=10.0):
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.1):
            line = proc.stdout.readline()
            if not line:
                return None
            msg = json.loads(line)
            if msg["type"] == "alert":
                return msg
    return None


def test_watch_survives_rotation_and_truncation(tmp_path, env):
    log = tmp_path / "train.log"
    log.write_text("step 1\n")
    proc = _start_watch(env, str(log), "--idle-exit", "3")
    try:
        time.sleep(0.5)
        log.rename(tmp_path / "train.log.1")  # logrotate: move away, start a new file
        log.write_text("step 2\n" + OOM)
        alert = _read_alert(proc)
        assert alert and alert["id"] == "demo-oom"
        assert alert["first"]["file"].startswith(str(log))
        with open(log, "w") as fh:  # truncation in place (copytruncate)
            fh.write("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n")
        alert = _read_alert(proc)
        assert alert and alert["id"] == "demo-wrapper"
    finally:
        out, err = proc.communicate(timeout=15)
    final = [json.loads(x) for x in out.splitlines() if x][-1]
    assert final["type"] == "report" and proc.returncode == 0, err


def test_watch_alerts_before_the_writer_finishes(tmp_path, env):
    log = tmp_path / "live.log"
    log.write_text("")
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
with open({str(log)!r}, "a", buffering=1) as fh:
    for i in range(5):
        fh.write(f"step {{i}} loss 0.5\\n"); time.sleep(0.1)
    fh.write({OOM!r})
    time.sleep(4)
    fh.write("still running\\n")
"""])
    proc = _start_watch(env, str(log), "--idle-exit", "6")
    try:
        alert = _read_alert(proc, timeout=8)
        writer_running = writer.poll() is None
        assert alert and alert["id"] == "demo-oom"
        assert writer_running, "the alert must arrive while the job is still writing"
    finally:
        writer.wait(timeout=10)
        proc.communicate(timeout=15)


def test_watch_pipe_ordered_evidence_and_final_report(env):
    text = ("(EngineCore pid=9) INFO 04-09 13:00:58 [nvfp4.py:285] Using 'EMULATION' backend out of x\n"
            '  File "/v/emulation_utils.py", line 38, in break_fp4_bytes\n'
            "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n")
    res = subprocess.run([sys.executable, "-m", "faultlens", "watch", "--json", "-"], input=text,
                         capture_output=True, text=True, env=env)
    msgs = [json.loads(x) for x in res.stdout.splitlines()]
    alerts = [m for m in msgs if m["type"] == "alert"]
    assert alerts[0]["id"] == "demo-specific-index"
    assert [m["type"] for m in msgs][-1] == "report"
    assert len({a["id"] for a in alerts}) == len(alerts)  # once per incident


def test_live_session_memory_is_bounded():
    from faultlens.catalogue import load
    from faultlens.engine.compile import build
    from faultlens.engine.scan import FIRST_HITS, LAST_HITS
    from faultlens.live import LiveSession

    session = LiveSession(build(load(DATA / "catalogue")))
    for _ in range(3000):
        session.feed("s", OOM.encode() + b"noise line\n" * 5)
    stream = session.streams["s"]
    assert len(stream.scanner.result.lines) <= 2 * (FIRST_HITS + LAST_HITS)
    assert len(stream.pending) == 0
    assert session.poll_alerts(force=True)[0].diagnosis.id == "demo-oom"
    assert session.poll_alerts(force=True) == []


def test_webhook_receives_alerts(env):
    import http.server
    import threading

    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/hook"
        res = subprocess.run([sys.executable, "-m", "faultlens", "watch", "-", "--webhook", url, "--slack"],
                             input=OOM, capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        assert received and "demo-oom" in received[0]["text"]
    finally:
        server.shutdown()


# --- run ---------------------------------------------------------------------------------------

def test_run_passes_output_and_exit_code_and_diagnoses(tmp_path, env):
    script = f"import sys; print('hello from the job'); sys.stderr.write({OOM!r}); sys.exit(3)"
    res = fl("run", "--log", str(tmp_path / "job.log"), "--", sys.executable, "-c", script, env=env)
    assert res.returncode == 3
    assert res.stdout.startswith("hello from the job")
    assert "demo-oom" in res.stderr and "exited with 3" in res.stderr
    saved = (tmp_path / "job.log").read_text()
    assert "hello from the job" in saved and "CUDA out of memory" in saved
    assert json.loads((tmp_path / "job.env.json").read_text())["kind"] == "faultlens-env"


def test_run_success_is_quiet(env):
    res = fl("run", "--no-env", "--", sys.executable, "-c", "print('ok')", env=env)
    assert res.returncode == 0 and res.stdout == "ok\n" and res.stderr == ""


def test_run_forwards_signals_to_the_child(tmp_path, env):
    ready = tmp_path / "ready"
    script = (f"import signal, sys, time, pathlib\n"
              f"signal.signal(signal.SIGINT, lambda *a: (print('child got SIGINT', flush=True), sys.exit(42)))\n"
              f"pathlib.Path({str(ready)!r}).write_text('1')\n"
              f"time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-m", "faultlens", "run", "--no-env", "--", sys.executable, "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for _ in range(100):
        if ready.exists():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    assert "child got SIGINT" in out
    assert proc.returncode == 42


def test_run_child_killed_by_signal(env):
    res = fl("run", "--no-env", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
             env=env)
    assert res.returncode == 128 + signal.SIGTERM


def test_run_silent_failure_says_it_printed_nothing(env):
    res = fl("run", "--no-env", "--", sys.executable, "-c", "import sys; sys.exit(5)", env=env)
    assert res.returncode == 5
    assert "exited with 5 and printed nothing" in res.stderr
    assert "No failure found" not in res.stderr and "(standard input)" not in res.stderr


def test_run_unknown_command(env):
    res = fl("run", "--no-env", "--", "definitely-not-a-command-xyz", env=env)
    assert res.returncode == 2 and "command not found" in res.stderr


# --- install() hook ----------------------------------------------------------------------------

def test_install_hook_diagnoses_an_uncaught_exception(env):
    script = ("import faultlens\nfaultlens.install()\n"
              "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB')\n")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert res.returncode == 1
    assert "Traceback" in res.stderr  # the original traceback is still printed first
    assert res.stderr.index("Traceback") < res.stderr.index("demo-oom")
