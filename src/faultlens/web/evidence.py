"""Evidence lines in their context, as the diagnose page shows them: numbered, redacted, the
matching part of each evidence line marked. Jinja2 escapes every piece."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import re2

from ..model import Reference
from ..redact import redact

CONTEXT_LINES = 2
SHOWN_LINE_CHARS = 2000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class ContextLine:
    number: int
    parts: tuple[tuple[str, bool], ...]
    """(text, highlighted) pieces of the redacted line."""
    hit: bool
    """An evidence line (the others are context)."""


def display_line(raw: bytes) -> str:
    """A log line as a person reads it: redacted, no ANSI codes, the last state of a progress
    bar, clipped to SHOWN_LINE_CHARS."""
    text = _ANSI.sub("", raw.decode("utf-8", "replace")).rstrip("\r")
    text = text.rsplit("\r", 1)[-1]
    if len(text) > SHOWN_LINE_CHARS:
        text = text[:SHOWN_LINE_CHARS] + "…"
    return redact(text)


@functools.lru_cache(maxsize=4096)
def _linear(regex: str):
    """The signal's regex on RE2 (linear time on any line); None when RE2 cannot run it."""
    try:
        options = re2.Options()
        options.log_errors = False
        return re2.compile(regex, options)
    except re2.error:
        return None


def highlight(text: str, regex: str | None) -> tuple[tuple[str, bool], ...]:
    """Split `text` around the first match of `regex`; the whole line is marked when the
    pattern does not match the displayed text (e.g. after redaction)."""
    pattern = _linear(regex) if regex else None
    match = pattern.search(text) if pattern is not None else None
    if match is None or match.start() == match.end():
        return ((text, True),)
    parts = ((text[:match.start()], False), (text[match.start():match.end()], True),
             (text[match.end():], False))
    return tuple(p for p in parts if p[0])


class LogLines:
    """The lines of a log that a page shows, by number, found by counting newlines: no object
    per line (a 31 MB log of short lines made a million), only the windows asked for."""

    SKIP = 1 << 16

    def __init__(self, data: bytes, numbers):
        self.count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        self._lines: dict[int, bytes] = {}
        pos, line = 0, 1  # data[pos:] starts line `line`
        for n in sorted({n for n in numbers if 1 <= n <= self.count}):
            pos = self._advance(data, pos, n - line)
            line = n
            end = data.find(b"\n", pos)
            self._lines[n] = data[pos:end if end >= 0 else len(data)]

    def _advance(self, data: bytes, pos: int, k: int) -> int:
        """The start of the line `k` lines after the one at `pos` (it exists)."""
        while k > 0:
            in_chunk = data.count(b"\n", pos, pos + self.SKIP)
            if in_chunk < k:
                pos, k = pos + self.SKIP, k - in_chunk
                continue
            for _ in range(k):
                pos = data.find(b"\n", pos) + 1
            k = 0
        return pos

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> bytes:
        return self._lines[index + 1]


def shown_lines(diagnoses: list[dict], file: str, radius: int = CONTEXT_LINES) -> set[int]:
    """The numbers of the lines evidence_context shows for `diagnoses` in `file`."""
    return {n for d in diagnoses for e in d["evidence"] if e["file"] == file
            for n in range(e["line"] - radius, e["line"] + radius + 1)}


def evidence_context(lines: LogLines, file: str, diagnosis: dict, refs: dict[str, Reference],
                     radius: int = CONTEXT_LINES) -> list[list[ContextLine]]:
    """The evidence lines of one diagnosis (report_dict form) from `file`, each with `radius`
    lines around it, overlapping windows merged; `lines` holds at least shown_lines(...)."""
    ref = refs.get(diagnosis["id"])
    hits: dict[int, str | None] = {}  # line -> the regex of its signal
    for e in diagnosis["evidence"]:
        if e["file"] == file and 1 <= e["line"] <= len(lines):
            sig = ref.signals.get(e["signal"]) if ref else None
            hits.setdefault(e["line"], sig.regex if sig else None)
    blocks: list[list[ContextLine]] = []
    last = 0
    for number in sorted(hits):
        start = max(number - radius, last + 1)
        if not blocks or start > last + 1:
            blocks.append([])
        for n in range(start, min(number + radius, len(lines)) + 1):
            text = display_line(lines[n - 1])
            blocks[-1].append(ContextLine(n, highlight(text, hits[n]) if n in hits else ((text, False),),
                                          n in hits))
        last = max(last, min(number + radius, len(lines)))
    return blocks
