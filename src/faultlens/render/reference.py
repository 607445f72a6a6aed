"""A reference in full, for `faultlens refs show`."""

from __future__ import annotations

import textwrap

from ..model import Reference


def _para(title: str, text: str) -> list[str]:
    return ["", title, *textwrap.wrap(text, 96, initial_indent="  ", subsequent_indent="  ")]


def _items(title: str, items) -> list[str]:
    out = ["", title]
    for item in items:
        out += textwrap.wrap(str(item), 94, initial_indent="  - ", subsequent_indent="    ")
    return out


def fingerprint_text(ref: Reference) -> list[str]:
    fp = ref.fingerprint
    out = []
    for part, label in (("all", "requires all of"), ("any", "and one of"), ("support", "supported by"),
                        ("none", "argued against by"), ("order", "in this order")):
        names = getattr(fp, part)
        if names:
            out.append(f"  {label}: {', '.join(names)}")
    for sig in ref.signals.values():
        kind = "frame" if sig.kind == "frame" else sig.level
        out.append(f"    {sig.name} [{kind}]: /{sig.regex}/")
        if sig.explain:
            out += textwrap.wrap(sig.explain, 90, initial_indent="      ", subsequent_indent="      ")
    return out


def render(ref: Reference) -> str:
    out = [f"{ref.id}  ({ref.category}, {ref.severity}" + (", consequence" if ref.role == "consequence"
                                                          else "") + ")", ref.title]
    out += _para("Summary", ref.summary)
    out += _para("Mechanism", ref.mechanism)
    out += _items("Symptoms", ref.symptoms)
    out += _items("Affects", ref.affects)
    out += ["", "Fingerprint", *fingerprint_text(ref)]
    if ref.facts:
        out += _items("Environment facts", [f"{f.fact} {f.op} {f.value}" + (f": {f.explain}" if f.explain else "")
                                            for f in ref.facts])
    checks = []
    for c in ref.checks:
        how = f" (decided from the log: {c.signal})" if c.signal else \
            f" (decided from {c.fact} {c.op} {c.value})" if c.fact else f" How: {c.how}"
        checks.append(c.text + how)
    out += _items("Checks", checks)
    out += ["", "Fix"]
    for i, f in enumerate(ref.fix, 1):
        out += textwrap.wrap(f.do, 94, initial_indent=f"  {i}. ", subsequent_indent="     ")
        if f.why:
            out += textwrap.wrap("Why: " + f.why, 92, initial_indent="     ", subsequent_indent="     ")
    if ref.variants:
        out += _items("Variants", [f"{v.id}: {v.title}" for v in ref.variants])
    if ref.siblings:
        out += _items("Siblings", [f"{s.id}: {s.distinguish}" for s in ref.siblings])
    if ref.downstream_of:
        out += _items("Usually downstream of", ref.downstream_of)
    out += _items("Sources", [s.url + (f" - {s.note}" if s.note else "") for s in ref.sources])
    return "\n".join(out)
