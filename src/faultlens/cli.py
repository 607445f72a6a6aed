"""The command line. The only module that prints or exits.

Exit codes: 0 done; 1 problems found (lint errors, eval below thresholds, or a failure diagnosed
with --exit-code); 2 usage error; 3 input error (missing, unreadable, empty, binary or corrupt
log); 4 catalogue error; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import __version__
from .errors import CatalogueError, FaultlensError, InputError, UsageError

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INPUT, EXIT_CATALOGUE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

DESCRIPTION = """\
Tell why a GPU training or inference run failed, from its log, and what to check next.

faultlens matches the log against a catalogue of error references (CUDA and drivers, NCCL and
distributed training, vLLM and other inference engines, quantization, torch.compile, data
loading, Python environments) and prints a ranked, explained, differential diagnosis.
"""

EPILOG = """\
examples:
  faultlens diagnose train.log                 diagnose one log
  faultlens diagnose logs/rank*.log            several files are one job (e.g. one per rank)
  kubectl logs pod/x | faultlens diagnose -    read standard input
  faultlens diagnose --json job.log.gz         machine-readable (compressed input is fine)
  faultlens refs search "watchdog timeout"     find a reference
  faultlens lint                               check the catalogue

exit codes: 0 done, 1 problems found, 2 usage, 3 unreadable input, 4 invalid catalogue
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, like every other error
        self.print_usage(sys.stderr)
        print(f"faultlens: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


class _Ignored:
    """Stands in for the parser of a command that is not being run: swallows its arguments."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: _Ignored()


class _OnlyCommand:
    """Subparsers that build only the command being run. Every other command still gets its
    name and help line (so `faultlens --help` and the unknown-command error list them all); its
    options are not built, which keeps a small diagnosis fast."""

    def __init__(self, sub, wanted: str | None):
        self.sub, self.wanted = sub, wanted

    def add_parser(self, name: str, **kwargs):
        if self.wanted is None or self.wanted == name:
            return self.sub.add_parser(name, **kwargs)
        self.sub.add_parser(name, help=kwargs.get("help"))
        return _Ignored()


def _command_in(argv: list[str]) -> str | None:
    """The sub-command named on the command line, or None (then every parser is built)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--catalogue":
            skip = True
        elif arg == "--":
            return None
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `argv`, only the sub-command it names is built in full."""
    p = _Parser(prog="faultlens", description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"faultlens {__version__}")
    p.add_argument("--catalogue", metavar="DIR",
                   help="catalogue folder (default: $FAULTLENS_CATALOGUE or the bundled one)")
    sub = _OnlyCommand(p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser),
                       None if argv is None else _command_in(argv))

    d = sub.add_parser("diagnose", help="diagnose a job's log(s): the main job",
                       description="Diagnose the logs of one job (several files = one job, e.g. one "
                                   "log per rank). Compressed logs (gz, bz2, xz, zst) are read "
                                   "directly; '-' reads standard input.")
    d.add_argument("files", nargs="*", metavar="FILE", help="log files, or '-' for standard input")
    d.add_argument("--format", choices=["text", "json", "markdown", "github"], default="text",
                   help="output format (default: text; github = GitHub Actions annotations)")
    d.add_argument("--json", action="store_true", help="same as --format json")
    d.add_argument("--top", type=int, metavar="N", help="show only the N best candidates")
    d.add_argument("-v", "--verbose", action="store_true",
                   help="the full report: mechanism, every check, why not, every fix, sources")
    d.add_argument("--env", metavar="FILE",
                   help="environment snapshot (JSON facts, e.g. from the machine that ran the job)")
    d.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour the text output (default: auto, off when NO_COLOR is set)")
    d.add_argument("--exit-code", action="store_true",
                   help="exit with 1 when a failure is diagnosed (for CI scripts)")

    r = sub.add_parser("refs", help="browse the catalogue of references")
    rs = r.add_subparsers(dest="refs_command", metavar="ACTION", parser_class=_Parser)
    rl = rs.add_parser("list", help="list references")
    rl.add_argument("--category", help="only this category")
    rl.add_argument("--json", action="store_true")
    rsh = rs.add_parser("show", help="show one reference in full")
    rsh.add_argument("id")
    rsh.add_argument("--json", action="store_true")
    rse = rs.add_parser("search", help="search titles, summaries, symptoms and messages")
    rse.add_argument("text", nargs="+")
    rse.add_argument("--json", action="store_true")
    rp = rs.add_parser("patterns", help="print every catalogue regex, one per line (for rg -f)")
    rp.add_argument("--json", action="store_true", help="a JSON array of {id, signal, regex}")
    rn = rs.add_parser("new", help="scaffold a new reference folder")
    rn.add_argument("id")
    rn.add_argument("--category", required=True)

    lint = sub.add_parser("lint", help="check the catalogue: schema, regexes, examples, baseline")
    lint.add_argument("--no-examples", action="store_true",
                      help="static checks only: skip running examples and baseline logs")
    lint.add_argument("--baseline", metavar="DIR", help="healthy logs (default: ./baseline if present)")
    lint.add_argument("--json", action="store_true")

    from .commands import register_all

    register_all(sub)
    return p


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _progress_printer(label: str):
    if not sys.stderr.isatty():
        return None

    def show(i: int, total: int, name: str) -> None:
        width = 24
        done = int(width * (i + 1) / max(total, 1))
        sys.stderr.write(f"\r{label} [{'#' * done}{'.' * (width - done)}] {i + 1}/{total} "
                         f"{name[:40]:<40}")
        if i + 1 == total:
            sys.stderr.write("\r" + " " * (width + 60 + len(label)) + "\r")
        sys.stderr.flush()

    return show


def _byte_progress(paths: list[str]):
    """A progress line on stderr for big plain files (over 64 MB), when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p) if p != "-" else 0
        except OSError:
            pass
    if total < (64 << 20):
        return None

    def show(done: int) -> None:
        pct = min(100, 100 * done // max(total, 1))
        sys.stderr.write(f"\rscanning {done >> 20} / {total >> 20} MB ({pct}%)")
        if done >= total:
            sys.stderr.write("\r" + " " * 40 + "\r")
        sys.stderr.flush()

    return show


def _scanner(args):
    from .engine.compile import load_scanner

    return load_scanner(args.catalogue)


def cmd_diagnose(args) -> int:
    from .api import diagnose

    files = args.files
    if not files:
        if sys.stdin.isatty():
            raise UsageError("no log given", tip="pass a file (faultlens diagnose train.log) "
                                                 "or pipe one in (... | faultlens diagnose -)")
        files = ["-"]
    if files.count("-") > 1:
        raise UsageError("'-' (standard input) can be given only once")
    env = None
    if args.env:
        from .facts.extract import load_snapshot

        try:
            env = load_snapshot(args.env)
        except (OSError, ValueError) as exc:
            raise InputError(f"{args.env}: not a usable environment snapshot ({exc})",
                             tip="pass the JSON written by 'faultlens env --json', or a flat JSON "
                                 "object of facts") from None
    fmt = "json" if args.json else args.format
    if args.top is not None and args.top < 1:
        raise UsageError("--top must be 1 or more")
    report = diagnose(files, env=env, scanner=_scanner(args), progress=_byte_progress(files))
    for f in report.inputs:
        for w in f.warnings:
            print(f"faultlens: warning: {w}", file=sys.stderr)
    if fmt == "json":
        from .render.json import render
        _out(render(report, args.top))
    elif fmt == "markdown":
        from .render.markdown import render
        _out(render(report, args.top))
    elif fmt == "github":
        from .render.github import render
        _out(render(report, args.top))
    else:
        from .render.text import render
        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty()
                                           and not os.environ.get("NO_COLOR"))
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns or 80
        _out(render(report, args.top, color=color, verbose=args.verbose, width=max(40, width)))
    return EXIT_PROBLEMS if args.exit_code and report.failures else EXIT_OK


def cmd_refs(args) -> int:
    from .render.json import reference_dict

    action = args.refs_command
    if action is None:
        raise UsageError("say what to do with the catalogue",
                         tip="faultlens refs list | show ID | search TEXT | patterns | new ID")
    if action == "new":
        from .catalogue import default_root
        from .refs import scaffold

        root = Path(args.catalogue) if args.catalogue else default_root()
        folder = scaffold(root, args.id, args.category)
        _out(f"created {folder}\nnext: put a real log excerpt in {folder}/examples/match-<name>.log, "
             f"a near-miss in nomatch-<name>.log, fill in every FILL IN, then run 'faultlens lint'")
        return EXIT_OK
    refs = _scanner(args).catalogue.references
    if action == "list":
        chosen = [r for r in refs if not args.category or r.category == args.category]
        if args.json:
            _out(json.dumps([reference_dict(r) for r in chosen], indent=2))
        else:
            width = max((len(r.id) for r in chosen), default=10)
            for r in sorted(chosen, key=lambda r: (r.category, r.id)):
                _out(f"{r.category:<14} {r.id:<{width}}  {r.severity:<8} {r.title}")
            print(f"{len(chosen)} references", file=sys.stderr)
        return EXIT_OK
    if action == "show":
        ref = next((r for r in refs if r.id == args.id), None)
        if ref is None:
            from .refs import search

            near = [r.id for _, r in search(refs, args.id.replace("-", " "), 3)]
            raise UsageError(f"no reference with id '{args.id}'",
                             tip=f"did you mean: {', '.join(near)}" if near else "see 'faultlens refs list'")
        if args.json:
            _out(json.dumps(reference_dict(ref, full=True), indent=2))
        else:
            from .render.reference import render
            _out(render(ref))
        return EXIT_OK
    if action == "search":
        from .refs import search

        from .refs import snippet

        query = " ".join(args.text)
        found = search(refs, query)
        if args.json:
            _out(json.dumps([{**reference_dict(r), "score": s, "snippet": snippet(r, query)}
                             for s, r in found], indent=2))
        elif not found:
            _out("no reference matches; try fewer words or the exact error message")
        else:
            import shutil

            width = max(40, shutil.get_terminal_size((80, 24)).columns or 80)
            for s, r in found:
                head = f"{r.id}  {r.title}"
                _out(head if len(head) <= width else head[: width - 1] + "…")
                snip = "   " + snippet(r, query, width - 3)
                _out(snip if len(snip) <= width else snip[: width - 1] + "…")
        return EXIT_OK
    if action == "patterns":
        if args.json:
            _out(json.dumps([{"id": r.id, "signal": s.name, "regex": s.regex}
                             for r in refs for s in r.signals.values()], indent=2))
            return EXIT_OK
        from .refs import patterns

        _out("\n".join(patterns(refs)))
        return EXIT_OK
    raise UsageError(f"unknown refs action '{action}'")


def cmd_lint(args) -> int:
    from . import lint
    from .api import diagnose
    from .catalogue import default_root

    root = Path(args.catalogue) if args.catalogue else default_root()
    problems, refs = lint.check_files(root)
    errors_so_far = [p for p in problems if p.level == "error"]
    if not args.no_examples and not errors_so_far:
        scanner = _scanner(args)

        def run(path, facts):
            return diagnose(path, env=facts, scanner=scanner)

        problems += lint.check_examples(refs, run, _progress_printer("examples"))
        baseline = Path(args.baseline) if args.baseline else root.parent / "baseline"
        if args.baseline or baseline.is_dir():
            problems += lint.check_baseline(baseline, run)
    errors = [p for p in problems if p.level == "error"]
    if args.json:
        _out(json.dumps({"references": len(refs), "errors": len(errors),
                         "problems": [p.__dict__ for p in problems]}, indent=2))
    else:
        for p in problems:
            _out(f"{p.level}: {p.where}: {p.message}")
        n_ex = sum(len(lint.example_files(r.path)[0]) + len(lint.example_files(r.path)[1]) for r in refs)
        _out(f"{len(refs)} references, {n_ex} examples: {len(errors)} errors, "
             f"{len(problems) - len(errors)} warnings")
    return EXIT_PROBLEMS if errors else EXIT_OK


COMMANDS = {"diagnose": cmd_diagnose, "refs": cmd_refs, "lint": cmd_lint}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        return handler(args)
    except FaultlensError as exc:
        code = {InputError: EXIT_INPUT, CatalogueError: EXIT_CATALOGUE, UsageError: EXIT_USAGE}.get(
            type(exc), EXIT_PROBLEMS)
        print(f"faultlens: error: {exc}", file=sys.stderr)
        if exc.tip:
            print(f"Tip: {exc.tip}", file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print("faultlens: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except MemoryError:
        print("faultlens: error: out of memory", file=sys.stderr)
        return EXIT_INPUT
