"""Strip and interpret the prefixes launchers and loggers put in front of a log line.

Understood (in any nesting order): ANSI colour codes, `\\r` progress-bar rewrites, Buildkite
`_bk;t=...` markers, docker compose `svc-1  | `, ISO-8601 and syslog timestamps, torch's
`[rank3]:` and torchrun's `[default3]:`, glog `[W1129 10:00:00.123 123 file.cpp:45]`, vLLM
`(EngineCore_DP0 pid=123)` / `(VllmWorker TP1 pid=…)` / `(RayWorkerWrapper pid=…, ip=…)` and
`INFO 04-09 13:00:57 [file.py:150]`, and `[INFO]` / `ERROR:` style level words.
Each stripper consumes at most one separating space, so traceback indentation survives.
"""

from __future__ import annotations

import re
from calendar import timegm

from ..model import Prefix

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
BUILDKITE = re.compile(r"(?:\x1b|\ufffd)?_bk;t=\d+(?:\x07 ?| )?")

_COMPOSE = re.compile(r"([A-Za-z0-9][\w.-]*)\s+\| ")
_ISO = re.compile(r"\[?(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
                  r"(Z|[+-]\d{2}:?\d{2})?\]? ?")
_SYSLOG = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) "
                     r"(\d{2}):(\d{2}):(\d{2}) (\S+) ([\w./@-]+?)(?:\[(\d+)\])?: ")
_DMESG = re.compile(r"\[ *(\d+\.\d+)\] ")
_RANK = re.compile(r"\[(?:rank|default|Rank )(\d+)\]:? ?")
_GLOG = re.compile(r"\[?([IWEF])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?: +(\d+))? "
                   r"([^\]\s]+:\d+)\] ?")
_PROC = re.compile(r"\(([A-Za-z][\w]*(?: [A-Za-z]*\d+)*) pid=(\d+)(?:, ip=[^)]*)?\) ?")
_VLLM = re.compile(r"(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (\d{2})-(\d{2}) "
                   r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))? \[[^\]]*\] ?")
_LEVEL = re.compile(r"\[?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?(?::| -)? ")
_TP = re.compile(r"(?:TP|_TP|rank)(\d+)")

_MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), start=1)}
_GLOG_LEVEL = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}
_YEAR = 2000  # formats without a year are ordered within one log only


def _epoch(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str | None) -> float:
    try:
        base = timegm((y, mo, d, h, mi, s, 0, 0, 0))
    except (ValueError, OverflowError):
        return 0.0
    return base + (float("0." + frac) if frac else 0.0)


def clean(raw: str) -> str:
    """Remove ANSI codes and Buildkite markers; keep the last progress-bar rewrite of the line."""
    text = raw.rstrip("\r\n")
    if "\x1b" in text or "_bk;t=" in text:
        text = BUILDKITE.sub("", ANSI.sub("", text))
    if "\r" in text:
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    return text


def parse(raw: str) -> tuple[Prefix, str]:
    """Return what the prefixes say and the line's message with every prefix removed."""
    text = clean(raw)
    rank = pid = None
    process = level = None
    ts: float | None = None
    pos = 0
    for _ in range(12):
        if text.startswith(" ", pos) and pos == 0:
            break
        m = _RANK.match(text, pos)
        if m:
            rank = int(m.group(1))
            pos = m.end()
            continue
        m = _PROC.match(text, pos)
        if m:
            process, pid = m.group(1), int(m.group(2))
            if rank is None:
                tp = _TP.search(process)
                if tp:
                    rank = int(tp.group(1))
            pos = m.end()
            continue
        m = _VLLM.match(text, pos)
        if m:
            level = "WARNING" if m.group(1) == "WARN" else m.group(1)
            ts = _epoch(_YEAR, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                        int(m.group(5)), int(m.group(6)), m.group(7))
            pos = m.end()
            continue
        m = _GLOG.match(text, pos)
        if m:
            level = _GLOG_LEVEL[m.group(1)]
            ts = _epoch(_YEAR, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                        int(m.group(5)), int(m.group(6)), m.group(7))
            if m.group(8) and pid is None:
                pid = int(m.group(8))
            pos = m.end()
            continue
        m = _ISO.match(text, pos)
        if m:
            g = m.groups()
            ts = _epoch(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), g[6])
            pos = m.end()
            continue
        m = _SYSLOG.match(text, pos)
        if m:
            ts = _epoch(_YEAR, _MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)),
                        int(m.group(4)), int(m.group(5)), None)
            process = process or m.group(7)
            if m.group(8):
                pid = int(m.group(8))
            pos = m.end()
            continue
        m = _DMESG.match(text, pos)
        if m:
            pos = m.end()
            continue
        m = _COMPOSE.match(text, pos)
        if m and pos == 0:
            process = process or m.group(1)
            pos = m.end()
            continue
        m = _LEVEL.match(text, pos)
        if m and level is None:
            level = "WARNING" if m.group(1) == "WARN" else m.group(1)
            pos = m.end()
            continue
        break
    return Prefix(rank=rank, pid=pid, process=process, timestamp=ts, level=level), text[pos:]
