"""Origins on a report: for each evidence line and each unexplained failure line, the upstream
code that prints it, in which releases, and a version-skew sentence when the log's facts name a
release that does not print that wording.

Only those lines are looked up, never the whole log, and at most `MAX_LINES` distinct texts per
report. A missing or unreadable index leaves the report as it is: origins add to an answer, they
never stand in the way of one.
"""

from __future__ import annotations

import dataclasses
import sqlite3

from ..model import Origin, Report
from .lookup import OriginIndex, default_index, release_range
from .skew import skew
from .store import IndexMissing

MAX_LINES = 50
"""Distinct line texts looked up per report (the top diagnoses' evidence comes first)."""


def _texts(report: Report) -> list[str]:
    """The texts to look up, most useful first: unexplained lines, then each diagnosis's first
    error line, then the rest of the evidence in rank order."""
    out: dict[str, None] = {}
    for u in report.unexplained:
        out.setdefault(u.text.strip())
    for d in report.diagnoses:
        if d.first is not None:
            out.setdefault(d.first.text.strip())
    for d in report.diagnoses:
        for e in d.evidence:
            out.setdefault(e.text.strip())
    return [t for t in out if t][:MAX_LINES]


def _with_skew(origin: Origin, facts: dict[str, str], index: OriginIndex) -> Origin:
    releases = index.projects.get(origin.project, {}).get("releases", [])
    return dataclasses.replace(origin, skew=skew(origin, facts, releases) or "",
                               span=release_range(origin.releases, releases))


def attach(report: Report, index: OriginIndex | None = None) -> Report:
    """The report with `origin` set on evidence, first lines and unexplained items it can trace."""
    texts = _texts(report)
    if not texts:
        return report
    try:
        index = index or default_index()
        found = index.lookup(texts, limit=1)
    except (IndexMissing, sqlite3.Error, OSError):
        return report
    origin_of = {t: _with_skew(o[0], report.facts, index) for t, o in zip(texts, found) if o}
    if not origin_of:
        return report

    def mark(item):
        if item is None:
            return None
        o = origin_of.get(item.text.strip())
        return dataclasses.replace(item, origin=o) if o else item

    diagnoses = tuple(dataclasses.replace(d, first=mark(d.first),
                                          evidence=tuple(mark(e) for e in d.evidence))
                      for d in report.diagnoses)
    unexplained = tuple(mark(u) for u in report.unexplained)
    return dataclasses.replace(report, diagnoses=diagnoses, unexplained=unexplained)
