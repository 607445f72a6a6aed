"""`faultlens eval CORPUS`: accuracy and generalisation on a labelled corpus; first-sight records."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

from ..errors import UsageError


def register(sub) -> None:
    ev = sub.add_parser(
        "eval", help="accuracy on a labelled corpus of logs",
        description="Diagnose every labelled log in CORPUS (NAME.log + NAME.yaml with "
                    "'expect: <id>' or 'expect: none') and report top-1 and top-3 (all failure "
                    "logs, and only those whose class has a reference), the answer rate (a "
                    "diagnosis or the failing line named), confirmed vs possible answers, "
                    "calibration, how well the named lines hit 'failure_line:', false alarms on "
                    "healthy logs, per-batch figures and a per-reference table.")
    ev.add_argument("corpus", metavar="CORPUS")
    ev.add_argument("--batch", metavar="NAME", help="evaluate only the entries with 'batch: NAME'")
    ev.add_argument("--record-first-sight", action="store_true",
                    help="with --batch: append the batch's figures to the first-sight table in "
                         "CORPUS/README.md (refused if that batch is already recorded)")
    ev.add_argument("--min-top1", type=float, default=0.0,
                    help="exit 1 when top-1 over the entries whose reference exists is below this")
    ev.add_argument("--min-answer-rate", type=float, default=0.0,
                    help="exit 1 when the share of failure logs answered is below this")
    ev.add_argument("--max-false-alarms", type=int, default=None,
                    help="exit 1 when more healthy logs than this get a failure diagnosis")
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(handler=cmd_eval)


def _engine_commit(repo: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cmd_eval(args) -> int:
    from .. import evaluation, first_sight
    from ..api import diagnose
    from ..cli import _out, _progress_printer, _scanner

    if args.record_first_sight and not args.batch:
        raise UsageError("--record-first-sight needs --batch NAME",
                         tip="first-sight figures are recorded per batch")
    scanner = _scanner(args)
    known = {r.id for r in scanner.catalogue.references}
    corpus = Path(args.corpus)
    summary = evaluation.run(corpus, lambda files: diagnose(files, scanner=scanner, origins=False),
                             _progress_printer("eval"), known=known, batch=args.batch)
    data = summary.as_dict()
    failed = []
    top1 = data["top1_referenced"] if data["top1_referenced"] is not None else 1.0
    if top1 < args.min_top1:
        failed.append(f"top-1 (referenced) {top1:.3f} is below --min-top1 {args.min_top1}")
    answer = data["answer_rate"] if data["answer_rate"] is not None else 1.0
    if answer < args.min_answer_rate:
        failed.append(f"answer rate {answer:.3f} is below --min-answer-rate {args.min_answer_rate}")
    if args.max_false_alarms is not None and len(data["false_alarms"]) > args.max_false_alarms:
        failed.append(f"{len(data['false_alarms'])} false alarms exceed --max-false-alarms "
                      f"{args.max_false_alarms}")
    if args.record_first_sight:
        line = first_sight.row(date.today().isoformat(), args.batch, summary.figures(),
                               len(known), _engine_commit(Path(__file__).resolve().parent))
        first_sight.record(corpus / "README.md", line, args.batch)
        print(f"faultlens: eval: recorded the first-sight figures of {args.batch} in "
              f"{corpus / 'README.md'}", file=sys.stderr)
    if args.json:
        _out(json.dumps({**data, "passed": not failed, "failed": failed}, indent=2))
    else:
        from ..render.evaluation import render
        _out(render(data))
        for f in failed:
            print(f"faultlens: eval: {f}", file=sys.stderr)
    return 1 if failed else 0
