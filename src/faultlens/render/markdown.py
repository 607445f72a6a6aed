"""Markdown output, for issue comments and CI summaries."""

from __future__ import annotations

from ..model import Report
from .words import dedupe_fixes

MARK = {"pass": "✅", "fail": "❌", "unknown": "❔", "manual": "🔎"}
LEGEND = ("✅ the log shows it · ❌ the log contradicts it · ❔ not in this log · "
          "🔎 check it by hand")


def _origin(o) -> str:
    where = f"[{o.project} `{o.path}`]({o.url})" if o.url else f"{o.project} `{o.path}`"
    func = f" ({o.function})" if o.function else ""
    skew = f" **version skew:** {o.skew}" if o.skew else ""
    return f"printed by {where}{func}, {o.span or ', '.join(o.releases)}{skew}"


def render(report: Report, top: int | None = None) -> str:
    out = ["## faultlens diagnosis", ""]
    names = ", ".join(f"`{f.path}`" for f in report.inputs)
    out.append(f"Input: {names}")
    shown = list(report.diagnoses)[: top or None]
    if not report.failures and not report.unexplained:
        out += ["", "**No failure found.**"]
    if report.unexplained:
        out += ["", "**Failure lines no reference explains:**" if not report.failures else
                "**Also in the log, explained by no reference:**", ""]
        for u in report.unexplained[:5]:
            about = u.kind + (f", raised in {u.component}" if u.component else "") + \
                (f", from `{u.user_frame}`" if u.user_frame else "")
            similar = (" — similar references, not matched: " + ", ".join(f"`{n.id}`" for n in u.nearest)
                       if u.nearest else "")
            proc = f"[{u.process}] " if u.process else ""
            out.append(f"- line {u.line}: `{proc}{u.text[:200]}` ({about}){similar}")
            if u.origin:
                out.append(f"  - {_origin(u.origin)}")
    if shown:
        out += ["", "| # | reference | severity | confidence | first seen |", "|---|---|---|---|---|"]
        for i, d in enumerate(shown, 1):
            first = f"line {d.first.line}" + (f" ({d.first.process})" if d.first and d.first.process else "") \
                if d.first else ""
            cons = f" — consequence of `{d.consequence_of}`" if d.consequence_of else ""
            sev = "possible" if d.status == "possible" else d.severity
            out.append(f"| {i} | `{d.id}`{cons} | {sev} | {d.confidence:.2f} | {first} |")
    for d in shown[:1] + [d for d in shown[1:] if d.severity == "failure" and not d.consequence_of][:1]:
        status = ("confirmed by the log" if d.status == "confirmed" else
                  "possible: the log does not confirm it; the ❔ checks say what would")
        out += ["", f"### {d.title}", "", f"`{d.id}` · confidence {d.confidence:.2f} · {status}"
                + (f" · variant: {d.variant_title}" if d.variant_title else ""), "",
                d.summary, "", "**Evidence**", "", "```"]
        out += [f"{e.line:>6}  " + (f"[{e.process}] " if e.process else "") + e.text
                for e in d.evidence]
        out += ["```"]
        traced = [e for e in d.evidence if e.origin]
        if traced:
            out += [""] + [f"- line {e.line}: {_origin(e.origin)}" for e in traced]
        out += ["", "**Checks**", "", f"<sub>{LEGEND}</sub>", ""]
        out += [f"- {MARK[c.status]} {c.text}" + (f" — {c.detail}" if c.detail else "") for c in d.checks]
        if d.rejected_siblings:
            out += ["", "**Why not**", ""]
            out += [f"- `{r.id}`: {r.reason}" for r in d.rejected_siblings]
        out += ["", "**Fix**", ""]
        out += [f"{i}. {f.do}" + (f" _Why: {f.why}_" if f.why else "")
                for i, f in enumerate(dedupe_fixes(d.fix), 1)]
        out += ["", "**Sources**: " + ", ".join(f"<{s.url}>" for s in d.sources)]
    return "\n".join(out) + "\n"
