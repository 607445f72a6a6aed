"""Which failures is this environment set up for? Reference preconditions and read-only probes.

Probes are generic building blocks named in YAML (file header, command output, package version,
environment variable); nothing here knows about a specific failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass, field

from .engine import linear
from .facts.extract import compare
from .model import Probe, Reference

PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class ProbeResult:
    probe: Probe
    status: str
    """hit (the trap is present) | clear | skipped (nothing to look at) | error"""
    detail: str = ""


@dataclass
class Finding:
    ref: Reference
    conditions: list[tuple[str, str]] = field(default_factory=list)
    """(condition in words, the fact's value) for every precondition that holds."""
    probes: list[ProbeResult] = field(default_factory=list)
    state: str = "holds"
    """holds (every precondition holds) | unknown (some facts missing) | none (probes only)"""

    @property
    def severity(self) -> str:
        return self.ref.preflight_severity or self.ref.severity


def _describe(cond, facts: dict[str, str]) -> tuple[str, str]:
    value = facts.get(cond.fact, "?")
    target = cond.value
    if target.startswith("@"):
        target = f"{target[1:]} ({facts.get(target[1:], '?')})"
    return f"{cond.fact} {cond.op} {target}", value


def evaluate_preconditions(ref: Reference, facts: dict[str, str]) -> tuple[str, list]:
    """('holds' | 'fails' | 'unknown' | 'none', described conditions)."""
    if not ref.preflight:
        return "none", []
    results = [compare(facts.get(c.fact), c.op, c.value, facts) for c in ref.preflight]
    described = [_describe(c, facts) for c in ref.preflight]
    if any(r is False for r in results):
        return "fails", described
    if all(r is True for r in results):
        return "holds", described
    return "unknown", described


def _package_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def run_probe(probe: Probe, files: list[str] | None = None) -> ProbeResult:
    try:
        if probe.kind == "package":
            from packaging.specifiers import SpecifierSet

            version = _package_version(probe.name or "")
            if version is None:
                return ProbeResult(probe, "clear", f"{probe.name} is not installed")
            hit = SpecifierSet(probe.spec or "").contains(version, prereleases=True)
            return ProbeResult(probe, "hit" if hit else "clear", f"{probe.name} {version}")
        if probe.kind == "env":
            value = os.environ.get(probe.name or "")
            if value is None:
                return ProbeResult(probe, "clear", f"{probe.name} is not set")
            hit = linear.search(probe.pattern or ".", value) is not None
            return ProbeResult(probe, "hit" if hit else "clear", f"{probe.name}={value}")
        if probe.kind == "command":
            exe = shutil.which(probe.run[0])
            if not exe:
                return ProbeResult(probe, "skipped", f"{probe.run[0]} is not installed")
            res = subprocess.run([exe, *probe.run[1:]], capture_output=True, text=True,
                                 timeout=PROBE_TIMEOUT)
            out = (res.stdout or "") + (res.stderr or "")
            m = linear.search("(?m)" + (probe.pattern or "."), out)
            return ProbeResult(probe, "hit" if m else "clear",
                               m.group(0)[:200] if m else f"exit {res.returncode}, no match")
        if probe.kind == "file_header":
            paths = files or sorted(glob.glob(probe.glob or "", recursive=True))[:200]
            if not paths:
                return ProbeResult(probe, "skipped", "no file to look at (pass --file)")
            hits = []
            for path in paths:
                with open(path, "rb") as fh:
                    head = fh.read(probe.bytes)
                if linear.search(probe.pattern or ".", head):
                    hits.append(path)
            if hits:
                return ProbeResult(probe, "hit", ", ".join(hits[:5]) + (" …" if len(hits) > 5 else ""))
            return ProbeResult(probe, "clear", f"{len(paths)} file(s) look fine")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:  # LinearError is a ValueError
        return ProbeResult(probe, "error", str(exc))
    return ProbeResult(probe, "error", f"unknown probe kind {probe.kind}")


CHEAP_PROBES = ("package", "env")


def preflight(refs, facts: dict[str, str], *, include_unknown: bool = False) -> list[Finding]:
    """References whose preconditions all hold (or whose cheap probes hit), failures first."""
    findings = []
    for ref in refs:
        state, described = evaluate_preconditions(ref, facts)
        probe_results = [run_probe(p) for p in ref.probes if p.kind in CHEAP_PROBES]
        hit = [r for r in probe_results if r.status == "hit"]
        if state == "holds" or hit or (include_unknown and state == "unknown"):
            findings.append(Finding(ref, described if state != "none" else [], probe_results, state))
    order = {"failure": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], f.ref.id))
    return findings
