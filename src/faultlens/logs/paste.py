"""Undo what pasting does to a log, for inputs small enough to be pastes.

Issue trackers, chats and e-mails change a log on its way to us: quote markers (`> `), code spans
and fences (backticks), HTML entities (`&quot;`), CRLF line ends, pytest's `E   ` prefix, an
exception shown in repr form inside a logger line (`... failed: TypeError("...")`), and lines
hard-wrapped at 80 columns. `normalise` returns a cleaned buffer that is scanned instead of the
original, and a map from its lines back to the original line numbers:

- the first N lines are the original lines, cleaned in place (line k is original line k);
- after them come extra lines, each built from original lines `start..end`: an exception taken
  out of its repr, or hard-wrapped lines joined back. A hit on an extra line counts only when the
  same pattern hits none of the lines it was built from ("the join completes a pattern"), and it
  is reported at line `start`.
"""

from __future__ import annotations

import html
import re

import re2
from dataclasses import dataclass, field

PASTE_LIMIT = 1 << 20
"""Inputs up to this size are treated as possible pastes; bigger ones are log files."""
MAX_WRAPPED_WIDTH = 132
"""A log whose longest line is longer than this was not hard-wrapped."""
MAX_SPAN = 5
"""At most this many wrapped pieces are joined into one line."""
MAX_EXTRA_BYTES = 8 << 20

_ENTITY = re.compile(rb"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
_QUOTE = re.compile(rb"^ {0,3}(?:> ?)+")
_FENCE_OR_SPAN_HEAD = re.compile(rb"^\s*(?:```+[\w-]*\s*|`+)")
_SPAN_TAIL = re.compile(rb"\s*`+\s*$")
_PYTEST = re.compile(rb"^E {2,}")
# exceptions in repr form, one pattern per quote; RE2 (linear time) because the line is anyone's text
_REPR_NAME = rb"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\("
_REPRS = [re2.compile(_REPR_NAME + q + rb"((?:[^" + q + rb"\\]|\\.){3,}?)" + q)
          for q in (rb"'", rb'"')]


@dataclass
class Normalised:
    data: bytes
    original_lines: int
    extra: list[tuple[int, int]] = field(default_factory=list)
    """For extra line N + 1 + k: (first, last) original line numbers it was built from."""
    changed: bool = False

    def origin(self, line: int) -> tuple[int, int]:
        """The original line range behind a line of the normalised buffer."""
        if line <= self.original_lines:
            return line, line
        return self.extra[line - self.original_lines - 1]


def _clean(line: bytes) -> bytes:
    if line.endswith(b"\r"):
        line = line.rstrip(b"\r")
    if b"&" in line and _ENTITY.search(line):
        line = html.unescape(line.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
    if line[:4].lstrip(b" ").startswith(b">"):
        line = _QUOTE.sub(b"", line, count=1)
    if b"`" in line:
        line = _unspan(line)
    if line.startswith(b"E  "):
        line = _PYTEST.sub(b"", line, count=1)
    return line


def _unspan(line: bytes) -> bytes:
    """Drop a fence or a code span around the line; a lone backtick that is part of the
    message (a wrapped `name(...)`) stays."""
    stripped = line.strip()
    if stripped.startswith(b"```"):
        return _FENCE_OR_SPAN_HEAD.sub(b"", line, count=1)
    if stripped.endswith(b"```"):
        return _SPAN_TAIL.sub(b"", line, count=1)
    if len(stripped) > 1 and stripped.startswith(b"`") and stripped.endswith(b"`"):
        return _SPAN_TAIL.sub(b"", _FENCE_OR_SPAN_HEAD.sub(b"", line, count=1), count=1)
    return line


def _unrepr(inner: bytes, quote: bytes) -> list[bytes]:
    text = inner.replace(b"\\" + quote, quote).replace(b"\\\\", b"\\")
    return [part for part in text.split(b"\\n") if part.strip()]


def normalise(data: bytes) -> Normalised:
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines = [_clean(ln) for ln in raw_lines]
    result = Normalised(b"", len(lines), changed=lines != raw_lines)
    extra_lines: list[bytes] = []
    for number, line in enumerate(lines, 1):
        if b"(" not in line or (b"Error(" not in line and b"Exception(" not in line):
            continue
        for quote, pattern in zip((b"'", b'"'), _REPRS):
            for m in pattern.finditer(line):
                parts = _unrepr(m.group(2), quote)
                if parts:
                    extra_lines.append(m.group(1) + b": " + parts[0])
                    extra_lines.extend(parts[1:])
                    result.extra.extend([(number, number)] * len(parts))
    _wrapped_joins(lines, [ln.rstrip(b"\r") for ln in raw_lines], extra_lines, result.extra)
    if extra_lines:
        result.changed = True
    result.data = b"\n".join(lines + extra_lines) + b"\n"
    return result


def _wrapped_joins(lines: list[bytes], raw_lines: list[bytes], extra_lines: list[bytes],
                   extra: list[tuple[int, int]]) -> None:
    """Join hard-wrapped lines back: a line continues on the next one when it fills the wrap
    width, or when the next line's first word would not have fitted after it (measured on the
    lines as pasted, before cleaning). Every run of 2..MAX_SPAN continuing lines is joined, with
    and without a space (word wrap drops the space at the break, a terminal's fold does not)."""
    # columns, not bytes: a progress bar's block characters are three bytes each
    widths = [len(ln.rstrip().decode("utf-8", "replace")) for ln in raw_lines]
    width = max(widths, default=0)
    if width > MAX_WRAPPED_WIDTH or width < 40:
        return

    def continues(k: int) -> bool:
        nxt = raw_lines[k + 1].strip()
        if not nxt or widths[k] < 20:
            return False
        first_word = nxt.split(None, 1)[0].decode("utf-8", "replace")
        return widths[k] >= width - 1 or widths[k] + 1 + len(first_word) > width

    links = [continues(k) for k in range(len(lines) - 1)]
    budget = MAX_EXTRA_BYTES
    for i, linked in enumerate(links):
        if not linked:
            continue
        j = i
        while j < len(links) and links[j] and j + 1 - i < MAX_SPAN:
            j += 1
            chain = lines[i:j + 1]
            for joined in (b"".join(chain), chain[0].rstrip() + b"".join(b" " + p.strip() for p in chain[1:])):
                budget -= len(joined)
                if budget < 0:
                    return
                extra_lines.append(joined)
                extra.append((i + 1, j + 1))


def read_small(source, limit: int = PASTE_LIMIT):
    """The whole decompressed input as (bytes, ReadStats) when it is small enough to be a paste,
    else None. Standard input that turns out big is spooled to a temporary file, returned as
    ('spooled', path) so the caller scans that file instead (nothing read is lost)."""
    import os
    import tempfile

    from .reader import ReadStats, iter_chunks

    if isinstance(source, (bytes, bytearray)):
        if len(source) > limit:
            return None
    elif source != "-":
        try:
            if os.path.getsize(source) > limit:
                return None
        except OSError:
            return None  # let the reader report it
    name = "<stdin>" if source == "-" else (source if isinstance(source, str) else "<text>")
    stats = ReadStats(name=name)
    pieces: list[bytes] = []
    size = 0
    chunks = iter_chunks(source, stats)
    for chunk, _line in chunks:
        pieces.append(chunk)
        size += len(chunk)
        if size > 8 * limit:
            if source != "-":
                return None
            fd, path = tempfile.mkstemp(prefix="faultlens-stdin-", suffix=".log")
            with os.fdopen(fd, "wb") as out:
                out.writelines(pieces)
                for rest, _ in chunks:
                    out.write(rest)
            return ("spooled", path)
    return b"".join(pieces), stats
