"""`faultlens eval CORPUS`: accuracy on labelled logs, and how well it generalises.

An entry is `NAME.log` (any compression) with `NAME.yaml` beside it holding `expect: <id>` or
`expect: none` (a healthy log) and `source: <url>`; `files: [a.log, b.log]` makes a multi-file job.
Optional: `failure_line: N` (the line the label rests on), `batch: NAME` (the first-sight batch).
An `expect` id that is not in the catalogue labels a failure class no reference covers yet: such an
entry can never be top-1, but it is answered when the report names its failing line.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FaultlensError, UsageError
from .lint import read_sidecar

BANDS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


@dataclass
class Entry:
    name: str
    files: list[str]
    expect: str  # reference id or "none"
    source: str = ""
    failure_line: int | None = None
    batch: str = ""


@dataclass
class Outcome:
    entry: Entry
    ranked: list[str]
    """Non-info diagnoses, best first (confirmed, then possible)."""
    failures: list[str] = field(default_factory=list)
    error: str | None = None
    confidence: float | None = None
    """Confidence of the top non-info diagnosis."""
    status: str | None = None
    """`confirmed` or `possible`: the status of the top non-info diagnosis."""
    unexplained: int = 0
    """How many failure lines the report names without a reference."""
    named_lines: list[int] = field(default_factory=list)
    """Lines the report names as where the failure is: the top diagnosis' first line, its
    error evidence, then the unexplained failure lines (first file only)."""
    first_named: int | None = None

    @property
    def top1(self) -> bool:
        if self.entry.expect == "none":
            return not self.failures
        return bool(self.ranked) and self.ranked[0] == self.entry.expect

    @property
    def top3(self) -> bool:
        if self.entry.expect == "none":
            return not self.failures
        return self.entry.expect in self.ranked[:3]

    @property
    def answered(self) -> bool:
        """A failure log that got a diagnosis or at least its failing line named."""
        return bool(self.ranked) or self.unexplained > 0


@dataclass
class Summary:
    outcomes: list[Outcome] = field(default_factory=list)
    known: set[str] = field(default_factory=set)
    """Reference ids in the catalogue the corpus was run against."""

    @property
    def labelled(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.entry.expect != "none"]

    @property
    def referenced(self) -> list[Outcome]:
        """Labelled entries whose expected reference exists in the catalogue."""
        return [o for o in self.labelled if not self.known or o.entry.expect in self.known]

    @property
    def unreferenced(self) -> list[Outcome]:
        return [o for o in self.labelled if self.known and o.entry.expect not in self.known]

    @property
    def healthy(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.entry.expect == "none"]

    @staticmethod
    def _share(items: list[Outcome], attr: str) -> float | None:
        return round(sum(getattr(o, attr) for o in items) / len(items), 4) if items else None

    def rate(self, attr: str) -> float:
        items = self.labelled
        return sum(getattr(o, attr) for o in items) / len(items) if items else 1.0

    @property
    def false_alarms(self) -> list[Outcome]:
        return [o for o in self.healthy if o.failures]

    @property
    def misses(self) -> list[Outcome]:
        return [o for o in self.labelled if not o.ranked]

    @property
    def confusions(self) -> Counter:
        return Counter((o.entry.expect, o.ranked[0]) for o in self.labelled
                       if o.ranked and not o.top1)

    def per_reference(self) -> dict[str, dict]:
        table: dict[str, dict] = defaultdict(lambda: {"n": 0, "top1": 0, "top3": 0})
        for o in self.labelled:
            row = table[o.entry.expect]
            row["n"] += 1
            row["top1"] += o.top1
            row["top3"] += o.top3
        return dict(sorted(table.items()))

    def by_status(self) -> dict[str, dict]:
        """Top-1/top-3 over the entries whose top answer is confirmed, and possible, separately."""
        out = {}
        for status in ("confirmed", "possible"):
            items = [o for o in self.labelled if o.status == status]
            out[status] = {"n": len(items), "top1": self._share(items, "top1"),
                           "top3": self._share(items, "top3")}
        return out

    def calibration(self, status: str | None = None) -> list[dict]:
        """Top-1 accuracy per confidence band of the top diagnosis (labelled entries)."""
        rows = []
        for lo, hi in BANDS:
            items = [o for o in self.labelled if o.confidence is not None
                     and lo <= o.confidence < hi and (status is None or o.status == status)]
            if items:
                rows.append({"band": f"{lo:.1f}-{min(hi, 1.0):.1f}", "n": len(items),
                             "top1": round(sum(o.top1 for o in items) / len(items), 3)})
        return rows

    def failure_lines(self) -> dict:
        """How well the named lines point at the line each label rests on.

        precision: of the answered entries with a `failure_line`, the share whose first named
        line is that line; recall: the share of entries with a `failure_line` where any named line
        is that line."""
        items = [o for o in self.labelled if o.entry.failure_line is not None
                 and len(o.entry.files) == 1]
        answered = [o for o in items if o.first_named is not None]
        hit_first = [o for o in answered if o.first_named == o.entry.failure_line]
        hit_any = [o for o in items if o.entry.failure_line in o.named_lines]
        return {"n": len(items),
                "precision": round(len(hit_first) / len(answered), 4) if answered else None,
                "recall": round(len(hit_any) / len(items), 4) if items else None}

    def figures(self, outcomes: list[Outcome] | None = None) -> dict:
        """The headline figures for a set of outcomes (the whole corpus or one batch)."""
        sub = Summary(outcomes if outcomes is not None else self.outcomes, self.known)
        return {
            "entries": len(sub.outcomes), "failure_logs": len(sub.labelled),
            "healthy": len(sub.healthy), "unreferenced": len(sub.unreferenced),
            "top1": self._share(sub.labelled, "top1"), "top3": self._share(sub.labelled, "top3"),
            "top1_referenced": self._share(sub.referenced, "top1"),
            "answer_rate": self._share(sub.labelled, "answered"),
            "false_alarms": len(sub.false_alarms),
        }

    def batches(self) -> dict[str, dict]:
        names = sorted({o.entry.batch for o in self.outcomes if o.entry.batch})
        return {b: self.figures([o for o in self.outcomes if o.entry.batch == b]) for b in names}

    def as_dict(self) -> dict:
        figures = self.figures()
        return {
            "entries": len(self.outcomes), "labelled": len(self.labelled),
            "healthy": len(self.healthy), "unreferenced": len(self.unreferenced),
            "top1": round(self.rate("top1"), 4), "top3": round(self.rate("top3"), 4),
            "top1_referenced": figures["top1_referenced"],
            "top3_referenced": self._share(self.referenced, "top3"),
            "answer_rate": figures["answer_rate"],
            "by_status": self.by_status(),
            "failure_lines": self.failure_lines(),
            "false_alarms": [o.entry.name for o in self.false_alarms],
            "misses": [o.entry.name for o in self.misses],
            "unanswered": [o.entry.name for o in self.labelled if not o.answered],
            "confusions": [{"expected": a, "got": b, "count": n}
                           for (a, b), n in self.confusions.most_common()],
            "per_reference": self.per_reference(),
            "calibration": self.calibration(),
            "calibration_by_status": {s: self.calibration(s) for s in ("confirmed", "possible")},
            "batches": self.batches(),
            "outcomes": [{"name": o.entry.name, "expect": o.entry.expect, "batch": o.entry.batch,
                          "got": o.ranked[:3], "status": o.status, "top1": o.top1,
                          "answered": o.answered, "error": o.error}
                         for o in self.outcomes],
        }


def load_corpus(folder: Path) -> list[Entry]:
    if not folder.is_dir():
        raise UsageError(f"{folder}: corpus folder not found")
    entries = []
    for meta_path in sorted(folder.glob("*.yaml")):
        logs = [p for p in folder.glob(meta_path.stem + ".log*")]
        meta = read_sidecar(logs[0]) if logs else _read_yaml(meta_path)
        if "expect" not in meta:
            continue
        files = [str(folder / f) for f in meta.get("files", [])] or [str(p) for p in sorted(logs)]
        if not files:
            raise UsageError(f"{meta_path}: no log beside it (expected {meta_path.stem}.log)")
        line = meta.get("failure_line")
        entries.append(Entry(meta_path.stem, files, str(meta["expect"]), str(meta.get("source", "")),
                             int(line) if isinstance(line, int) else None,
                             str(meta.get("batch", "") or "")))
    if not entries:
        raise UsageError(f"{folder}: no labelled entries (NAME.log + NAME.yaml with 'expect:')")
    return entries


def _read_yaml(path: Path) -> dict:
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    return data if isinstance(data, dict) else {}


def _named_lines(report, first_file: str) -> list[int]:
    lines: list[int] = []
    ranked = [d for d in report.diagnoses if d.severity != "info"]
    if ranked:
        top = ranked[0]
        if top.first and top.first.file == first_file:
            lines.append(top.first.line)
        lines += [e.line for e in top.evidence if e.file == first_file]
    lines += [u.line for u in report.unexplained if u.file == first_file]
    return list(dict.fromkeys(lines))


def outcome_of(entry: Entry, report) -> Outcome:
    ranked = [d for d in report.diagnoses if d.severity != "info"]
    named = _named_lines(report, entry.files[0])
    return Outcome(entry, [d.id for d in ranked], [d.id for d in report.failures],
                   confidence=ranked[0].confidence if ranked else None,
                   status=ranked[0].status if ranked else None,
                   unexplained=len(report.unexplained), named_lines=named,
                   first_named=named[0] if named else None)


def run(folder: Path, diagnose: Callable, progress: Callable | None = None,
        known: set[str] | None = None, batch: str | None = None) -> Summary:
    summary = Summary(known=set(known or ()))
    entries = load_corpus(folder)
    if batch is not None:
        entries = [e for e in entries if e.batch == batch]
        if not entries:
            raise UsageError(f"{folder}: no entries with 'batch: {batch}'")
    for i, entry in enumerate(entries):
        if progress:
            progress(i, len(entries), entry.name)
        try:
            report = diagnose(entry.files)
        except FaultlensError as exc:
            summary.outcomes.append(Outcome(entry, [], error=str(exc)))
            continue
        summary.outcomes.append(outcome_of(entry, report))
    return summary
