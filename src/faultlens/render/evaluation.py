"""Text report of `faultlens eval`."""

from __future__ import annotations


def _f(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def render(data: dict) -> str:
    out = [f"{data['entries']} entries: {data['labelled']} failure logs "
           f"({data['unreferenced']} of classes no reference covers yet), {data['healthy']} healthy",
           f"top-1 accuracy  {data['top1']:.3f}   (referenced only: {_f(data['top1_referenced'])})",
           f"top-3 accuracy  {data['top3']:.3f}   (referenced only: {_f(data['top3_referenced'])})",
           f"answer rate     {_f(data['answer_rate'])}   (a diagnosis, or the failing line named)",
           f"false alarms    {len(data['false_alarms'])}" +
           (f"  ({', '.join(data['false_alarms'])})" if data["false_alarms"] else ""),
           f"unanswered      {len(data['unanswered'])}" +
           (f"  ({', '.join(data['unanswered'])})" if data["unanswered"] else "")]
    st = data["by_status"]
    out.append("by top answer   " + "; ".join(
        f"{s} n={st[s]['n']} top-1 {_f(st[s]['top1'])} top-3 {_f(st[s]['top3'])}"
        for s in ("confirmed", "possible")))
    fl = data["failure_lines"]
    if fl["n"]:
        out.append(f"failure lines   n={fl['n']}: first named line is the labelled line "
                   f"{_f(fl['precision'])}, labelled line among those named {_f(fl['recall'])}")
    if data.get("batches"):
        out += ["", f"{'batch':<16} {'entries':>7} {'top-1':>6} {'ref.':>6} {'answer':>7} {'alarms':>6}"]
        for name, b in data["batches"].items():
            out.append(f"{name:<16} {b['entries']:>7} {_f(b['top1']):>6} {_f(b['top1_referenced']):>6} "
                       f"{_f(b['answer_rate']):>7} {b['false_alarms']:>6}")
    if data["confusions"]:
        out += ["", "confusions (expected -> got):"]
        out += [f"  {c['expected']} -> {c['got']}  x{c['count']}" for c in data["confusions"]]
    for status, rows in data.get("calibration_by_status", {}).items():
        if rows:
            out += ["", f"calibration, {status} answers (confidence band -> top-1 accuracy):"]
            out += [f"  {c['band']}  n={c['n']:<3} top-1 {c['top1']:.2f}" for c in rows]
    out += ["", f"{'reference':<44} {'n':>3} {'top1':>5} {'top3':>5}"]
    for rid, row in data["per_reference"].items():
        out.append(f"{rid:<44} {row['n']:>3} {row['top1']:>5} {row['top3']:>5}")
    wrong = [o for o in data["outcomes"] if not o["top1"]]
    if wrong:
        out += ["", "not top-1:"]
        out += [f"  {o['name']}: expected {o['expect']}, got {', '.join(o['got']) or 'nothing'}"
                + ("" if o["got"] or not o["answered"] else " (failing line named)")
                + (f" ({o['error']})" if o["error"] else "") for o in wrong]
    return "\n".join(out)
