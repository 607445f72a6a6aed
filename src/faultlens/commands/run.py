"""`faultlens run [--] CMD ARGS...`: run a command, pass its output through, watch it live, and
diagnose it when it fails.

On a terminal the child gets a pseudo-terminal, so colours and progress bars look exactly as
without faultlens; otherwise stdout and stderr stay separate pipes. Signals are forwarded (the
child runs in its own session, so Ctrl-C reaches it once, through us), and the child's exit status
becomes ours (128 + N when it was killed by signal N).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

from ..errors import UsageError
from .watch import AlertPrinter, add_alert_options, add_post_options, post_report

QUEUE_CHUNKS = 64
"""Reads (of up to 64 KiB) waiting between the pipe readers and the scanner: when the scanner
falls behind, the readers wait, the pipe fills and the child blocks on its next write
(back-pressure; memory stays bounded and no line is dropped from the saved log)."""

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)


def register(sub) -> None:
    r = sub.add_parser("run", help="run a command, watch its output live, diagnose it if it fails",
                       description="Run CMD with its output passed through unchanged, alerts as "
                                   "failures appear, the full log saved, an environment snapshot "
                                   "taken at start, and the diagnosis printed after the command's "
                                   "own output when it fails. The exit status is the command's.")
    r.add_argument("--log", metavar="FILE", help="where to save the full log (default: "
                                                 "$FAULTLENS_RUNS or ~/.local/state/faultlens/runs/)")
    r.add_argument("--no-alerts", action="store_true", help="no live alerts, only the final diagnosis")
    r.add_argument("--no-env", action="store_true", help="skip the environment snapshot")
    add_alert_options(r)
    add_post_options(r)
    r.add_argument("cmd", nargs="+", metavar="CMD", help="the command (put '--' before it if it has options)")
    r.set_defaults(handler=cmd_run)


def runs_dir() -> Path:
    base = os.environ.get("FAULTLENS_RUNS")
    if base:
        return Path(base)
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "faultlens" / "runs"


def _log_path(args) -> Path:
    if args.log:
        return Path(args.log)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(args.cmd[0]).name)[:40]
    return runs_dir() / f"{stamp}-{name}-{os.getpid()}.log"


def _pump(fd: int, sink, tag: str, out: queue.Queue) -> None:
    """Copy a child's output to our own stream at once and hand it to the watcher."""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the pty closed
            data = b""
        if not data:
            out.put((tag, b""))
            return
        try:
            sink.write(data)
            sink.flush()
        except (BrokenPipeError, ValueError):
            pass
        out.put((tag, data))


def _start(cmd: list[str], use_pty: bool):
    if use_pty:
        import pty

        master, slave = pty.openpty()
        try:
            import fcntl
            import termios

            size = fcntl.ioctl(sys.stdout.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
        except OSError:
            pass
        proc = subprocess.Popen(cmd, stdin=None, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        return proc, [(master, sys.stdout.buffer, "out")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    return proc, [(proc.stdout.fileno(), sys.stdout.buffer, "out"),
                  (proc.stderr.fileno(), sys.stderr.buffer, "err")]


def cmd_run(args) -> int:
    from ..engine.compile import load_scanner
    from ..live import LiveSession

    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        raise UsageError("no command given", tip="faultlens run -- python train.py --lr 3e-4")
    log_path = _log_path(args)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env_facts: dict = {}
    env_thread = None
    if not args.no_env:
        def snapshot():
            from ..facts.snapshot import collect

            snap = collect()
            env_facts.update(snap["facts"])
            with open(log_path.with_suffix(".env.json"), "w") as fh:
                json.dump(snap, fh, indent=2)

        env_thread = threading.Thread(target=snapshot, daemon=True)
        env_thread.start()
    scanner = load_scanner(args.catalogue)
    session = LiveSession(scanner)
    printer = AlertPrinter(args, stream=sys.stderr)
    use_pty = sys.stdout.isatty() and os.name == "posix"
    try:
        proc, pipes = _start(cmd, use_pty)
    except FileNotFoundError:
        raise UsageError(f"{cmd[0]}: command not found") from None
    except PermissionError:
        raise UsageError(f"{cmd[0]}: permission denied") from None
    handlers = {s: signal.signal(s, lambda sig, _f: _forward(proc, sig)) for s in FORWARDED}
    events: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
    threads = [threading.Thread(target=_pump, args=(fd, sink, tag, events), daemon=True)
               for fd, sink, tag in pipes]
    for t in threads:
        t.start()
    open_streams = len(threads)
    try:
        with open(log_path, "wb") as log:
            while open_streams:
                try:
                    tag, data = events.get(timeout=0.05)
                except queue.Empty:
                    data, tag = None, None
                if data:
                    log.write(data)
                    session.feed(tag, data)
                elif tag is not None:
                    session.flush(tag)
                    open_streams -= 1
                if not args.no_alerts:
                    for alert in session.poll_alerts(force=data is None):
                        printer.alert(alert)
        code = proc.wait()
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    if env_thread is not None:
        env_thread.join(timeout=5)
    session.env = env_facts
    report = session.report()
    status = 128 - code if code < 0 else code
    if status != 0 or report.failures:
        if not args.no_alerts:
            for alert in session.poll_alerts(force=True):
                printer.alert(alert)
        print(f"\nfaultlens: {' '.join(cmd)} exited with {status}; log saved to {log_path}",
              file=sys.stderr)
        printer.stream = sys.stderr
        printer.final(report)
        post_report(args, report, "run", job=" ".join(cmd), log_path=log_path)
    printer.close()
    return status


def _forward(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass
