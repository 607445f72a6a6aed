"""`faultlens watch FILE...|-`: follow growing logs and alert the moment a fingerprint completes."""

from __future__ import annotations

import json
import os
import queue
import signal
import stat
import sys
import threading
import time

from ..errors import InputError, UsageError

POLL_S = 0.02
READ_SIZE = 1 << 20


def register(sub) -> None:
    w = sub.add_parser("watch", help="follow logs live and alert as failures appear",
                       description="Follow one or more logs like 'tail -F' (rotation and "
                                   "truncation survive) or read a pipe ('-'), raise an alert the "
                                   "moment a reference's fingerprint completes, once per incident, "
                                   "and print the final diagnosis when the stream ends or on Ctrl-C.")
    w.add_argument("files", nargs="+", metavar="FILE", help="log files to follow, or '-' for a pipe")
    add_alert_options(w)
    w.add_argument("--from-end", action="store_true",
                   help="skip what the files already hold; alert only on new lines")
    w.add_argument("--idle-exit", type=float, metavar="SECONDS",
                   help="stop after this long without new data (default: follow until interrupted)")
    w.add_argument("--exit-code", action="store_true", help="exit 1 when a failure was alerted")
    add_post_options(w)
    w.set_defaults(handler=cmd_watch)


def add_alert_options(p) -> None:
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line: alerts, then the final report")
    p.add_argument("--webhook", metavar="URL", help="POST every alert as JSON to this URL")
    p.add_argument("--slack", action="store_true",
                   help="with --webhook: send Slack-compatible {\"text\": …} payloads")


def add_post_options(p) -> None:
    p.add_argument("--post", metavar="URL",
                   help="send the final report of a failure to this faultlens server as an incident")
    p.add_argument("--token", help="the server's write token (default: $FAULTLENS_TOKEN)")
    p.add_argument("--job", metavar="NAME",
                   help="the job's name in the incident (default: the command or the files)")


def post_report(args, report, source: str, job: str, log_path=None) -> None:
    """--post: send the report as an incident (with the log's tail when there is a log file);
    a server that cannot be reached is a warning, never a failure of the job."""
    if not args.post:
        return
    from ..render.json import report_dict
    from ..store.client import IncidentPostError, post_incident, read_tail

    try:
        answer = post_incident(args.post, report_dict(report), source=source, job=args.job or job,
                               token=args.token or os.environ.get("FAULTLENS_TOKEN"),
                               log=read_tail(log_path) if log_path else None)
    except IncidentPostError as exc:
        print(f"faultlens: warning: {exc}", file=sys.stderr)
        return
    print(f"faultlens: incident {answer.get('id')} posted to {args.post}", file=sys.stderr)


class AlertPrinter:
    """Prints alerts (text or JSON lines) and posts them to a webhook in the background."""

    def __init__(self, args, stream=None):
        self.json = args.json
        self.webhook = args.webhook
        self.slack = args.slack
        self.stream = stream or sys.stdout
        self.failures = 0
        self._threads: list[threading.Thread] = []
        if self.slack and not self.webhook:
            raise UsageError("--slack needs --webhook URL")

    def alert(self, alert) -> None:
        from ..render.json import diagnosis_dict

        d = alert.diagnosis
        if d.severity == "failure":
            self.failures += 1
        payload = {"type": "alert", "time": alert.raised_at, **diagnosis_dict(d)}
        if self.json:
            self.stream.write(json.dumps(payload) + "\n")
        else:
            self.stream.write(format_alert(d, alert.raised_at) + "\n")
        self.stream.flush()
        if self.webhook:
            body = {"text": format_alert(d, alert.raised_at)} if self.slack else payload
            t = threading.Thread(target=_post, args=(self.webhook, body), daemon=True)
            t.start()
            self._threads.append(t)

    def final(self, report) -> None:
        if self.json:
            from ..render.json import report_dict

            self.stream.write(json.dumps({"type": "report", **report_dict(report)}) + "\n")
        else:
            from ..render.text import render

            self.stream.write("\n" + render(report, top=5) + "\n")
        self.stream.flush()

    def close(self) -> None:
        for t in self._threads:
            t.join(timeout=5)


def format_alert(d, raised_at: float) -> str:
    when = time.strftime("%H:%M:%S", time.localtime(raised_at))
    where = ""
    if d.first:
        who = f"{d.first.process} " if d.first.process else ""
        where = f"  {who}{d.first.file.rsplit('/', 1)[-1]}:{d.first.line}"
    cons = f"  (consequence of {d.consequence_of})" if d.consequence_of else ""
    lines = [f"faultlens ALERT {when} {d.severity.upper()} {d.id} ({d.confidence:.2f}){where}{cons}",
             f"  {d.title}"]
    lines += [f"  > {e.text[:200]}" for e in d.evidence[-3:]]
    if d.fix:
        lines.append(f"  fix: {d.fix[0].do[:300]}")
    return "\n".join(lines)


def _post(url: str, body: dict) -> None:
    import urllib.request

    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=5).close()
    except Exception as exc:  # the watcher must not die because a webhook is down
        print(f"faultlens: warning: webhook {url} failed: {exc}", file=sys.stderr)


class FileFollower:
    """Follows one path like `tail -F`: reads what is new, reopens on rotation, rewinds on
    truncation - also when the file was truncated and grew past the old offset between two
    polls (the bytes before the offset are no longer those that were read). A FIFO is read
    without blocking, whether or not a writer has it open."""

    CHECK_BYTES = 256

    def __init__(self, path: str, from_end: bool):
        self.path = path
        self.name = path
        self.fd = None
        self.inode = None
        self.pos = 0
        self.fifo = False
        self._head = b""  # the file's first bytes, as read
        self._tail = b""  # the bytes just before `pos`, as read
        self._open(from_end)

    def _open(self, at_end: bool) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InputError(f"{self.path}: cannot open: {exc.strerror}") from None
        self.fifo = stat.S_ISFIFO(st.st_mode)
        if not self.fifo and not stat.S_ISREG(st.st_mode):
            raise InputError(f"{self.path}: not a regular file or FIFO")
        try:  # O_NONBLOCK: opening a FIFO with no writer would wait for one
            fd = os.open(self.path, os.O_RDONLY | (os.O_NONBLOCK if self.fifo else 0))
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InputError(f"{self.path}: cannot open: {exc.strerror}") from None
        st = os.fstat(fd)
        self.fd, self.inode = fd, st.st_ino
        self.pos = st.st_size if at_end and not self.fifo else 0
        self._head = self._tail = b""
        if self.pos:
            self._head = os.pread(fd, self.CHECK_BYTES, 0)
            self._tail = os.pread(fd, self.CHECK_BYTES, self.pos - min(self.pos, self.CHECK_BYTES))
            os.lseek(fd, self.pos, os.SEEK_SET)
        return True

    def read(self) -> tuple[bytes, str | None]:
        """(new bytes, event) where event is None, 'rotated' or 'truncated'."""
        if self.fd is None:
            return b"", ("rotated" if self._open(False) else None)
        if self.fifo:
            try:
                return os.read(self.fd, READ_SIZE), None  # b"": no writer (yet, or any more)
            except BlockingIOError:
                return b"", None
        if self.pos and self._rewritten():
            self.pos = 0
            self._head = self._tail = b""
            os.lseek(self.fd, 0, os.SEEK_SET)
            return b"", "truncated"
        data = os.read(self.fd, READ_SIZE)
        if data:
            if len(self._head) < self.CHECK_BYTES:
                self._head += data[: self.CHECK_BYTES - len(self._head)]
            self._tail = (self._tail + data)[-self.CHECK_BYTES:]
            self.pos += len(data)
            return data, None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return b"", None  # rotated away, new file not there yet: keep the old one
        if st.st_ino != self.inode:
            os.close(self.fd)
            self.fd = None
            return b"", ("rotated" if self._open(False) else None)
        return b"", None

    def _rewritten(self) -> bool:
        """Whether the file no longer holds what was read from it: shorter than the offset, or
        other bytes at its start or just before the offset."""
        if os.fstat(self.fd).st_size < self.pos:
            return True
        return (os.pread(self.fd, len(self._head), 0) != self._head
                or os.pread(self.fd, len(self._tail), self.pos - len(self._tail)) != self._tail)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


def _pipe_reader(stream, out: queue.Queue) -> None:
    fd = stream.fileno()
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        out.put(data)
        if not data:
            return


def cmd_watch(args) -> int:
    from ..engine.compile import load_scanner
    from ..live import LiveSession

    if args.files.count("-") > 1:
        raise UsageError("'-' (standard input) can be given only once")
    for f in args.files:
        if f != "-" and os.path.isdir(f):
            raise InputError(f"{f}: is a directory", tip=f"pass the log files inside it, e.g. {f.rstrip('/')}/*.log")
    printer = AlertPrinter(args)
    session = LiveSession(load_scanner(args.catalogue))
    followers = [FileFollower(f, args.from_end) for f in args.files if f != "-"]
    names = {id(f): f.name for f in followers}
    pipe_q: queue.Queue | None = None
    if "-" in args.files:
        pipe_q = queue.Queue()
        threading.Thread(target=_pipe_reader, args=(sys.stdin.buffer, pipe_q), daemon=True).start()
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM,)}
    last_data = time.monotonic()
    pipe_open = pipe_q is not None
    try:
        while not stop.is_set():
            got = False
            for f in followers:
                data, event = f.read()
                if event:
                    names[id(f)] = session.restart(f.name)
                if data:
                    session.feed(names[id(f)], data)
                    got = True
            if pipe_q is not None:
                try:
                    data = pipe_q.get(timeout=0 if followers else POLL_S)
                    if data:
                        session.feed("<stdin>", data)
                        got = True
                    else:
                        session.flush("<stdin>")
                        pipe_open = False
                        pipe_q = None
                except queue.Empty:
                    pass
            for alert in session.poll_alerts(force=not got):
                printer.alert(alert)
            if got:
                last_data = time.monotonic()
                continue
            if not followers and not pipe_open:
                break  # the pipe ended and there is nothing to follow
            if args.idle_exit is not None and time.monotonic() - last_data > args.idle_exit:
                break
            if followers:
                time.sleep(POLL_S)
    except KeyboardInterrupt:
        pass
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        for f in followers:
            f.close()
    for name in list(session.streams):
        session.flush(name)
    for alert in session.poll_alerts(force=True):
        printer.alert(alert)
    report = session.report()
    printer.final(report)
    if report.failures:
        post_report(args, report, "watch", job=" ".join(args.files))
    printer.close()
    return 1 if args.exit_code and printer.failures else 0
