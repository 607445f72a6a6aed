"""What the templates show, computed in Python: categories, a reference's readable fingerprint and
examples, and evidence lines in their context. Jinja2 escapes every string it is given."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..lint import example_files, read_sidecar
from ..model import Reference
from ..redact import redact

EXAMPLE_EXCERPT_BYTES = 16 << 10
CONTEXT_LINES = 2
SHOWN_LINE_CHARS = 2000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

FINGERPRINT_PARTS = (("all", "requires all of"), ("any", "and at least one of"),
                     ("support", "supported by"), ("none", "argued against by"),
                     ("order", "in this order"))


def categories(refs) -> list[tuple[str, int]]:
    """(category, number of references), alphabetical."""
    return sorted(Counter(r.category for r in refs).items())


@dataclass(frozen=True)
class Example:
    name: str
    kind: str
    """`match` (must rank the reference first) or `nomatch` (a near miss that must not)."""
    source: str
    """URL of the public log, or 'synthetic'."""
    note: str
    excerpt: str
    """The start of the log, redacted ('' for compressed examples)."""


def examples(ref: Reference) -> list[Example]:
    if not ref.path:
        return []
    found = []
    matches, nomatches = example_files(ref.path)
    for kind, paths in (("match", matches), ("nomatch", nomatches)):
        for path in paths:
            meta = read_sidecar(path)
            found.append(Example(path.name, kind, str(meta.get("source", "")),
                                 str(meta.get("note", "")), _excerpt(path)))
    return found


def _excerpt(path: Path) -> str:
    if path.suffix != ".log":
        return ""
    with open(path, "rb") as fh:
        data = fh.read(EXAMPLE_EXCERPT_BYTES + 1)
    text = data[:EXAMPLE_EXCERPT_BYTES].decode("utf-8", "replace")
    return redact(text) + ("\n…" if len(data) > EXAMPLE_EXCERPT_BYTES else "")


def fingerprint(ref: Reference) -> list[tuple[str, tuple[str, ...]]]:
    """(label, signal names) for each non-empty part of the fingerprint."""
    return [(label, getattr(ref.fingerprint, part)) for part, label in FINGERPRINT_PARTS
            if getattr(ref.fingerprint, part)]


def check_how(check) -> str:
    """How a check is decided, in words."""
    if check.signal:
        return f"decided from the log: signal {check.signal}" + \
            (" (fails when absent)" if check.absent == "fail" else "")
    if check.fact:
        return f"decided from the environment: {check.fact} {check.op} {check.value}"
    return f"by hand: {check.how}" if check.how else "by hand"


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


def highlight(text: str, regex: str | None) -> tuple[tuple[str, bool], ...]:
    """Split `text` around the first match of `regex`; the whole line is marked when the
    pattern does not match the displayed text (e.g. after redaction)."""
    match = None
    if regex:
        try:
            match = re.search(regex, text)
        except re.error:
            match = None
    if match is None or match.start() == match.end():
        return ((text, True),)
    parts = ((text[:match.start()], False), (text[match.start():match.end()], True),
             (text[match.end():], False))
    return tuple(p for p in parts if p[0])


def split_lines(data: bytes) -> list[bytes]:
    """A log's lines as the engine numbers them (a final newline ends the last line)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def evidence_context(lines: list[bytes], file: str, diagnosis: dict, refs: dict[str, Reference],
                     radius: int = CONTEXT_LINES) -> list[list[ContextLine]]:
    """The evidence lines of one diagnosis (report_dict form) from `file`, each with `radius`
    lines around it, overlapping windows merged; `lines` is split_lines(log)."""
    ref = refs.get(diagnosis["id"])
    hits: dict[int, str] = {}
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


def home_context(refs) -> dict:
    return {"categories": categories(refs), "reference_count": len(refs)}


def category_context(refs, name: str) -> dict:
    return {"name": name, "refs": sorted((r for r in refs if r.category == name), key=lambda r: r.id)}


def reference_context(ref: Reference, known: set[str]) -> dict:
    """Everything reference.html shows; `known` is the set of ids in the catalogue (others are
    planned and shown without a link)."""
    return {"ref": ref, "fingerprint": fingerprint(ref), "known": known,
            "checks": [(c, check_how(c)) for c in ref.checks], "examples": examples(ref)}


@dataclass(frozen=True)
class CountsRow:
    reference: str | None
    per_day: tuple[int, ...]
    total: int


@dataclass(frozen=True)
class CountsTable:
    days: tuple[str, ...]
    rows: tuple[CountsRow, ...]
    """Most incidents first."""
    max_total: int
    days_hidden: bool
    """Older days with incidents are left out of the columns (not of the totals)."""


def counts_table(counts, max_days: int = 14) -> CountsTable:
    """References × the latest `max_days` days that have incidents, from store DayCounts."""
    all_days = sorted({c.day for c in counts})
    days = tuple(all_days[-max_days:])
    per: dict[str | None, Counter] = {}
    for c in counts:
        per.setdefault(c.reference, Counter())[c.day] += c.count
    rows = [CountsRow(ref, tuple(n[d] for d in days), sum(n.values())) for ref, n in per.items()]
    rows.sort(key=lambda r: (-r.total, r.reference or ""))
    return CountsTable(days, tuple(rows), max((r.total for r in rows), default=1),
                       len(all_days) > len(days))
