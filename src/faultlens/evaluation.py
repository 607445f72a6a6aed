"""`faultlens eval CORPUS`: accuracy on labelled logs.

An entry is `NAME.log` (any compression) with `NAME.yaml` beside it holding `expect: <id>` or
`expect: none` (a healthy log) and `source: <url>`; `files: [a.log, b.log]` makes a multi-file job.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FaultlensError, UsageError
from .lint import read_sidecar


@dataclass
class Entry:
    name: str
    files: list[str]
    expect: str  # reference id or "none"
    source: str = ""


@dataclass
class Outcome:
    entry: Entry
    ranked: list[str]
    """Non-info diagnoses, best first."""
    failures: list[str] = field(default_factory=list)
    error: str | None = None
    confidence: float | None = None
    """Confidence of the top non-info diagnosis."""

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


@dataclass
class Summary:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def labelled(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.entry.expect != "none"]

    @property
    def healthy(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.entry.expect == "none"]

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

    def calibration(self) -> list[dict]:
        """Top-1 accuracy per confidence band of the top diagnosis (labelled entries)."""
        bands = [(0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]
        rows = []
        for lo, hi in bands:
            items = [o for o in self.labelled if o.confidence is not None and lo <= o.confidence < hi]
            if items:
                rows.append({"band": f"{lo:.1f}-{min(hi, 1.0):.1f}", "n": len(items),
                             "top1": round(sum(o.top1 for o in items) / len(items), 3)})
        return rows

    def as_dict(self) -> dict:
        return {
            "entries": len(self.outcomes), "labelled": len(self.labelled),
            "healthy": len(self.healthy),
            "top1": round(self.rate("top1"), 4), "top3": round(self.rate("top3"), 4),
            "false_alarms": [o.entry.name for o in self.false_alarms],
            "misses": [o.entry.name for o in self.misses],
            "confusions": [{"expected": a, "got": b, "count": n}
                           for (a, b), n in self.confusions.most_common()],
            "per_reference": self.per_reference(),
            "calibration": self.calibration(),
            "outcomes": [{"name": o.entry.name, "expect": o.entry.expect,
                          "got": o.ranked[:3], "top1": o.top1, "error": o.error}
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
        entries.append(Entry(meta_path.stem, files, str(meta["expect"]), str(meta.get("source", ""))))
    if not entries:
        raise UsageError(f"{folder}: no labelled entries (NAME.log + NAME.yaml with 'expect:')")
    return entries


def _read_yaml(path: Path) -> dict:
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    return data if isinstance(data, dict) else {}


def run(folder: Path, diagnose: Callable, progress: Callable | None = None) -> Summary:
    summary = Summary()
    entries = load_corpus(folder)
    for i, entry in enumerate(entries):
        if progress:
            progress(i, len(entries), entry.name)
        try:
            report = diagnose(entry.files)
        except FaultlensError as exc:
            summary.outcomes.append(Outcome(entry, [], error=str(exc)))
            continue
        ranked = [d for d in report.diagnoses if d.severity != "info"]
        summary.outcomes.append(Outcome(entry, [d.id for d in ranked], [d.id for d in report.failures],
                                        confidence=ranked[0].confidence if ranked else None))
    return summary
