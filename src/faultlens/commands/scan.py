"""`faultlens scan PATH|GLOB|URL...`: diagnose many jobs' logs in parallel and summarise the fleet.

The work is in faultlens.fleet; this module parses the options, wires the rows to their sinks
(--out, --db) and prints the aggregate report.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

from ..errors import InputError, UsageError

EPILOG = r"""grouping (default: one job per file):
  --job-pattern REGEX   files whose (?P<job>...) groups are equal are one job; an optional
                        (?P<host>...) group names the node
  --job-per-dir         all files in one folder are one job

examples:
  faultlens scan 'logs/**/*.log' --out rows.parquet
  faultlens scan logs --job-pattern 'logs/(?P<job>[^/]+)/rank\d+\.log' --out rows.jsonl
  faultlens scan 's3://bucket/jobs/2026-11-*/' --job-per-dir --json
  faultlens scan logs --scheduler tcp://10.0.0.5:8786 --workers 32 --db incidents.db
"""


def register(sub) -> None:
    s = sub.add_parser("scan", help="diagnose many jobs' logs at once and summarise the fleet",
                       description="Diagnose every job under PATH|GLOB|URL (local or network "
                                   "paths, fsspec URLs such as\ns3:// and gs://) on a local "
                                   "process pool or a Dask cluster, write one row per job,\nand "
                                   "print what recurs: jobs per reference, per host and per day, "
                                   "and the\nunexplained failures' error lines clustered into "
                                   "templates.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("inputs", nargs="+", metavar="PATH|GLOB|URL",
                   help="log files, folders (read recursively), globs (quote them; ** recurses) "
                        "or fsspec URLs")
    grouping = s.add_mutually_exclusive_group()
    grouping.add_argument("--job-pattern", metavar="REGEX",
                          help="group files into jobs by the regex's (?P<job>...) group")
    grouping.add_argument("--job-per-dir", action="store_true",
                          help="all files in the same folder are one job")
    s.add_argument("--out", metavar="FILE",
                   help="write one row per job: FILE.jsonl, FILE.csv or FILE.parquet")
    s.add_argument("--db", metavar="URL",
                   help="also record each job as an incident in this store (SQLite path or "
                        "SQLAlchemy URL, as for 'faultlens serve')")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask cluster at this address (tcp://HOST:8786); default: "
                        "a local process pool")
    s.add_argument("--workers", type=int, metavar="N",
                   help="local pool size (default: one per core); with --scheduler, wait until "
                        "N Dask workers have joined")
    s.add_argument("--json", action="store_true", help="print the aggregate report as JSON")
    s.set_defaults(handler=cmd_scan)


def _require(module: str, needed_for: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{needed_for} needs {module}", tip="pip install 'faultlens[fleet]'")


def cmd_scan(args) -> int:
    from ..engine.compile import load_scanner
    from ..fleet import aggregate, runner
    from ..fleet import jobs as fleet_jobs
    from ..fleet.output import open_writer

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    _require("drain3", "clustering the unexplained failures")
    if args.scheduler:
        _require("distributed", "--scheduler")
    files, unmatched = fleet_jobs.expand(args.inputs)
    for item in unmatched:
        print(f"faultlens: warning: {item}: matched no file", file=sys.stderr)
    jobs = fleet_jobs.group(files, args.job_pattern, args.job_per_dir)
    if not jobs:
        raise InputError("no log file matched", tip="check the paths; quote globs so that the "
                                                    "shell leaves ** to faultlens")
    # workers get the catalogue the user named, else resolve their own default
    catalogue = args.catalogue or os.environ.get("FAULTLENS_CATALOGUE")
    digest = load_scanner(catalogue).catalogue.digest  # checks it and warms the on-disk cache
    sinks, rows, client, store = [], [], None, None
    try:
        if args.out:
            sinks.append(open_writer(args.out))
        if args.db:
            from ..fleet.incidents import IncidentWriter

            store = IncidentWriter(args.db)
            sinks.append(store)
        if args.scheduler:
            client = runner.connect(args.scheduler, args.workers)
            stream = runner.scan_dask(jobs, client, catalogue, for_store=bool(args.db))
        else:
            stream = runner.scan_local(jobs, catalogue, args.workers, for_store=bool(args.db))
        with runner.progress_bar(len(jobs)) as advance:
            for row in stream:
                for sink in sinks:
                    sink.write(row)
                row.pop("report", None)  # the store has it: keep the scan's memory small
                row.pop("log", None)
                rows.append(row)
                advance(row)
    finally:
        for sink in sinks:
            sink.close()
        if client is not None:
            client.close()
    summary = aggregate.summarize(rows, digest)
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    else:
        from ..render.fleet import render

        sys.stdout.write(render(summary) + "\n")
    if args.out:
        print(f"faultlens: {len(rows)} rows written to {args.out}", file=sys.stderr)
    if store is not None:
        print(f"faultlens: {store.added} incidents added to the store", file=sys.stderr)
    return 0
