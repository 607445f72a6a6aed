"""`faultlens env`, `faultlens preflight` and `faultlens check ID`."""

from __future__ import annotations

import json
import sys
import textwrap

from ..errors import InputError, UsageError

EXIT_OK, EXIT_PROBLEMS = 0, 1


def register(sub) -> None:
    e = sub.add_parser("env", help="snapshot this machine's environment (GPUs, drivers, packages)",
                       description="Collect OS, container, Python packages (torch with its CUDA "
                                   "build, vLLM, transformers, DeepSpeed, flash-attn, FlashInfer, "
                                   "bitsandbytes, Triton, TensorRT-LLM, xformers, numpy), nvcc and gcc, "
                                   "GPUs from nvidia-smi, relevant environment variables (secrets "
                                   "redacted), /dev/shm and ulimits. Never imports torch.")
    e.add_argument("--json", action="store_true", help="the versioned JSON snapshot (docs/env-snapshot.md)")
    e.add_argument("-o", "--output", metavar="FILE", help="write the JSON snapshot to FILE")
    e.set_defaults(handler=cmd_env)

    p = sub.add_parser("preflight", help="failures this environment is set up for, before launch",
                       description="Evaluate every reference's environment preconditions (and its "
                                   "package and env-var probes) against this machine, or against a "
                                   "snapshot. Exits 1 when a failure-severity precondition holds.")
    p.add_argument("--env", metavar="FILE", help="use a snapshot (faultlens env --json) instead of this machine")
    p.add_argument("--all", action="store_true", help="also list references whose facts are unknown")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_preflight)

    c = sub.add_parser("check", help="run one reference's probes (file headers, commands, packages)",
                       description="Run the read-only probes a reference names, e.g. whether a "
                                   ".safetensors file is really a Git LFS pointer.")
    c.add_argument("id", help="reference id")
    c.add_argument("--file", action="append", metavar="F", help="file(s) for file-header probes")
    c.add_argument("--env", metavar="FILE", help="evaluate preconditions against this snapshot")
    c.add_argument("--json", action="store_true")
    c.set_defaults(handler=cmd_check)


def _snapshot(path: str | None) -> dict:
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: not a usable environment snapshot ({exc})",
                             tip="create one with 'faultlens env --json -o snapshot.json'") from None
        if not isinstance(data, dict):
            raise InputError(f"{path}: not a usable environment snapshot (expected a JSON object)")
        return data if "facts" in data else {"facts": data}
    from ..facts.snapshot import collect

    return collect()


def _facts(snapshot: dict) -> dict[str, str]:
    from ..facts.extract import snapshot_facts

    return snapshot_facts(snapshot)


def cmd_env(args) -> int:
    from ..facts.snapshot import collect

    snap = collect()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            json.dump(snap, fh, indent=2)
            fh.write("\n")
    if args.json and args.output:
        print(f"faultlens: snapshot written to {args.output} ({len(snap['facts'])} facts)",
              file=sys.stderr)
        return EXIT_OK
    if args.json:
        print(json.dumps(snap, indent=2))
        return EXIT_OK
    facts = snap["facts"]
    groups = {}
    for key, value in facts.items():
        groups.setdefault(key.split(".", 1)[0], []).append((key, value))
    print(f"faultlens env  host {snap['host']}  {snap['collected_at']}")
    for group in sorted(groups, key=lambda g: (g == "env", g)):
        print(f"\n{group}")
        for key, value in groups[group]:
            print(f"  {key:<34} {value}")
    if snap["absent"]:
        print("\nabsent: " + ", ".join(snap["absent"]))
    if args.output:
        print(f"\nsnapshot written to {args.output}", file=sys.stderr)
    return EXIT_OK


def _finding_dict(f) -> dict:
    return {"id": f.ref.id, "title": f.ref.title, "severity": f.severity, "state": f.state,
            "explain": f.ref.preflight_explain,
            "conditions": [{"condition": c, "value": v} for c, v in f.conditions],
            "probes": [{"id": r.probe.id, "status": r.status, "detail": r.detail} for r in f.probes],
            "fix": [{"do": x.do, "why": x.why} for x in f.ref.fix[:2]]}


def cmd_preflight(args) -> int:
    from ..engine.compile import load_scanner
    from ..preflight import preflight

    snap = _snapshot(args.env)
    refs = load_scanner(args.catalogue).catalogue.references
    findings = preflight(refs, _facts(snap), include_unknown=args.all)
    failing = [f for f in findings if f.severity == "failure" and f.state in ("holds", "none")]
    if args.json:
        print(json.dumps({"schema": 1, "host": snap.get("host"), "findings": [_finding_dict(f) for f in findings],
                          "failures": len(failing)}, indent=2))
        return EXIT_PROBLEMS if failing else EXIT_OK
    source = args.env or f"this machine ({snap.get('host', '?')})"
    if not findings:
        print(f"preflight: no known trap found on {source} "
              f"({sum(1 for r in refs if r.preflight)} references have preconditions)")
        return EXIT_OK
    print(f"preflight: {source}")
    for f in findings:
        mark = {"failure": "FAILURE", "warning": "WARNING", "info": "INFO"}[f.severity]
        state = "" if f.state == "holds" else f"  ({f.state})"
        print(f"\n{mark} {f.ref.id}{state}\n  {f.ref.title}")
        if f.ref.preflight_explain:
            print(textwrap.fill(f.ref.preflight_explain, 96, initial_indent="  ", subsequent_indent="  "))
        for cond, value in f.conditions:
            print(f"  - {cond}: {value}")
        for r in f.probes:
            if r.status == "hit":
                print(f"  - probe {r.probe.id}: {r.detail}")
        if f.ref.fix:
            print(textwrap.fill("fix: " + f.ref.fix[0].do, 96, initial_indent="  ", subsequent_indent="       "))
    return EXIT_PROBLEMS if failing else EXIT_OK


def cmd_check(args) -> int:
    from ..engine.compile import load_scanner
    from ..preflight import evaluate_preconditions, run_probe

    refs = load_scanner(args.catalogue).catalogue.references
    ref = next((r for r in refs if r.id == args.id), None)
    if ref is None:
        raise UsageError(f"no reference with id '{args.id}'", tip="see 'faultlens refs list'")
    if not ref.probes and not ref.preflight:
        raise UsageError(f"{ref.id} names no probes or preconditions",
                         tip="references with probes: " + ", ".join(r.id for r in refs if r.probes))
    results = [run_probe(p, args.file) for p in ref.probes]
    state, described = evaluate_preconditions(ref, _facts(_snapshot(args.env)))
    hit = any(r.status == "hit" for r in results) or state == "holds"
    if args.json:
        print(json.dumps({"id": ref.id, "hit": hit, "preconditions": state,
                          "conditions": [{"condition": c, "value": v} for c, v in described],
                          "probes": [{"id": r.probe.id, "kind": r.probe.kind, "status": r.status,
                                      "detail": r.detail} for r in results]}, indent=2))
    else:
        print(f"{ref.id}: {'TRAP PRESENT' if hit else 'nothing found'}")
        if ref.preflight:
            print(f"  preconditions: {state}")
            for cond, value in described:
                print(f"    - {cond}: {value}")
        for r in results:
            print(f"  probe {r.probe.id} [{r.probe.kind}]: {r.status}  {r.detail}")
            if r.status == "hit":
                print(textwrap.fill(r.probe.explain, 92, initial_indent="    ", subsequent_indent="    "))
    return EXIT_PROBLEMS if hit else EXIT_OK
