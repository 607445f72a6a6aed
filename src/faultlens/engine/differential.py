"""Rank the matched references into a differential diagnosis and explain every choice.

Root cause over symptom: the more specific reference wins on a shared error line, the earliest
initiating failure gets a bonus, and consequences (watchdog timeouts, launcher summaries, a peer's
closed connection) rank below any initiating failure of the same job and name it.
"""

from __future__ import annotations

import re

from ..model import CheckResult, Diagnosis, Evidence, Line, Reference, Rejection
from ..facts.extract import compare
from ..redact import redact
from .measure import decide
from .score import Candidate, signal_desc
from .structure import Observations

MIN_SCORE = 0.2
MAX_POSSIBLE = 5
POSSIBLE_CEILING = 0.4
SPECIFICITY_PENALTY = 0.2
EARLIEST_BONUS = 0.1
MAX_EVIDENCE = 12
SEVERITY_ORDER = {"failure": 0, "warning": 1, "info": 2}


class LineOrder:
    """Orders lines across the files of one job (timestamps when every file has them)."""

    def __init__(self, obs: Observations, lines: list[Line]):
        self.obs = obs
        self.use_ts = len(obs.file_order) > 1 and bool(lines) and all(
            ln.prefix.timestamp is not None for ln in lines)

    def __call__(self, line: Line):
        ts = line.prefix.timestamp if self.use_ts else 0.0
        return (ts or 0.0, self.obs.file_order.get(line.file, 0), line.number)


def _shared_lines(a: Candidate, b: Candidate) -> list[Line]:
    bl = {(ln.file, ln.number) for ln in b.error_lines}
    return [ln for ln in a.error_lines if (ln.file, ln.number) in bl]


def _apply_specificity(matched: list[Candidate]) -> None:
    by_line: dict[tuple[str, int], list[Candidate]] = {}
    for c in matched:
        for ln in c.error_lines:
            group = by_line.setdefault((ln.file, ln.number), [])
            if not group or group[-1] is not c:
                group.append(c)
    done: set[tuple[int, int]] = set()
    for (file, number), group in by_line.items():
        if len(group) < 2:
            continue
        for a in group:
            for b in group:
                key = (id(a), id(b))
                if a is b or key in done or a.specificity <= b.specificity:
                    continue
                done.add(key)
                extra = [n for n in a.evidence_names if n not in b.ref.signals]
                b.score -= SPECIFICITY_PENALTY
                b.outranked_by = b.outranked_by or a.ref.id
                b.notes.append(f"{a.ref.id} explains the same line ({file}:{number}) with more evidence"
                               + (": " + "; ".join(dict.fromkeys(
                                   signal_desc(a.ref, n) for n in extra[:3])) if extra else ""))


def _first_line(c: Candidate, order: LineOrder) -> Line | None:
    lines = c.error_lines
    return min(lines, key=order) if lines else None


def _apply_causality(matched: list[Candidate], order: LineOrder) -> None:
    failures = [c for c in matched if c.ref.severity == "failure"]
    by_id = {c.ref.id: c for c in failures}
    # a reference whose line is better explained by another is not an initiating failure of its own
    initiating = [c for c in failures if c.ref.role == "initiating" and not c.outranked_by
                  and not any(u in by_id for u in c.ref.downstream_of)]
    if len(initiating) > 1:
        firsts = {id(c): _first_line(c, order) for c in initiating}
        earliest = min(initiating, key=lambda c: order(firsts[id(c)]))
        if not any(_shared_lines(earliest, other) for other in initiating if other is not earliest):
            earliest.score += EARLIEST_BONUS
            earliest.notes.append("earliest initiating failure in the job")
    best_initiating = max(initiating, key=lambda c: c.score, default=None)
    for c in failures:
        upstream = [by_id[u] for u in c.ref.downstream_of if u in by_id]
        if upstream:
            cause = max(upstream, key=lambda u: u.score)
            c.consequence_of = cause.ref.id
            c.notes.append(f"usually a consequence of {cause.ref.id}, which is also in the log")
        elif c.ref.role == "consequence" and best_initiating is not None and c is not best_initiating:
            c.consequence_of = best_initiating.ref.id
            c.notes.append(f"a consequence, ranked below the initiating failure "
                           f"{best_initiating.ref.id}")


_PY_WARNING = re.compile(r"\b[A-Z]\w*Warning: ")


def _warning_only(c: Candidate) -> bool:
    """Every error line of this candidate is a Python warning (the run went on after it)."""
    lines = c.error_lines
    return bool(lines) and all(_PY_WARNING.search(ln.text) for ln in lines)


def _sort_key(c: Candidate):
    # a possible candidate ranks below every confirmed one of its severity; a failure known only
    # from a warning ranks below one that raised
    return (SEVERITY_ORDER[c.ref.severity], c.possible, 1 if c.consequence_of else 0,
            _warning_only(c), -c.score, c.ref.id)


def _possible_confidence(c: Candidate, ceiling: float) -> float:
    """Below `ceiling`: every confirmed candidate's confidence less a step, at most 0.4."""
    return round(max(0.05, min(ceiling, c.score * 0.6 * (0.7 if c.consequence_of else 1))), 2)


def _confidence(c: Candidate, ranked: list[Candidate]) -> float:
    conf = max(0.05, min(0.97, c.score))
    if c.consequence_of:
        conf *= 0.7
    peers = [o for o in ranked if o is not c and o.ref.severity == c.ref.severity
             and not o.consequence_of and not c.consequence_of]
    if any(abs(o.score - c.score) < 0.05 for o in peers):
        conf *= 0.85  # two explanations fit about equally well
    return round(conf, 2)


def _missing_reason(c: Candidate) -> str:
    def descs(names: list[str], n: int) -> str:
        return "; or ".join(dict.fromkeys(signal_desc(c.ref, x) for x in names[:n]))

    if c.out_of_window and (c.missing_all or c.missing_any):
        return ("not matched: the log shows that " + descs(c.out_of_window, 2)
                + ", but too far from the error line to be its context")
    if c.missing_all:
        return "not matched: no line in the log shows that " + "; nor that ".join(
            dict.fromkeys(signal_desc(c.ref, n) for n in c.missing_all[:2]))
    if c.missing_any:
        return "not matched: no line in the log shows that " + descs(c.missing_any, 3)
    if c.negatives:
        return "ruled out: the log shows that " + descs(c.negatives, 2)
    return f"scored too low ({c.score:.2f})"


def _rejections(d: Candidate, pos: dict[str, int], cands: dict[str, Candidate],
                matched: list[Candidate]) -> list[Rejection]:
    out: dict[str, str] = {}
    for sib in d.ref.siblings:
        other = cands.get(sib.id)
        if other is None:
            continue  # named but not in this catalogue (yet)
        if sib.id in pos and pos[sib.id] < pos[d.ref.id]:
            continue  # it ranks above: not rejected
        if sib.id in pos:
            why = "; ".join(other.notes) or f"lower score ({other.score:.2f} vs {d.score:.2f})"
        else:
            why = _missing_reason(other)
        out[sib.id] = f"{why}. {sib.distinguish}"
    for other in matched:
        rid = other.ref.id
        if rid == d.ref.id or rid in out or pos.get(rid, -1) < pos[d.ref.id]:
            continue
        if other.notes and _shared_lines(d, other):
            out[rid] = "; ".join(other.notes)
    return [Rejection(k, v) for k, v in out.items()]


def _evidence(c: Candidate, order: LineOrder) -> list[Evidence]:
    seen: dict[tuple[str, int], Evidence] = {}
    for name in c.evidence_names:
        sig = c.ref.signals[name]
        for ln in c.present[name][:4]:
            key = (ln.file, ln.number)
            if key not in seen:
                seen[key] = Evidence(ln.file, ln.number, redact(ln.text), name, ln.prefix.key,
                                     sig.explain)
    ordered = sorted(seen.values(), key=lambda e: (order.obs.file_order.get(e.file, 0), e.line))
    return ordered[:MAX_EVIDENCE]


def _open_checks(c: Candidate) -> list[CheckResult]:
    """For a possible candidate: what the log lacks, as checks that would confirm it."""
    out = []
    groups = [[n] for n in c.missing_all] + ([c.missing_any] if c.missing_any else [])
    for names in groups:
        wanted = [c.ref.signals[n].explain.rstrip(".") or "its confirming context" for n in names]
        far = [n for n in names if n in c.out_of_window]
        text = ("Confirm it: look for a line showing that " if len(wanted) == 1 else
                "Confirm it: look for a line showing one of: ") + "; or ".join(
            w[0].lower() + w[1:] for w in dict.fromkeys(wanted))
        detail = ("seen in the log, but too far from the error line" if far else
                  "not in this log excerpt: check the full log")
        out.append(CheckResult("confirm-" + names[0].replace("_", "-"), text + ".", "unknown", detail))
    return out


def _checks(c: Candidate, facts: dict[str, str]) -> list[CheckResult]:
    checks = list(c.ref.checks) + (list(c.variant.checks) if c.variant else [])
    out = _open_checks(c) if c.possible else []
    for chk in checks:
        if chk.signal:
            lines = c.present.get(chk.signal)
            status = "pass" if lines else chk.absent
            detail = f"line {lines[0].number}" if lines else ""
        elif chk.fact:
            holds = compare(facts.get(chk.fact), chk.op or "==", chk.value or "", facts)
            status = "unknown" if holds is None else ("pass" if holds else "fail")
            detail = f"{chk.fact} = {facts[chk.fact]}" if chk.fact in facts else f"{chk.fact} not known"
        else:
            status, detail = "manual", chk.how or ""
        if chk.measure:  # the log's own figures decide it when it prints them
            status, detail = decide(chk.measure, c.present) or (status, detail)
        out.append(CheckResult(chk.id, chk.text.strip(), status, detail))
    return out


def _kept(c: Candidate) -> bool:
    """At least MIN_SCORE; a candidate the log contradicts (`none:` evidence present) must stay
    strictly above it: one contradiction cancels the base and one support line, and what is left
    at the floor is the contradiction winning (a strict=False load that only reports mismatches)."""
    if c.negatives:
        return c.score > MIN_SCORE + 1e-9
    return c.score >= MIN_SCORE


def diagnose(cands: list[Candidate], obs: Observations) -> list[Diagnosis]:
    matched = [c for c in cands if c.matched and _kept(c)]
    order = LineOrder(obs, [ln for c in matched for ln in c.error_lines])
    _apply_specificity(matched)
    _apply_causality(matched, order)
    possible = sorted((c for c in cands if c.possible and c.ref.severity != "info"),
                      key=lambda c: (-c.score, -c.specificity[1], c.ref.id))[:MAX_POSSIBLE]
    for c in possible:
        c.notes.append("possible only: its own message is in the log, its confirming context is not")
    ranked = sorted(matched + possible, key=_sort_key)
    pos = {c.ref.id: i for i, c in enumerate(ranked)}
    by_id = {c.ref.id: c for c in cands}
    confirmed = {id(c): _confidence(c, ranked) for c in ranked if not c.possible}
    ceiling = min([POSSIBLE_CEILING] + [x - 0.01 for x in confirmed.values()])
    out = []
    for c in ranked:
        ref: Reference = c.ref
        first = _first_line(c, order)
        fix = (list(c.variant.fix) if c.variant else []) + list(ref.fix)
        out.append(Diagnosis(
            id=ref.id, title=ref.title, category=ref.category, severity=ref.severity,
            confidence=(_possible_confidence(c, ceiling) if c.possible else confirmed[id(c)]),
            evidence=tuple(_evidence(c, order)),
            checks=tuple(_checks(c, obs.facts)), fix=tuple(fix),
            rejected_siblings=tuple(_rejections(c, pos, by_id, matched)),
            sources=ref.sources, summary=ref.summary,
            variant=c.variant.id if c.variant else None,
            variant_title=c.variant.title if c.variant else None,
            consequence_of=c.consequence_of,
            first=Evidence(first.file, first.number, redact(first.text), "", first.prefix.key)
            if first else None,
            score=round(c.score, 3),
            status="possible" if c.possible else "confirmed",
        ))
    return out
