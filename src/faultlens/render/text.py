"""Human-readable terminal output.

The default is the verdict in about 25 lines: the top diagnosis, its key evidence, the checks the
log decided, the first fix, one line per other candidate. `verbose` is the full report: mechanism,
every check, why not, every fix, sources. Everything is wrapped to the terminal width; evidence lines
are cut with an ellipsis and keep their line number.
"""

from __future__ import annotations

import re
import textwrap

from ..model import Diagnosis, Evidence, Report
from .words import dedupe_fixes, first_sentence, plural

MARK = {"pass": "✓", "fail": "✗", "unknown": "?", "manual": "•"}


class Style:
    def __init__(self, color: bool):
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def bold(self, t: str) -> str:
        return self._wrap("1", t)

    def dim(self, t: str) -> str:
        return self._wrap("2", t)

    def red(self, t: str) -> str:
        return self._wrap("31", t)

    def yellow(self, t: str) -> str:
        return self._wrap("33", t)

    def green(self, t: str) -> str:
        return self._wrap("32", t)

    def cyan(self, t: str) -> str:
        return self._wrap("36", t)


def _sev(st: Style, d: Diagnosis) -> str:
    label = d.severity.upper()
    if d.status == "possible":
        return st.yellow("POSSIBLE")
    return {"failure": st.red, "warning": st.yellow}.get(d.severity, st.cyan)(label)


def _short(path: str, single: bool) -> str:
    return "" if single else path.rsplit("/", 1)[-1] + ":"


def _clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrap(text: str, width: int, first: str, rest: str | None = None,
          max_lines: int = 0) -> list[str]:
    """Wrap plain text to `width`; with `max_lines`, the last kept line ends with an ellipsis."""
    lines = textwrap.wrap(" ".join(text.split()), max(20, width), initial_indent=first,
                          subsequent_indent=first if rest is None else rest,
                          break_on_hyphens=False) or [first.rstrip()]
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        lines[-1] = (last if len(last) < width else last[: width - 1].rstrip()) + "…"
    return lines


def _evidence_body(where: str, proc: str, text: str, width: int) -> str:
    """The text of one evidence line, cut with an ellipsis to fit the width after its line number."""
    head = f"   {where.rjust(6)}  "
    body = (f"[{proc}] " if proc else "") + text.strip()
    room = max(20, width - len(head))
    return body if len(body) <= room else body[: room - 1] + "…"


def _status(d: Diagnosis) -> str:
    if d.status == "possible":
        return "not confirmed by the log"
    return "confirmed" if d.severity == "failure" else d.severity


def _head(d: Diagnosis, rank: int | None, st: Style, width: int = 80) -> list[str]:
    """`1. FAILURE id  confidence 0.75, confirmed`, on two lines when it does not fit."""
    num = f"{rank}. " if rank else ""
    first = f"{num}{_sev(st, d)} {st.bold(d.id)}"
    rest = f"confidence {d.confidence:.2f}, {_status(d)}"
    plain_len = len(f"{num}{_sev(Style(False), d)} {d.id}  {rest}")
    lines = [f"{first}  {rest}"] if plain_len <= width else [first, f"   {rest}"]
    if d.consequence_of:
        lines += [st.dim(x) for x in _wrap(f"(likely a consequence of {d.consequence_of})",
                                           width, "   ")]
    return lines


def _first_seen(d: Diagnosis, single: bool) -> str:
    if not d.first:
        return ""
    who = f" in {d.first.process}" if d.first.process else ""
    return f"first seen{who} at {_short(d.first.file, single)}line {d.first.line}"


def _evidence_lines(evidence, st: Style, single: bool, width: int,
                    origins: bool = False) -> list[str]:
    out = []
    for e in evidence:
        where = f"{_short(e.file, single)}{e.line}"
        out.append(f"   {st.cyan(where.rjust(6))}  {_evidence_body(where, e.process, e.text, width)}")
        if origins:
            out += _origin_lines(e.origin, st, width, "           ")
    return out


def key_evidence(d: Diagnosis, limit: int = 4) -> list[Evidence]:
    """The first error line and the evidence around it, at most `limit` lines, in log order."""
    chosen: list[Evidence] = []
    if d.first:
        chosen += [e for e in d.evidence if (e.file, e.line) == (d.first.file, d.first.line)][:1]
    for e in d.evidence:
        if len(chosen) >= limit:
            break
        if e not in chosen:
            chosen.append(e)
    order = {id(e): i for i, e in enumerate(d.evidence)}
    return sorted(chosen, key=lambda e: order[id(e)])


def _origin_lines(origin, st: Style, width: int, indent: str = "   ") -> list[str]:
    """'printed by <project> <file> (<function>), <releases>' and any version skew, dimmed."""
    if origin is None:
        return []
    out = [st.dim(x) for x in _wrap("printed by " + origin.describe(), width, indent,
                                    indent + "  ", max_lines=2)]
    if origin.skew:
        out += [st.yellow(x) for x in _wrap("version skew: " + origin.skew, width, indent,
                                            indent + "  ", max_lines=3)]
    return out


def first_origin(d: Diagnosis):
    """The origin of the diagnosis's first error line, else of its first traced evidence line."""
    if d.first is not None and d.first.origin is not None:
        return d.first.origin
    return next((e.origin for e in d.evidence if e.origin is not None), None)


def user_code_frame(report: Report, d: Diagnosis) -> str:
    """The last frame outside installed packages of the traceback that ends at the failure."""
    from ..engine.unexplained import user_frame_of

    if not d.first:
        return ""
    for tb in report.tracebacks:
        if tb.file == d.first.file and tb.start <= d.first.line <= tb.exception_line:
            return user_frame_of(tb)
    return ""


def decisive_checks(d: Diagnosis) -> list:
    """Checks the log decided (pass/fail), and for a possible candidate what would confirm it."""
    opened = [c for c in d.checks if c.id.startswith("confirm-")]
    decided = [c for c in d.checks if c.status in ("pass", "fail")]
    return opened + decided


def _check_mark(st: Style, status: str) -> str:
    return {"pass": st.green, "fail": st.red}.get(status, st.dim)(MARK[status])


def render_diagnosis(d: Diagnosis, rank: int, st: Style, single_file: bool, full: bool,
                     width: int = 80) -> list[str]:
    """The full account of one diagnosis (verbose output)."""
    out = _head(d, rank, st, width)
    out += _wrap(d.title, width, "   ")
    if d.variant_title:
        out += _wrap("variant: " + d.variant_title, width, "   ", "     ")
    if d.first:
        out.append(st.dim("   " + _first_seen(d, single_file)))
    if not full:
        return out
    if d.summary:
        out += ["", *_wrap(d.summary, width, "   ")]
    out += ["", "   " + st.bold("Evidence")]
    out += _evidence_lines(d.evidence, st, single_file, width, origins=True)
    if d.checks:
        out += ["", "   " + st.bold("Checks")]
        for c in d.checks:
            wrapped = _wrap(c.text, width, "   X ", "     ")
            out += [wrapped[0].replace("X", _check_mark(st, c.status), 1), *wrapped[1:]]
            if c.detail and c.status == "manual":
                out += _wrap("how: " + c.detail, width, "       ")
            elif c.detail:
                out += [st.dim(x) for x in _wrap(f"({c.detail})", width, "       ")]
    if d.rejected_siblings:
        out += ["", "   " + st.bold("Why not")]
        for r in d.rejected_siblings:
            out += _wrap(f"{r.id}: {r.reason}", width, "   - ", "     ")
    fixes = dedupe_fixes(d.fix)
    if fixes:
        out += ["", "   " + st.bold("Fix")]
        for i, f in enumerate(fixes, 1):
            out += _wrap(f.do, width, f"   {i}. ", "      ")
            if f.why:
                out += [st.dim(x) for x in _wrap("why: " + f.why, width, "      ")]
    if d.sources:
        out += ["", "   " + st.bold("Sources")]
        out += [f"   {s.url}" for s in d.sources]
    return out


def render_unexplained(report: Report, st: Style, single: bool, limit: int = 5,
                       width: int = 80) -> list[str]:
    """Failure lines no reference explains: the line, what raised it, the nearest references."""
    out = []
    for u in report.unexplained[:limit]:
        where = f"{_short(u.file, single)}line {u.line}:"
        body = (f"[{u.process}] " if u.process else "") + u.text.strip()
        room = max(20, width - len(where) - 4)
        out.append(f"   {st.cyan(where)} {body if len(body) <= room else body[: room - 1] + '…'}")
        about = [u.kind] + ([f"raised in {u.component}"] if u.component else []) + \
            ([f"from {u.user_frame}"] if u.user_frame else [])
        out += [st.dim(x) for x in _wrap(", ".join(about), width, "      ", max_lines=2)]
        out += _origin_lines(u.origin, st, width, "      ")
        if u.nearest:
            out += [st.dim(x) for x in _wrap("similar references, not matched: "
                                             + ", ".join(n.id for n in u.nearest), width,
                                             "      ", max_lines=1)]
    return out


def _other_line(d: Diagnosis, rank: int, st: Style, width: int,
                top: Diagnosis | None = None) -> list[str]:
    """One line for a candidate below the top one; a possible one says which check decides."""
    tail = ""
    why_lower = {r.id: r.reason for r in top.rejected_siblings} if top else {}
    if "explains the same line" in why_lower.get(d.id, ""):
        tail = ": the same line, explained with more evidence by the first"
    elif d.status == "possible":
        opened = [c for c in d.checks if c.id.startswith("confirm-")]
        if opened:
            wanted = re.sub(r"^Confirm it: look for a line showing (that |one of: )?", "",
                            opened[0].text)
            tail = ": would need " + wanted.rstrip(".")
    elif d.consequence_of:
        tail = f": likely a consequence of {d.consequence_of}"
    else:
        tail = ": " + d.title
    label = "possible" if d.status == "possible" else d.severity
    plain = f"{rank}. {label} {d.id} ({d.confidence:.2f}){tail}"
    line = _wrap(plain, width, "   ", "", max_lines=1)[0]
    return [line.replace(label, {"possible": st.yellow, "failure": st.red,
                                 "warning": st.yellow}.get(label, st.cyan)(label), 1)
            .replace(d.id, st.bold(d.id), 1)]


def _header(report: Report, st: Style, width: int) -> list[str]:
    lines_total = sum(f.lines for f in report.inputs)
    tail = f" ({plural(lines_total, 'line')}, {plural(report.reference_count, 'reference')})"
    names = ", ".join(f.path or "(standard input)" for f in report.inputs)
    if len(names) + len(tail) + 11 > width:  # long paths: the file names are enough
        names = ", ".join((f.path or "(standard input)").rsplit("/", 1)[-1] for f in report.inputs)
    if len(names) + len(tail) + 11 > width:
        names = plural(len(report.inputs), "file")
    return [st.dim(f"faultlens: {names}{tail}")]


def _verdict_line(report: Report, st: Style, width: int) -> list[str]:
    confirmed = report.confirmed
    if not report.failures and not report.unexplained:
        return [st.green("No failure found in this log.")]
    if not report.failures:
        return [st.yellow(x) for x in _wrap(
            "No reference in the catalogue explains this failure. The failing line:", width, "")]
    if not confirmed:
        return [st.yellow(x) for x in _wrap(
            "No reference is confirmed by the log; possible explanations, best first "
            "(the checks say what decides):", width, "")]
    return []


def render_short(report: Report, top: int | None, st: Style, width: int) -> list[str]:
    """The verdict in about 25 lines."""
    single = len(report.inputs) == 1
    out = _header(report, st, width)
    verdict = _verdict_line(report, st, width)
    if verdict:
        out += [""] + verdict
    shown = list(report.diagnoses)[: top or None]
    if not report.failures and report.unexplained:
        out += render_unexplained(report, st, single, limit=3, width=width)
    if shown:
        d = shown[0]
        out += [""] + _head(d, None, st, width)
        out += _wrap(d.title, width, "   ", max_lines=2)
        if d.variant_title:
            out += _wrap("variant: " + d.variant_title, width, "   ", "     ", max_lines=2)
        ev = key_evidence(d)
        if ev:
            out.append("   " + st.bold("Evidence") + st.dim(f" ({_first_seen(d, single)})"
                                                          if d.first else ""))
            out += _evidence_lines(ev, st, single, width)
        frame = user_code_frame(report, d)
        if frame:
            out += _wrap("your code: " + frame, width, "   ", "     ", max_lines=2)
        out += _origin_lines(first_origin(d), st, width)
        checks = decisive_checks(d)[:3]
        if checks:
            out.append("   " + st.bold("Checks decided by the log") if d.status != "possible"
                       else "   " + st.bold("What would confirm it"))
            for c in checks:
                wrapped = _wrap(first_sentence(c.text), width, "   X ", "     ", max_lines=2)
                out += [wrapped[0].replace("X", _check_mark(st, c.status), 1), *wrapped[1:]]
                if c.detail and c.status in ("pass", "fail") and not re.match(r"line \d+$", c.detail):
                    out += [st.dim(x) for x in _wrap(f"({c.detail})", width, "     ", max_lines=1)]
        fixes = dedupe_fixes(d.fix)
        if fixes:
            wrapped = _wrap(fixes[0].do, width, "   Fix: ", "        ", max_lines=3)
            out += [wrapped[0].replace("Fix:", st.bold("Fix:"), 1), *wrapped[1:]]
        others = shown[1:]
        if others:
            out += ["", st.bold("Other candidates")]
            for i, o in enumerate(others[:4], 2):
                out += _other_line(o, i, st, width, top=d)
            if len(others) > 4:
                out.append(st.dim(f"   … and {plural(len(others) - 4, 'more')} (see -v)"))
    if report.unexplained and (report.failures and not report.confirmed):
        out += ["", st.bold("Failure lines no reference explains")]
        out += render_unexplained(report, st, single, limit=2, width=width)
    elif report.unexplained and report.failures:
        out += [""] + [st.dim(x) for x in _wrap(
            f"Also {plural(len(report.unexplained), 'failure line')} no reference explains "
            f"(first: line {report.unexplained[0].line}; see -v).", width, "")]
    if shown:
        out += [st.dim(x) for x in _wrap(
            "(-v: the mechanism, every check, why not the others, every fix, sources)",
            width, "")]
    return out


def render_full(report: Report, top: int | None, st: Style, width: int) -> list[str]:
    """Today's full report: every candidate with its mechanism, checks, why not, fixes, sources."""
    single = len(report.inputs) == 1
    out = _header(report, st, width)
    verdict = _verdict_line(report, st, width)
    out += verdict
    if not report.failures and report.unexplained:
        out += render_unexplained(report, st, single, width=width)
    shown = list(report.diagnoses)[: top or None]
    for i, d in enumerate(shown, 1):
        out.append("")
        out += render_diagnosis(d, i, st, single, full=(i == 1 or d.severity != "failure"
                                                        or d.consequence_of is None and i <= 2),
                                width=width)
    if report.failures and report.unexplained:
        out += ["", st.bold("Also in the log, explained by no reference:")]
        out += render_unexplained(report, st, single, limit=3, width=width)
    from_env = set(report.environment_facts)
    for label, mine in (("facts from the log: ", False), ("facts from this machine: ", True)):
        facts = ", ".join(f"{k}={v}" for k, v in sorted(report.facts.items())
                          if not k.startswith("env.") and (k in from_env) == mine)
        if facts:
            out += [""] + [st.dim(x) for x in _wrap(label + facts, width, "")]
    return out


def render(report: Report, top: int | None = None, color: bool = False, verbose: bool = False,
           width: int = 80) -> str:
    st = Style(color)
    lines = (render_full if verbose else render_short)(report, top, st, width)
    return "\n".join(lines)
