"""Score one reference against the observations of a job."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..facts.extract import compare
from ..model import FactCondition, Line, Reference, Variant
from .structure import Observations

BASE = 0.45
SUPPORT_STEP = 0.1
SUPPORT_MAX = 0.3
NEGATIVE = 0.35
ORDER_BONUS = 0.05
ORDER_PENALTY = 0.15
FACT_FOR = 0.08
FACT_AGAINST = 0.12


@dataclass
class Candidate:
    ref: Reference
    present: dict[str, list[Line]]
    matched: bool
    missing_all: list[str] = field(default_factory=list)
    missing_any: list[str] = field(default_factory=list)
    negatives: list[str] = field(default_factory=list)
    order_ok: bool | None = None
    facts: list[tuple[FactCondition, bool | None]] = field(default_factory=list)
    score: float = 0.0
    notes: list[str] = field(default_factory=list)
    """Adjustments made while ranking, in words (for rejected-sibling reasons)."""
    variant: Variant | None = None
    consequence_of: str | None = None
    outranked_by: str | None = None
    """Id of a reference that explains this one's error line with more evidence."""

    @cached_property
    def evidence_names(self) -> list[str]:
        fp = self.ref.fingerprint
        names = list(dict.fromkeys(fp.all + fp.any + fp.support + fp.order))
        return [n for n in names if self.present.get(n)]

    @cached_property
    def error_lines(self) -> list[Line]:
        """Lines of the error-level signals that make the match (else of all matched signals)."""
        fp = self.ref.fingerprint
        names = [n for n in fp.all + fp.any if self.present.get(n)]
        errs = [ln for n in names if self.ref.signals[n].level == "error" for ln in self.present[n]]
        if not errs:
            errs = [ln for n in names for ln in self.present[n]]
        return errs

    @cached_property
    def specificity(self) -> tuple[int, int]:
        """More matched signals first; then the longer literal text of the matched error
        patterns, so "cannot import name '_get_socket_with_port'" beats a bare "ImportError: "."""
        fp = self.ref.fingerprint
        literal = max((literal_length(self.ref.signals[n].regex) for n in fp.all + fp.any
                       if self.present.get(n)), default=0)
        return (len(self.evidence_names), literal)


_META = re.compile(r"\\[dDsSwWbBAZ]|\[[^\]]*\]|\{\d+(,\d*)?\}|\(\?[a-zA-Z:]*\)?|[.*+?()|^$]")


def literal_length(regex: str) -> int:
    """Roughly how many literal characters a pattern requires (classes and operators removed)."""
    return len(_META.sub("", regex).replace("\\", ""))


def signal_desc(ref: Reference, name: str) -> str:
    sig = ref.signals.get(name)
    if sig and sig.explain:
        return f"{name} ({sig.explain.rstrip('.')})"
    return name


def _order_ok(present: dict[str, list[Line]], order: tuple[str, ...], rank) -> bool | None:
    if len(order) < 2 or not all(present.get(n) for n in order):
        return None
    firsts = [rank(present[n][0]) for n in order]
    return all(a <= b for a, b in zip(firsts, firsts[1:]))


def evaluate(ref: Reference, obs: Observations, rank) -> Candidate:
    """Match `ref`'s fingerprint against the observations. `rank(line)` orders lines in the job."""
    present = {name: obs.lines_of(ref.id, name) for name in ref.signals}
    present = {k: v for k, v in present.items() if v}
    fp = ref.fingerprint
    missing_all = [n for n in fp.all if not present.get(n)]
    any_hit = [n for n in fp.any if present.get(n)]
    missing_any = [] if any_hit or not fp.any else list(fp.any)
    cand = Candidate(ref=ref, present=present, matched=not missing_all and not missing_any,
                     missing_all=missing_all, missing_any=missing_any)
    cand.negatives = [n for n in fp.none if present.get(n)]
    cand.order_ok = _order_ok(present, fp.order, rank)
    cand.facts = [(cond, compare(obs.facts.get(cond.fact), cond.op, cond.value, obs.facts))
                  for cond in ref.facts]
    if not cand.matched:
        return cand
    score = BASE
    support = [n for n in fp.support if present.get(n)]
    score += min(SUPPORT_MAX, SUPPORT_STEP * len(support))
    score -= NEGATIVE * len(cand.negatives)
    if cand.order_ok is True:
        score += ORDER_BONUS
    elif cand.order_ok is False:
        score -= ORDER_PENALTY
    for cond, holds in cand.facts:
        if holds is None:
            continue
        if cond.weight >= 0:
            score += FACT_FOR * cond.weight if holds else -FACT_AGAINST * cond.weight
        elif holds:
            score -= FACT_AGAINST * abs(cond.weight)
    cand.score = score
    cand.variant = next((v for v in ref.variants
                         if all(present.get(n) for n in v.all)
                         and (not v.any or any(present.get(n) for n in v.any))), None)
    return cand
