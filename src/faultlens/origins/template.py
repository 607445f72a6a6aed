"""Message templates: the literal text of an upstream message with its format placeholders turned
into bounded wildcards, and a linear-time matcher for them.

A template is a string in which WILD (a NUL character, never in a log line) stands for one
placeholder. Matching looks for the literal segments in order, each within MAX_GAP characters of
the previous one: a handful of `str.find` calls, no backtracking.
"""

from __future__ import annotations

import re

WILD = "\x00"
MAX_GAP = 400
"""The most characters a placeholder may stand for (a tensor's shape, a path, a repr)."""
PARTIAL_MIN = 24
"""A line may end inside a template's literal text once this many of its characters matched."""
MIN_LITERAL = 12
"""A template needs this many literal letters and digits to be worth indexing."""

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
# printf, Python %-format, Go verbs and CPython's PyErr_Format (%R %S %U %A %V)
_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0\- +']*(?:\*|\d+)?(?:\.(?:\*|\d+))?"
                     r"(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGcrsapvwqTtbnmRSUAV%]")
_BRACES = re.compile(r"\{\{|\}\}|\{[^{}]{0,40}\}")
_SPACES = re.compile(r"[ \t]+")


def normalise(parts: list[str | None]) -> str:
    """Join literal parts and placeholders (None) into a template: adjacent placeholders merge,
    runs of spaces collapse."""
    out: list[str] = []
    for part in parts:
        if part is None:
            if not out or out[-1] != WILD:
                out.append(WILD)
        elif part:
            out.append(_SPACES.sub(" ", part))
    return "".join(out).strip(" ")


def printf_parts(text: str) -> list[str | None]:
    """A printf / %-format string as literal parts and placeholders (`%%` stays a literal %)."""
    parts: list[str | None] = []
    pos = 0
    for m in _PRINTF.finditer(text):
        parts.append(text[pos:m.start()])
        parts.append("%" if m.group() == "%%" else None)
        pos = m.end()
    parts.append(text[pos:])
    return parts


def brace_parts(text: str) -> list[str | None]:
    """A str.format / fmt / spdlog string as literal parts and placeholders."""
    parts: list[str | None] = []
    pos = 0
    for m in _BRACES.finditer(text):
        parts.append(text[pos:m.start()])
        g = m.group()
        parts.append("{" if g == "{{" else "}" if g == "}}" else None)
        pos = m.end()
    parts.append(text[pos:])
    return parts


def split_lines(template: str) -> list[str]:
    """A multi-line message prints as several log lines: one template per line."""
    return [t.strip(" ") for t in template.split("\n") if t.strip(" ")]


def literal_size(template: str) -> int:
    return sum(ch.isalnum() for ch in template)


_PREFIX = re.compile(r"[A-Z][A-Za-z]{2,}(?: [A-Za-z]{3,}){1,3}: " + WILD)


def is_prefix(template: str) -> bool:
    """A short label the code puts before a value it does not own: 'CUDA error: …' (torch
    appends the CUDA runtime's error string). Matched only where the label starts the
    message (see lookup)."""
    return bool(_PREFIX.fullmatch(template))


def worth_indexing(template: str) -> bool:
    """Enough literal text to say something, and at least two words (or a prefix label)."""
    return (literal_size(template) >= MIN_LITERAL and len(_TOKEN.findall(template)) >= 2) or \
        is_prefix(template)


def key_tokens(template: str, within: int | None = None) -> list[str]:
    """Lower-cased words of the template that any matching line contains as whole words: words
    not touching a placeholder (which could extend them); with `within`, only words that end in
    the template's first `within` characters (a line cut short still has them)."""
    out: list[str] = []
    offset = 0
    for seg_index, seg in enumerate(template.split(WILD)):
        base, offset = offset, offset + len(seg) + 1
        for m in _TOKEN.finditer(seg):
            if within is not None and base + m.end() > within:
                break
            touches_left = m.start() == 0 and seg_index > 0
            touches_right = m.end() == len(seg) and seg_index < template.count(WILD)
            before = seg[m.start() - 1] if m.start() else ""
            after = seg[m.end()] if m.end() < len(seg) else ""
            if touches_left or touches_right or before.isalnum() or after.isalnum():
                continue
            out.append(m.group().lower())
    return out


def line_tokens(line: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(line)}


def match(template: str, line: str) -> float:
    """The share of `line` (stripped) that the template's literal text covers; 0.0 when the
    template does not match. Literal segments must appear in order, each within MAX_GAP
    characters of the end of the previous one."""
    segments = [s for s in template.split(WILD)]
    pos = 0
    covered = 0
    first = True
    for seg in segments:
        if not seg:
            continue
        j = line.find(seg, pos)
        if j < 0 and len(seg) > PARTIAL_MIN:
            # a message cut at the end of the line (wrapped by a terminal or a logger)
            j = line.find(seg[:PARTIAL_MIN], pos)
            tail = line[j:].rstrip() if j >= 0 else ""
            if j >= 0 and seg.startswith(tail) and (first or j - pos <= MAX_GAP):
                covered += len(tail)
                first = False
                break
            return 0.0
        if j < 0 and not first and covered >= PARTIAL_MIN and len(line) - pos <= MAX_GAP:
            # the line ends inside a value: the rest of the message was cut (or printed on
            # the next line)
            break
        if j < 0 or (not first and j - pos > MAX_GAP):
            return 0.0
        first = False
        covered += len(seg)
        pos = j + len(seg)
    if first:
        return 0.0
    return min(1.0, covered / max(1, len(line.strip())))


def gaps(template: str, line: str) -> list[str] | None:
    """The text each placeholder stands for in `line` (as `match` aligns them), or None."""
    segments = template.split(WILD)
    pos, values, start = 0, [], None
    for i, seg in enumerate(segments):
        if not seg:
            if i > 0:
                start = pos if start is None else start
            continue
        j = line.find(seg, pos)
        if j < 0:
            return None
        if i > 0:
            values.append(line[pos if start is None else start:j])
        start = None
        pos = j + len(seg)
    if segments[-1] == "" and len(segments) > 1:
        values.append(line[pos:].strip())
    return values


def render(template: str, values: list[str]) -> str:
    """The template with its placeholders filled by `values` in order ('0' once they run out):
    how a release with this wording would print the same event."""
    parts = template.split(WILD)
    out = [parts[0]]
    for i, seg in enumerate(parts[1:]):
        out.append(values[i] if i < len(values) else "0")
        out.append(seg)
    return "".join(out)


def span(template: str, line: str) -> tuple[int, int] | None:
    """Where the template's literal text starts and ends in `line` (as `match` aligns it)."""
    pos, start = 0, None
    for seg in template.split(WILD):
        if not seg:
            continue
        j = line.find(seg, pos)
        if j < 0:
            return None
        start = j if start is None else start
        pos = j + len(seg)
    return None if start is None else (start, pos)
