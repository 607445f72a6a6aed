"""`faultlens origin "LINE"` (or `-` for standard input): which upstream code prints a log line,
in which releases, and which releases print a different wording of the same message.

Exit codes: 0 an origin was found for every line; 1 some line has none; 2 usage; 3 unreadable
input; 4 the origins index is missing or unreadable.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import CatalogueError, InputError, UsageError

MAX_LINES = 1000
EPILOG = """examples:
  faultlens origin "AssertionError: Torch not compiled with CUDA enabled"
  grep -m5 Error train.log | faultlens origin -
  faultlens origin --fact torch.version=2.3.1 "RuntimeError: ..."   and say when 2.3.1 can't print it
"""


def register(sub) -> None:
    o = sub.add_parser("origin", help="where upstream code prints a log line, in which releases",
                       description="Look log lines up in the index of messages that upstream "
                                   "projects print (torch,\ntransformers, vLLM, NCCL, ...): "
                                   "project, file, line, function, the releases that\nprint "
                                   "that wording, and the releases that word it differently.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    o.add_argument("lines", nargs="+", metavar="LINE", help="a log line, or - to read lines from "
                                                           "standard input")
    o.add_argument("--top", type=int, default=3, metavar="N", help="candidates per line (default 3)")
    o.add_argument("--fact", action="append", default=[], metavar="NAME=VALUE",
                   help="a fact of the log such as torch.version=2.3.1: say when that release "
                        "does not print the line (repeatable)")
    o.add_argument("--index", help=argparse.SUPPRESS)
    o.add_argument("--json", action="store_true", help="machine-readable candidates")
    o.set_defaults(handler=cmd_origin)


def _read_lines(args) -> list[str]:
    if args.lines == ["-"]:
        data = sys.stdin.buffer.read()
        if b"\x00" in data[:8192]:
            raise InputError("standard input: binary data, not log lines")
        texts = [t for t in data.decode("utf-8", "replace").splitlines() if t.strip()]
        if not texts:
            raise InputError("standard input: no lines to look up")
    else:
        if "-" in args.lines:
            raise UsageError("give log lines as arguments or - alone for standard input, not both")
        texts = [t for t in args.lines if t.strip()]
        if not texts:
            raise UsageError("give a log line to look up (or - to read standard input)")
    if len(texts) > MAX_LINES:
        raise UsageError(f"{len(texts)} lines: origin looks up at most {MAX_LINES} lines at once",
                         tip="pass the error lines only, e.g. grep -E 'Error|error' LOG | faultlens origin -")
    return texts


def _facts(args) -> dict[str, str]:
    facts = {}
    for item in args.fact:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"--fact {item!r}: expected NAME=VALUE, e.g. torch.version=2.3.1")
        facts[name.strip()] = value.strip()
    return facts


def cmd_origin(args) -> int:
    from pathlib import Path

    from ..origins import IndexMissing, OriginIndex, default_index, release_range, skew

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    texts = _read_lines(args)
    facts = _facts(args)
    try:
        index = OriginIndex(Path(args.index)) if args.index else default_index()
    except (IndexMissing, OSError) as exc:
        raise CatalogueError(f"origins index: {exc}",
                             tip="rebuild it with tools/build_origins.py --merge") from None
    results = []
    for text in texts:
        items = []
        for score, origin, template in index.candidates(text, args.top):
            releases = index.projects.get(origin.project, {}).get("releases", [])
            items.append({
                "origin": origin,
                "message": template.replace("\x00", "…"),
                "score": score,
                "range": release_range(origin.releases, releases),
                "other_wordings": index.other_wordings(origin),
                "skew": skew(origin, facts, releases) if facts else None,
            })
        results.append((text, items))
    if args.json:
        print(json.dumps({"lines": [{"line": text, "candidates": [
            {**i["origin"].to_json(), "message": i["message"], "score": i["score"],
             "other_wordings": [{"message": w.message, "releases": list(w.releases)}
                                for w in i["other_wordings"]],
             "skew": i["skew"]} for i in items]} for text, items in results]}, indent=2))
    else:
        for n, (text, items) in enumerate(results):
            if n:
                print()
            print(text.strip()[:200])
            if not items:
                print("  no upstream origin found in the index")
            for k, i in enumerate(items, 1):
                o = i["origin"]
                where = f"{o.path}:{o.line}" if o.line else o.path
                func = f" in {o.function}" if o.function else ""
                print(f"  {k}. {o.project} {where}{func} ({o.kind})")
                print(f"     releases: {o.project} {i['range']}")
                for w in i["other_wordings"][:3]:
                    print(f"     other wording in {', '.join(w.releases)}: {w.message[:160]}")
                if i["skew"]:
                    print(f"     version skew: {i['skew']}")
                if o.url:
                    print(f"     {o.url}")
    return 0 if all(items for _, items in results) else 1
