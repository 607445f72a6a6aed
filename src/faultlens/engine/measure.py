"""Checks decided by the figures a log prints: named groups of a regex, compared.

A check's `measure` cases each name one or more signals (space-separated), a regex (run with RE2) whose named groups are read from that
signal's lines, a comparison (`holds`) and how to show the figures. The first case whose regex
finds its groups decides the check: pass when the comparison holds, fail when it does not.
Sizes with units (`64.00 MiB`, `1.5 GiB`, `512 MB`) are compared in bytes.

Expressions: `a < b`, `a - b >= c`, `count(rank) < world` (count = distinct values of a group
over all the signal's lines; every other name takes its value from the first line that has it).
"""

from __future__ import annotations

import operator
import re

from ..model import Line, Measure
from . import linear

UNITS = {"": 1, "B": 1, "BYTES": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
         "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40, "PIB": 1 << 50}
_NUMBER = re.compile(r"^\s*(-?[0-9][0-9,]*(?:\.[0-9]+)?)\s*([KMGTP]?i?B|bytes)?\s*$", re.I)
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
       "==": operator.eq, "!=": operator.ne}
_EXPR = re.compile(r"^\s*(?P<left>.+?)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<right>.+?)\s*$")
_TERM = re.compile(r"^(?:(count|max|min)\((\w+)\)|(\w+)|([0-9.]+))$")
_SHOW = re.compile(r"\{(?:(count|list)\((\w+)\)|(\w+))\}")


def number(text: str) -> float | None:
    """`64.00 MiB` -> bytes; `8` -> 8.0; anything else -> None."""
    m = _NUMBER.match(text or "")
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    return value * UNITS[(m.group(2) or "").upper()]


def parse(expr: str) -> tuple[list[str], str, list[str]]:
    """Split `a - b < c` into terms and the operator; raises ValueError when malformed."""
    m = _EXPR.match(expr)
    if not m:
        raise ValueError(f"no comparison in {expr!r}")
    sides = []
    for side in (m.group("left"), m.group("right")):
        terms = [t.strip() for t in re.split(r"\s*([+-])\s*", side) if t.strip()]
        for t in terms[::2]:
            if not _TERM.match(t):
                raise ValueError(f"not a name, number or count(name): {t!r}")
        sides.append(terms)
    return sides[0], m.group("op"), sides[1]


def names(expr: str) -> set[str]:
    left, _, right = parse(expr)
    out = set()
    for t in left + right:
        m = _TERM.match(t)
        if m:
            out.add(m.group(2) or m.group(3) or "")
    return out - {""}


class _Captures:
    def __init__(self):
        self.first: dict[str, str] = {}
        self.all: dict[str, list[str]] = {}

    def add(self, groups: dict[str, str | None]) -> None:
        for k, v in groups.items():
            if v is None:
                continue
            self.first.setdefault(k, v)
            self.all.setdefault(k, [])
            if v not in self.all[k]:
                self.all[k].append(v)

    def term(self, t: str) -> float | None:
        m = _TERM.match(t)
        if m.group(4):
            return float(m.group(4))
        if m.group(1):
            values = self.all.get(m.group(2), [])
            if m.group(1) == "count":
                return float(len(values))
            nums = [x for x in (number(v) for v in values) if x is not None]
            return (max if m.group(1) == "max" else min)(nums) if nums else None
        return number(self.first[m.group(3)]) if m.group(3) in self.first else None

    def side(self, terms: list[str]) -> float | None:
        total = self.term(terms[0])
        for sign, t in zip(terms[1::2], terms[2::2]):
            v = self.term(t)
            if total is None or v is None:
                return None
            total = total + v if sign == "+" else total - v
        return total

    def show(self, template: str) -> str:
        def sub(m: re.Match) -> str:
            if m.group(1):
                values = self.all.get(m.group(2), [])
                return str(len(values)) if m.group(1) == "count" else ", ".join(values)
            return self.first.get(m.group(3), "?")
        return _SHOW.sub(sub, template)


def decide(cases: tuple[Measure, ...], present: dict[str, list[Line]]) -> tuple[str, str] | None:
    """(status, detail) from the first case whose figures are all in the log, else None."""
    for case in cases:
        caps = _Captures()
        where = None
        lines = sorted((ln for name in case.signal.split() for ln in present.get(name, [])),
                       key=lambda ln: (ln.file, ln.number))
        for ln in lines:
            try:  # linear time: the regex is the catalogue's, the line anyone's text
                m = linear.search(case.regex, ln.text)
            except linear.LinearError:
                m = None
            if m:
                caps.add(m.groupdict())
                where = where or ln
        left, op, right = parse(case.holds)
        a, b = caps.side(left), caps.side(right)
        if where is None or a is None or b is None:
            continue
        status = "pass" if OPS[op](a, b) else "fail"
        shown = caps.show(case.show) if case.show else case.holds
        return status, f"{shown}, at line {where.number}"
    return None
