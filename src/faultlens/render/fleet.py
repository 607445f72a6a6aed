"""Text report of `faultlens scan`: the aggregate of a fleet scan (fleet/aggregate.py)."""

from __future__ import annotations

from ..fleet.clues import HEAD_BYTES, TAIL_BYTES

SHOW_HOSTS = 15
SHOW_TEMPLATES = 20
SHOW_UNREADABLE = 10


def _refs(counts: dict, n: int = 3) -> str:
    return ", ".join(f"{ref} {c}" for ref, c in list(counts.items())[:n])


def render(data: dict) -> str:
    out = [(f"faultlens scan: {data['jobs']} jobs: {data['diagnosed']} diagnosed, "
            f"{data['unexplained']} unexplained, {data['unreadable']} unreadable")]
    if len(data["catalogues"]) > 1 or data["catalogue_mismatch"]:
        out.append(f"warning: workers used {len(data['catalogues'])} catalogues "
                   f"({', '.join(data['catalogues'])}); {len(data['catalogue_mismatch'])} jobs "
                   "were diagnosed with another catalogue than this machine's")
    if data["references"]:
        out += ["", "Jobs per reference"]
        out += [f"  {r['jobs']:>6}  {r['id']:<44} on {r['hosts']} host(s)  e.g. {r['examples'][0]}"
                for r in data["references"]]
    if data["hosts"]:
        flagged = sum(1 for h in data["hosts"] if h["repeated"])
        out += ["", f"Hosts: {len(data['hosts'])}, {flagged} with a recurring failure (!)"]
        for h in data["hosts"][:max(SHOW_HOSTS, flagged)]:
            mark = "!" if h["repeated"] else " "
            detail = ("recurs: " + ", ".join(f"{x['id']} x{x['jobs']} (expected {x['expected']})"
                                             for x in h["repeated"])
                      if h["repeated"] else _refs(h["references"]))
            out.append(f"{mark} {h['host']:<24} {h['jobs']:>5} jobs  {h['unexplained']:>4} "
                       f"unexplained  {detail}")
        if len(data["hosts"]) > max(SHOW_HOSTS, flagged):
            out.append(f"  ... {len(data['hosts']) - max(SHOW_HOSTS, flagged)} more (--json)")
    if data["days"]:
        out += ["", "Per day"]
        out += [(f"  {d['day']:<10} {d['jobs']:>6} jobs  {d['diagnosed']:>5} diagnosed  "
                 f"{d['unexplained']:>4} unexplained  {d['unreadable']:>4} unreadable  "
                 f"{_refs(d['references'])}") for d in data["days"]]
    if data["unexplained"]:
        templates = data["unexplained_templates"]
        out += ["", (f"Unexplained: {data['unexplained']} jobs without a diagnosis of "
                     f"confidence >= {data['confident']}; their error lines form "
                     f"{len(templates)} templates")]
        if templates:
            out.append(f"  {'jobs':>5} {'lines':>6}  template")
        for t in templates[:SHOW_TEMPLATES]:
            out.append(f"  {t['jobs']:>5} {t['lines']:>6}  {t['template'][:160]}")
            out.append(f"  {'':>12}  e.g. {', '.join(t['examples'])}")
        if len(templates) > SHOW_TEMPLATES:
            out.append(f"  ... {len(templates) - SHOW_TEMPLATES} more templates (--json)")
        if data["unexplained_without_error_lines"]:
            out.append(f"  {data['unexplained_without_error_lines']} unexplained jobs have no "
                       f"error line in their logs' first {HEAD_BYTES >> 10} KiB and last "
                       f"{TAIL_BYTES >> 10} KiB (healthy, or killed without a word)")
    if data["unreadable"]:
        out += ["", f"Unreadable: {data['unreadable']} jobs"]
        out += [f"  {u['job']}: {u['error']}" for u in data["unreadable_examples"][:SHOW_UNREADABLE]]
        if data["unreadable"] > SHOW_UNREADABLE:
            out.append(f"  ... {data['unreadable'] - SHOW_UNREADABLE} more (see the rows: --out)")
    return "\n".join(line.rstrip() for line in out)
