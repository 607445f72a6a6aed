"""GitHub Actions workflow commands: one annotation per diagnosis, at its first error line."""

from __future__ import annotations

from ..model import Report

LEVEL = {"failure": "error", "warning": "warning", "info": "notice"}


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render(report: Report, top: int | None = None) -> str:
    out = []
    for d in list(report.diagnoses)[: top or None]:
        status = ", possible - not confirmed by the log" if d.status == "possible" else ""
        props = [f"title={_escape(f'faultlens: {d.id} ({d.confidence:.2f}{status})', prop=True)}"]
        if d.first and not d.first.file.startswith("<"):
            props = [f"file={_escape(d.first.file, prop=True)}", f"line={d.first.line}"] + props
        body = d.title
        if d.consequence_of:
            body += f" - likely a consequence of {d.consequence_of}"
        if d.fix:
            body += f"\nFix: {d.fix[0].do}"
        if d.sources:
            body += f"\nSee: {d.sources[0].url}"
        out.append(f"::{LEVEL[d.severity]} {','.join(props)}::{_escape(body)}")
    if not report.failures:
        for u in report.unexplained[:3]:
            props = [f"title={_escape(f'faultlens: {u.kind}, explained by no reference', prop=True)}"]
            if not u.file.startswith("<"):
                props = [f"file={_escape(u.file, prop=True)}", f"line={u.line}"] + props
            out.append(f"::error {','.join(props)}::{_escape(u.text)}")
        if not report.unexplained:
            out.append("::notice title=faultlens::No known failure found in this log.")
    return "\n".join(out)
