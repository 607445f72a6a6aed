"""How many of corpus/'s failure lines resolve to an upstream origin (figures for the README).

For each labelled corpus entry (corpus/*.yaml with `expect:` other than none) the failure lines
are the line its label rests on (`failure_line:`), then the error-level evidence lines of the
expected reference in `faultlens diagnose`, then the final exceptions of the log's tracebacks. An entry resolves when one
of its failure lines has an origin in the shipped index; the project is that of its best origin.

    PYTHONPATH=src python tools/origin_coverage.py [--details]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from faultlens.api import diagnose
from faultlens.engine.compile import load_scanner
from faultlens.origins import default_index


def failure_lines(report, expect: str, levels: dict) -> list[str]:
    """The expected reference's error evidence lines, then the final exceptions of the log's
    tracebacks (last first)."""
    lines = [e.text for d in report.diagnoses if d.id == expect
             for e in d.evidence if levels.get((d.id, e.signal)) == "error"]
    lines += [t.final_exception for t in reversed(report.tracebacks) if t.final_exception]
    return list(dict.fromkeys(lines))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--details", action="store_true", help="print each entry's line and origin")
    a = ap.parse_args()
    scanner = load_scanner()
    levels = {(r.id, s.name): s.level for r in scanner.catalogue.references
              for s in r.signals.values()}
    index = default_index()
    total = resolved = 0
    projects: Counter = Counter()
    for sidecar in sorted((ROOT / "corpus").glob("*.yaml")):
        meta = yaml.safe_load(sidecar.read_text()) or {}
        expect = meta.get("expect")
        log = sidecar.with_suffix(".log")
        if not expect or expect == "none" or not log.is_file():
            continue
        total += 1
        lines = failure_lines(diagnose(str(log), scanner=scanner, origins=False), expect, levels)
        number = meta.get("failure_line")
        if isinstance(number, int):
            raw = log.read_text(errors="replace").splitlines()
            if 0 < number <= len(raw) and raw[number - 1].strip():
                lines.insert(0, raw[number - 1].strip())
        best = None
        for line in lines:
            found = index.candidates(line, limit=1)
            if found:
                best = (found[0][1], line)
                break
        if best:
            resolved += 1
            projects[best[0].project] += 1
        if a.details:
            where = (f"{best[0].project} {best[0].path}:{best[0].line} {best[0].function}"
                     if best else "-")
            print(f"{sidecar.stem}\t{where}\t{(best[1] if best else (lines or [''])[0])[:120]}")
    print(f"{resolved}/{total} labelled corpus entries ({resolved / max(1, total):.0%}) have a "
          "failure line with an upstream origin")
    for project, n in projects.most_common():
        print(f"  {project}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
