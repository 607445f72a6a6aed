"""What the catalogue and incident pages show, computed in Python: categories, a reference's
readable fingerprint and examples, the incident counts table. Jinja2 escapes every string."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..lint import example_files, read_sidecar
from ..model import Reference
from ..redact import redact

EXAMPLE_EXCERPT_BYTES = 16 << 10

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


def shown_report(report: dict) -> dict:
    """A stored report with what the page reads filled in: an agent's report may leave out
    the parts it has no use for (input, catalogue), and old rows predate today's checks."""
    inp = report.get("input") if isinstance(report.get("input"), dict) else {}
    diagnoses = [d for d in report.get("diagnoses") or () if isinstance(d, dict)]
    return {**report,
            "input": {"files": [], "facts": {}, "tracebacks": 0, **inp},
            "catalogue": report.get("catalogue") if isinstance(report.get("catalogue"), dict)
            else {"references": "?"},
            "failure": report.get("failure", any(d.get("severity") == "failure" for d in diagnoses)),
            "diagnoses": diagnoses}
