"""Score one reference against the observations of a job."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..facts.extract import compare
from ..model import FactCondition, Line, Reference, Variant, Window
from .structure import Observations

BASE = 0.45
SUPPORT_STEP = 0.1
SUPPORT_MAX = 0.3
NEGATIVE = 0.35
ORDER_BONUS = 0.05
ORDER_PENALTY = 0.15
FACT_FOR = 0.08
FACT_AGAINST = 0.12
POSSIBLE_BASE = 0.3
POSSIBLE_SUPPORT_STEP = 0.04


@dataclass
class Candidate:
    ref: Reference
    present: dict[str, list[Line]]
    matched: bool
    possible: bool = False
    """Not matched, but a core line is present and nothing contradicts the reference."""
    out_of_window: list[str] = field(default_factory=list)
    """Signals seen in the log, but too far from the error line to count as its context."""
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
        if self.possible:
            names += [n for n, s in self.ref.signals.items()
                      if s.core and n not in names and self.present.get(n)]
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
    return len(literal_text(regex))


def literal_text(regex: str, gap: str = "") -> str:
    """The literal characters a pattern requires, classes and operators replaced by `gap`."""
    return _META.sub(gap, regex).replace("\\", gap)


def signal_desc(ref: Reference, name: str) -> str:
    """What a signal's line shows, in the reference's own words (never the signal's name)."""
    sig = ref.signals.get(name)
    text = (sig.explain if sig else "").strip().rstrip(".")
    if not text:
        return "the line " + ref.id + " is known by"
    word = text.split(" ", 1)[0]
    plain = word[:1].isupper() and word[1:].islower()  # "The", not "PyTorch" or "NCCL"
    return text[0].lower() + text[1:] if plain else text


def _order_ok(present: dict[str, list[Line]], order: tuple[str, ...], rank) -> bool | None:
    if len(order) < 2 or not all(present.get(n) for n in order):
        return None
    firsts = [rank(present[n][0]) for n in order]
    return all(a <= b for a, b in zip(firsts, firsts[1:]))


def _within(ctx: Line, anchor: Line, window: Window) -> bool:
    if window.same_process and ctx.prefix.key and anchor.prefix.key \
            and ctx.prefix.key != anchor.prefix.key:
        return False
    if window.seconds is not None and ctx.prefix.timestamp is not None \
            and anchor.prefix.timestamp is not None:
        return abs(ctx.prefix.timestamp - anchor.prefix.timestamp) <= window.seconds
    if window.lines is not None:
        return ctx.file == anchor.file and abs(ctx.number - anchor.number) <= window.lines
    return True


def _apply_windows(ref: Reference, present: dict[str, list[Line]]) -> list[str]:
    """Drop context lines that are too far from every error line; return the signals dropped."""
    fp = ref.fingerprint
    anchors = [ln for n in fp.all + fp.any if present.get(n) and ref.signals[n].level == "error"
               for ln in present[n]]
    if not anchors:
        return []
    dropped = []
    for name, lines in list(present.items()):
        sig = ref.signals[name]
        window = sig.window or (fp.window if sig.level != "error" else None)
        if window is None:
            continue
        kept = [ln for ln in lines if any(_within(ln, a, window) for a in anchors)]
        if kept:
            present[name] = kept
        else:
            del present[name]
            dropped.append(name)
    return dropped


def _fact_score(cand: Candidate) -> float:
    score = 0.0
    for cond, holds in cand.facts:
        if holds is None:
            continue
        if cond.weight >= 0:
            score += FACT_FOR * cond.weight if holds else -FACT_AGAINST * cond.weight
        elif holds:
            score -= FACT_AGAINST * abs(cond.weight)
    return score


def evaluate(ref: Reference, obs: Observations, rank) -> Candidate:
    """Match `ref`'s fingerprint against the observations. `rank(line)` orders lines in the job."""
    present = {name: obs.lines_of(ref.id, name) for name in ref.signals}
    present = {k: list(v) for k, v in present.items() if v}
    out_of_window = _apply_windows(ref, present) if present else []
    fp = ref.fingerprint
    missing_all = [n for n in fp.all if not present.get(n)]
    any_hit = [n for n in fp.any if present.get(n)]
    missing_any = [] if any_hit or not fp.any else list(fp.any)
    cand = Candidate(ref=ref, present=present, matched=not missing_all and not missing_any,
                     missing_all=missing_all, missing_any=missing_any,
                     out_of_window=out_of_window)
    cand.negatives = [n for n in fp.none if present.get(n)]
    cand.order_ok = _order_ok(present, fp.order, rank)
    cand.facts = [(cond, compare(obs.facts.get(cond.fact), cond.op, cond.value, obs.facts))
                  for cond in ref.facts]
    support = [n for n in fp.support if present.get(n)]
    if not cand.matched:
        core = [n for n, sig in ref.signals.items() if sig.core and present.get(n)]
        if core and not cand.negatives and cand.order_ok is not False:
            cand.possible = True
            cand.score = POSSIBLE_BASE + POSSIBLE_SUPPORT_STEP * len(support) + _fact_score(cand)
        return cand
    score = BASE
    score += min(SUPPORT_MAX, SUPPORT_STEP * len(support))
    score -= NEGATIVE * len(cand.negatives)
    if cand.order_ok is True:
        score += ORDER_BONUS
    elif cand.order_ok is False:
        score -= ORDER_PENALTY
    score += _fact_score(cand)
    cand.score = score
    cand.variant = next((v for v in ref.variants
                         if all(present.get(n) for n in v.all)
                         and (not v.any or any(present.get(n) for n in v.any))), None)
    return cand
