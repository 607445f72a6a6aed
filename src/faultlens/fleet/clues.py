"""The node, the day and the error lines of a log, read from its ends by the rules in clues.yaml.

Where a job ran and when it failed are printed at the start (line prefixes, banners) or at the very
end (a launcher's summary, the last timestamps), and the lines that killed it are at the end too.
Keeping only the first HEAD_BYTES and the last TAIL_BYTES of each file makes that cheap at any
log size, and the regexes stay data (clues.yaml), not code.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml

from ..logs.prefix import parse
from ..redact import redact

HEAD_BYTES = 32 << 10
TAIL_BYTES = 128 << 10
LAST_WINDOWS = (4 << 10, 32 << 10, 1 << 62)
"""How far from the end `pick: last` rules look first, then further (the whole text last)."""
MAX_ERROR_LINES = 16
"""Per file; the latest are kept, since the fatal ones come last."""
MAX_LINE_CHARS = 400
RULES_FILE = Path(__file__).with_name("clues.yaml")


class LogEnds:
    """The first and last bytes of a log, fed its line-aligned blocks as they are read."""

    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES):
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def feed(self, buf, begin: int, end: int) -> None:
        if len(self.head) < self.head_bytes:
            self.head += buf[begin:min(end, begin + self.head_bytes - len(self.head))]
        if end - begin >= self.tail_bytes:
            self.tail = bytearray(buf[end - self.tail_bytes:end])
        else:
            self.tail += buf[begin:end]
            del self.tail[:max(0, len(self.tail) - self.tail_bytes)]
        self.size += end - begin

    def text(self) -> str:
        """Whole lines of the head and the tail, in log order, none twice."""
        if self.size <= len(self.head):
            return self.head.decode("utf-8", "replace")
        head = self.head[:self.head.rfind(b"\n") + 1]
        tail_at = self.size - len(self.tail)  # offset of the tail in the log
        if tail_at <= len(head):
            tail = self.tail[len(head) - tail_at:]
        else:
            tail = self.tail[self.tail.find(b"\n") + 1:]  # drop the partial first line
        return (head + tail).decode("utf-8", "replace")


@dataclass(frozen=True)
class Rule:
    name: str
    regex: re.Pattern
    pick: str
    """`first` or `last` match in the log."""


@dataclass(frozen=True)
class Rules:
    host: tuple[Rule, ...]
    day: tuple[Rule, ...]
    errors: tuple[re.Pattern, ...]
    masks: tuple[tuple[str, str], ...]
    """(mask name, regex) pairs, applied in order before clustering."""


@functools.lru_cache(maxsize=4)
def load_rules(path: Path = RULES_FILE) -> Rules:
    data = yaml.safe_load(path.read_text())

    def rules(kind: str, groups: tuple[str, ...]) -> tuple[Rule, ...]:
        out = []
        for item in data.get(kind, []):
            where = f"{path}: {kind} rule {item.get('name')!r}"
            regex = re.compile(item["regex"], re.MULTILINE)
            if not set(groups) <= set(regex.groupindex):
                raise ValueError(f"{where}: the regex needs the groups {', '.join(groups)}")
            if item.get("pick", "first") not in ("first", "last"):
                raise ValueError(f"{where}: pick is 'first' or 'last'")
            out.append(Rule(item["name"], regex, item.get("pick", "first")))
        return tuple(out)

    return Rules(host=rules("host", ("host",)), day=rules("day", ("year", "month", "day")),
                 errors=tuple(re.compile(p, re.MULTILINE) for p in data.get("errors", [])),
                 masks=tuple((m["name"], m["regex"]) for m in data.get("masks", [])))


def _pick(rule: Rule, text: str) -> re.Match | None:
    if rule.pick == "first":
        return rule.regex.search(text)
    # the last match is usually in the last lines: look there before reading everything
    for size in LAST_WINDOWS:
        start = text.rfind("\n", 0, max(0, len(text) - size)) + 1
        last = None
        for last in rule.regex.finditer(text, start):
            pass
        if last is not None or start == 0:
            return last
    return None


def find_host(text: str, rules: Rules) -> str | None:
    for rule in rules.host:
        m = _pick(rule, text)
        if m:
            return m.group("host")
    return None


def find_day(text: str, rules: Rules) -> str | None:
    """YYYY-MM-DD of the first rule's chosen match that is a real date."""
    for rule in rules.day:
        m = _pick(rule, text)
        if not m:
            continue
        try:
            return date(int(m["year"]), int(m["month"]), int(m["day"])).isoformat()
        except ValueError:
            continue
    return None


def error_lines(text: str, rules: Rules, limit: int = MAX_ERROR_LINES) -> list[str]:
    """The latest distinct error lines, prefixes stripped (the message is what recurs), redacted."""
    starts: set[int] = set()
    for regex in rules.errors:
        for m in regex.finditer(text):
            starts.add(text.rfind("\n", 0, m.start()) + 1)
    found: dict[str, None] = {}
    for start in sorted(starts, reverse=True):
        end = text.find("\n", start)
        message = parse(text[start:end if end >= 0 else len(text)])[1].strip()
        if message:
            found.setdefault(redact(message[:MAX_LINE_CHARS]), None)
        if len(found) >= limit:
            break
    return list(reversed(found))
