"""A real `faultlens serve` on 127.0.0.1 and a free port, for the agent and browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from conftest import DATA, ROOT

START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(tmp_path: Path, catalogue: Path = DATA / "catalogue") -> dict:
    env = {**os.environ, "FAULTLENS_CATALOGUE": str(catalogue),
           "FAULTLENS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    env.pop("FAULTLENS_TOKEN", None)
    return env


@contextmanager
def serving(tmp_path: Path, *args: str, env: dict | None = None):
    """Yield the base URL of a server started with `args`; stop it afterwards."""
    port = free_port()
    log_path = tmp_path / f"serve-{port}.log"
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "faultlens", "serve", "--port", str(port),
                                 "--db", str(tmp_path / "incidents.db"), *args],
                                env=env or server_env(tmp_path), stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(proc, base, log_path)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_until_up(proc: subprocess.Popen, base: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"faultlens serve exited: {log_path.read_text()}")
        try:
            urllib.request.urlopen(base + "/api/v1/references", timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("faultlens serve did not start in time") from None
            time.sleep(0.1)
