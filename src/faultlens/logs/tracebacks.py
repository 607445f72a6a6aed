"""Parse Python tracebacks, chained ones included, out of prefix-stripped lines.

Lines from several processes can interleave; the caller passes only the lines of one process
(same prefix key) after a `Traceback (most recent call last):` header.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import Frame, Line, Traceback

HEADER = "Traceback (most recent call last):"
CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_FRAME = re.compile(r'\s*File "(.+?)", line (\d+)(?:, in (.+))?\s*$')
_EXCEPTION = re.compile(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning"
                        r"|Fault|Timeout|Abort|Killed)?)(?::\s|:$|$)")


def is_exception_line(text: str) -> bool:
    """A line that can end a traceback: `Name: message` or a bare exception class name."""
    if not text or text[0].isspace():
        return False
    m = _EXCEPTION.match(text)
    if not m:
        return False
    name = m.group(1)
    return text.startswith(name + ":") or (text == name and name[0].isupper())


def parse_traceback(lines: Sequence[Line], limit: int = 2000) -> Traceback | None:
    """Parse the traceback whose header is lines[0]; return None if it has no exception line."""
    if not lines or HEADER not in lines[0].text:
        return None
    head = lines[0]
    frames: list[Frame] = []
    chained: list[str] = []
    exception = ""
    exception_line = 0
    expect_chain = False
    for line in lines[1:limit]:
        text = line.text
        stripped = text.strip()
        if exception:
            # after an exception line: only a chain marker or the next chained traceback continue
            if not stripped:
                continue
            if any(marker in text for marker in CHAIN_MARKERS):
                expect_chain = True
                continue
            if expect_chain and HEADER in text:
                chained.append(exception)
                frames, exception, expect_chain = [], "", False
                continue
            break
        m = _FRAME.match(text)
        if m:
            frames.append(Frame(m.group(1), int(m.group(2)), (m.group(3) or "").strip()))
            continue
        if not stripped or text[:1].isspace() or stripped.startswith(("^", "~")):
            continue  # source line, caret markers, blank line
        if HEADER in text:  # a new traceback started without an exception line
            continue
        if frames or is_exception_line(stripped):
            exception = stripped
            exception_line = line.number
    if not exception:
        return None
    return Traceback(
        file=head.file, start=head.number, process=head.prefix.key, frames=tuple(frames),
        exception=exception, exception_line=exception_line, chained_from=tuple(chained),
    )

