"""Human-readable terminal output: ranked candidates, evidence, checks, rejected siblings, fix."""

from __future__ import annotations

import textwrap

from ..model import Diagnosis, Report

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


def render_diagnosis(d: Diagnosis, rank: int, st: Style, single_file: bool, full: bool) -> list[str]:
    out = []
    head = f"{rank}. {_sev(st, d)} {st.bold(d.id)}  confidence {d.confidence:.2f}"
    if d.consequence_of:
        head += st.dim(f"  (likely a consequence of {d.consequence_of})")
    out.append(head)
    out.append(f"   {d.title}")
    if d.variant_title:
        out.append(f"   variant: {d.variant_title}")
    if d.first:
        who = f" in {d.first.process}" if d.first.process else ""
        out.append(st.dim(f"   first seen{who} at {_short(d.first.file, single_file)}line {d.first.line}"))
    if not full:
        return out
    if d.summary:
        out += ["", *textwrap.wrap(d.summary, 96, initial_indent="   ", subsequent_indent="   ")]
    out += ["", "   " + st.bold("Evidence")]
    for e in d.evidence:
        where = f"{_short(e.file, single_file)}{e.line}"
        proc = f"[{e.process}] " if e.process else ""
        out.append(f"   {st.cyan(where.rjust(6))}  {proc}{_clip(e.text)}")
    if d.checks:
        out += ["", "   " + st.bold("Checks")]
        for c in d.checks:
            mark = MARK[c.status]
            colored = {"pass": st.green, "fail": st.red}.get(c.status, st.dim)(mark)
            out += textwrap.wrap(c.text, 92, initial_indent=f"   {colored} ",
                                 subsequent_indent="     ")
            if c.detail and c.status == "manual":
                out += textwrap.wrap("how: " + c.detail, 90, initial_indent="       ",
                                     subsequent_indent="       ")
            elif c.detail:
                out.append(st.dim(f"       ({c.detail})"))
    if d.rejected_siblings:
        out += ["", "   " + st.bold("Why not")]
        for r in d.rejected_siblings:
            out += textwrap.wrap(f"{r.id}: {r.reason}", 92, initial_indent="   - ",
                                 subsequent_indent="     ")
    if d.fix:
        out += ["", "   " + st.bold("Fix")]
        for i, f in enumerate(d.fix, 1):
            out += textwrap.wrap(f.do, 92, initial_indent=f"   {i}. ", subsequent_indent="      ")
            if f.why:
                out += [st.dim(x) for x in textwrap.wrap("why: " + f.why, 90,
                                                         initial_indent="      ",
                                                         subsequent_indent="      ")]
    if d.sources:
        out += ["", "   " + st.bold("Sources")]
        out += [f"   {s.url}" for s in d.sources]
    return out


def render_unexplained(report: Report, st: Style, single: bool, limit: int = 5) -> list[str]:
    out = []
    for u in report.unexplained[:limit]:
        where = f"{_short(u.file, single)}line {u.line}"
        proc = f" [{u.process}]" if u.process else ""
        out.append(f"   {st.cyan(where)}{proc}: {_clip(u.text)}")
        about = [u.kind] + ([f"raised in {u.component}"] if u.component else []) + \
            ([f"from {u.user_frame}"] if u.user_frame else [])
        out.append(st.dim("      " + ", ".join(about)))
        if u.nearest:
            out.append(st.dim("      similar references, not matched: "
                              + ", ".join(n.id for n in u.nearest)))
    return out


def render(report: Report, top: int | None = None, color: bool = False) -> str:
    st = Style(color)
    single = len(report.inputs) == 1
    names = ", ".join(f.path for f in report.inputs)
    lines_total = sum(f.lines for f in report.inputs)
    out = [st.dim(f"faultlens: {names} ({lines_total} lines, {report.reference_count} references)")]
    shown = list(report.diagnoses)[: top or None]
    confirmed = [d for d in report.failures if d.status == "confirmed"]
    if not report.failures and not report.unexplained:
        out.append(st.green("No failure found in this log."))
    elif not report.failures:
        out.append(st.yellow("No reference in the catalogue explains this failure. The failing line:"))
        out += render_unexplained(report, st, single)
    elif not confirmed:
        out.append(st.yellow("No reference is confirmed by the log; possible explanations, best first "
                             "(the checks say what decides):"))
    for i, d in enumerate(shown, 1):
        out.append("")
        out += render_diagnosis(d, i, st, single, full=(i == 1 or d.severity != "failure"
                                                        or d.consequence_of is None and i <= 2))
    if report.failures and report.unexplained:
        out += ["", st.bold("Also in the log, explained by no reference:")]
        out += render_unexplained(report, st, single, limit=3)
    facts = ", ".join(f"{k}={v}" for k, v in sorted(report.facts.items()) if not k.startswith("env."))
    if facts:
        out += ["", st.dim(f"facts from the log: {facts}")]
    return "\n".join(out)
