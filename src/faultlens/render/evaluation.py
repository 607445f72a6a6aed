"""Text report of `faultlens eval`."""

from __future__ import annotations


def render(data: dict) -> str:
    out = [f"{data['entries']} entries: {data['labelled']} labelled, {data['healthy']} healthy",
           f"top-1 accuracy  {data['top1']:.3f}",
           f"top-3 accuracy  {data['top3']:.3f}",
           f"false alarms    {len(data['false_alarms'])}" +
           (f"  ({', '.join(data['false_alarms'])})" if data["false_alarms"] else ""),
           f"misses          {len(data['misses'])}" +
           (f"  ({', '.join(data['misses'])})" if data["misses"] else "")]
    if data["confusions"]:
        out += ["", "confusions (expected -> got):"]
        out += [f"  {c['expected']} -> {c['got']}  x{c['count']}" for c in data["confusions"]]
    if data.get("calibration"):
        out += ["", "calibration (confidence of the top diagnosis -> top-1 accuracy):"]
        out += [f"  {c['band']}  n={c['n']:<3} top-1 {c['top1']:.2f}" for c in data["calibration"]]
    out += ["", f"{'reference':<44} {'n':>3} {'top1':>5} {'top3':>5}"]
    for rid, row in data["per_reference"].items():
        out.append(f"{rid:<44} {row['n']:>3} {row['top1']:>5} {row['top3']:>5}")
    wrong = [o for o in data["outcomes"] if not o["top1"]]
    if wrong:
        out += ["", "not top-1:"]
        out += [f"  {o['name']}: expected {o['expect']}, got {', '.join(o['got']) or 'nothing'}"
                + (f" ({o['error']})" if o["error"] else "") for o in wrong]
    return "\n".join(out)
