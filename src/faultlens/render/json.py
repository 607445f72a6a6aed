"""The versioned JSON contract of `faultlens diagnose --json` (documented in docs/json-contract.md)."""

from __future__ import annotations

import json as _json

from .. import __version__
from ..model import Diagnosis, Origin, Reference, Report, Unexplained
from ..redact import redact_json

SCHEMA = 1


def _origin(o: Origin | None) -> dict | None:
    return None if o is None else o.to_json()


def diagnosis_dict(d: Diagnosis) -> dict:
    return {
        "id": d.id,
        "title": d.title,
        "category": d.category,
        "severity": d.severity,
        "status": d.status,
        "confidence": d.confidence,
        "variant": d.variant,
        "variant_title": d.variant_title,
        "consequence_of": d.consequence_of,
        "summary": d.summary,
        "first": None if d.first is None else
        {"file": d.first.file, "line": d.first.line, "process": d.first.process or None,
         "text": d.first.text, "origin": _origin(d.first.origin)},
        "evidence": [{"file": e.file, "line": e.line, "text": e.text, "signal": e.signal,
                      "process": e.process or None, "origin": _origin(e.origin)}
                     for e in d.evidence],
        "checks": [{"id": c.id, "text": c.text, "status": c.status, "detail": c.detail}
                   for c in d.checks],
        "fix": [{"do": f.do, "why": f.why} for f in d.fix],
        "rejected_siblings": [{"id": r.id, "reason": r.reason} for r in d.rejected_siblings],
        "sources": [s.url for s in d.sources],
    }


def report_dict(report: Report, top: int | None = None) -> dict:
    diagnoses = list(report.diagnoses)
    if top is not None:
        diagnoses = diagnoses[:top]
    # redacted whole: the evidence is redacted by the engine, but facts, check details and
    # file names come from the log and the environment too
    return redact_json({
        "schema": SCHEMA,
        "tool": {"name": "faultlens", "version": __version__},
        "catalogue": {"digest": report.catalogue_digest, "references": report.reference_count},
        "input": {
            "files": [{"path": f.path, "bytes": f.bytes, "lines": f.lines,
                       "compression": f.compression, "warnings": list(f.warnings)}
                      for f in report.inputs],
            "facts": dict(sorted(report.facts.items())),
            "facts_from_environment": list(report.environment_facts),
            "tracebacks": len(report.tracebacks),
        },
        "failure": report.top is not None or bool(report.unexplained),
        "diagnoses": [diagnosis_dict(d) for d in diagnoses],
        "unexplained": [unexplained_dict(u) for u in report.unexplained],
    })


def unexplained_dict(u: Unexplained) -> dict:
    return {"file": u.file, "line": u.line, "text": u.text, "kind": u.kind,
            "component": u.component or None, "user_frame": u.user_frame or None,
            "process": u.process or None,
            "nearest": [{"id": n.id, "score": n.score} for n in u.nearest],
            "origin": _origin(u.origin)}


def render(report: Report, top: int | None = None) -> str:
    return _json.dumps(report_dict(report, top), indent=2, ensure_ascii=False)


def reference_dict(ref: Reference, full: bool = False) -> dict:
    """A reference as `faultlens refs list --json` (summary) and `refs show --json` (full) print it."""
    base = {"id": ref.id, "title": ref.title, "category": ref.category, "severity": ref.severity,
            "status": ref.status}
    if not full:
        return base
    from dataclasses import asdict

    data = asdict(ref)
    data["signals"] = {k: asdict(v) for k, v in ref.signals.items()}
    data.pop("path", None)
    return {**base, **data}
