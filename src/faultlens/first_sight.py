"""The first-sight table of corpus/README.md: each batch's figures, appended once, never rewritten.

A batch of corpus entries is evaluated before any catalogue or engine change is made for it; that
measurement is what says how faultlens generalises, so it is recorded as it came out and kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import UsageError

HEADING = "## First-sight figures"
COLUMNS = ("date", "batch", "entries", "failure logs", "healthy", "top-1", "top-1 (referenced)",
           "top-3", "answer rate", "false alarms", "references", "engine")
INTRO = ("Each row is a batch evaluated the first time, before anything was changed for it "
         "(`faultlens eval corpus --batch NAME --record-first-sight`). Rows are appended, never "
         "rewritten. top-1 counts every failure log; top-1 (referenced) only those whose class has "
         "a reference; answer rate is the share of failure logs that got a diagnosis or their "
         "failing line named.")


def recorded_batches(text: str) -> set[str]:
    if HEADING not in text:
        return set()
    table = text.split(HEADING, 1)[1]
    return {cells[1] for cells in (_cells(ln) for ln in table.splitlines())
            if len(cells) == len(COLUMNS) and cells[1] not in ("batch", "---")}


def _cells(line: str) -> list[str]:
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return []
    return [c.strip() for c in line[1:-1].split("|")]


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def row(date: str, batch: str, figures: dict, references: int, engine: str) -> str:
    values = (date, batch, figures["entries"], figures["failure_logs"], figures["healthy"],
              figures["top1"], figures["top1_referenced"], figures["top3"], figures["answer_rate"],
              figures["false_alarms"], references, engine)
    return "| " + " | ".join(_fmt(v) for v in values) + " |"


def record(readme: Path, line: str, batch: str) -> None:
    """Append `line` to the table in `readme` (creating the section); refuse a batch twice."""
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# corpus\n"
    if batch in recorded_batches(text):
        raise UsageError(f"{readme}: first-sight figures of batch {batch} are already recorded",
                         tip="first-sight figures are never rewritten; evaluate the batch "
                             "without --record-first-sight to see today's figures")
    if HEADING not in text:
        header = "| " + " | ".join(COLUMNS) + " |"
        sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\n{INTRO}\n\n{header}\n{sep}\n"
    head, tail = text.split(HEADING, 1)
    # the table is the block of `|` lines right after the heading; append after its last row
    lines = tail.split("\n")
    last = max(i for i, ln in enumerate(lines) if re.match(r"\s*\|", ln))
    lines.insert(last + 1, line)
    readme.write_text(head + HEADING + "\n".join(lines), encoding="utf-8")
