"""`faultlens lint`: every check a reference must pass before it lands.

Schema, semantic names, folder = id, category = parent folder, duplicate ids, regexes compile in
Python and in Hyperscan and cannot match an empty line, sibling / downstream ids exist, every
reference has match and nomatch examples with a source, match examples rank the reference first,
nomatch examples do not, and the healthy logs in baseline/ raise no failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import catalogue as cat_mod
from .errors import CatalogueError, FaultlensError

PLACEHOLDER = "FILL IN"


@dataclass(frozen=True)
class Problem:
    level: str  # error | warning
    where: str
    message: str


def planned_ids(root: Path) -> set[str]:
    """Ids that are owned by open issues but not written yet (catalogue/planned.txt)."""
    path = root / "planned.txt"
    if not path.is_file():
        return set()
    return {ln.split()[0] for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")}


def _check_regexes(ref, where: str) -> list[Problem]:
    import hyperscan

    out = []
    for sig in ref.signals.values():
        try:
            compiled = re.compile(sig.regex)
        except re.error as exc:
            out.append(Problem("error", where, f"signals/{sig.name}: Python cannot compile it ({exc})"))
            continue
        if compiled.search(""):
            out.append(Problem("error", where, f"signals/{sig.name}: matches an empty line; "
                                                "anchor it to a distinctive literal"))
            continue
        try:
            hyperscan.Database().compile(expressions=[sig.regex.encode()], ids=[0], elements=1,
                                         flags=[hyperscan.HS_FLAG_MULTILINE])
        except hyperscan.error as exc:
            out.append(Problem("error", where, f"signals/{sig.name}: Hyperscan cannot compile it "
                                                f"({exc}); remove lookarounds, backreferences and "
                                                "atomic groups"))
    return out


def _check_measures(ref, where: str) -> list[Problem]:
    from .engine.measure import names, parse

    out = []
    for chk in list(ref.checks) + [c for v in ref.variants for c in v.checks]:
        for i, m in enumerate(chk.measure):
            at = f"checks/{chk.id}/measure/{i}"
            for name in m.signal.split():
                if name not in ref.signals:
                    out.append(Problem("error", where, f"{at}: signal '{name}' is not defined"))
            try:
                groups = set(re.compile(m.regex).groupindex)
                parse(m.holds)
            except (re.error, ValueError) as exc:
                out.append(Problem("error", where, f"{at}: {exc}"))
                continue
            missing = names(m.holds) - groups
            if missing:
                out.append(Problem("error", where, f"{at}: holds uses {', '.join(sorted(missing))}, "
                                                    "which the regex does not capture (?P<name>...)"))
    return out


def check_files(root: Path) -> tuple[list[Problem], list]:
    """Static checks of every reference file; returns problems and the references that loaded."""
    problems: list[Problem] = []
    refs = []
    schema = cat_mod.load_schema()
    seen: dict[str, str] = {}
    files = cat_mod.reference_files(root)
    for path in files:
        where = str(path.relative_to(root.parent)) if root.parent in path.parents else str(path)
        try:
            data = cat_mod.parse_yaml(path)
        except CatalogueError as exc:
            problems.append(Problem("error", where, str(exc).split(": ", 1)[-1]))
            continue
        found = cat_mod.schema_problems(data, schema)
        problems += [Problem("error", where, p) for p in found]
        if found:
            continue
        ref = cat_mod.build_reference(data, path.parent)
        problems += [Problem("error", where, p) for p in cat_mod.semantic_problems(ref)]
        if ref.id != path.parent.name:
            problems.append(Problem("error", where, f"id '{ref.id}' differs from its folder "
                                                    f"'{path.parent.name}'; rename one to match"))
        if ref.category != path.parent.parent.name:
            problems.append(Problem("error", where, f"category '{ref.category}' differs from the "
                                                    f"parent folder '{path.parent.parent.name}'"))
        if ref.id in seen:
            problems.append(Problem("error", where, f"id '{ref.id}' is already used by {seen[ref.id]}"))
        seen[ref.id] = where
        if PLACEHOLDER in path.read_text():
            problems.append(Problem("error", where, f"still contains '{PLACEHOLDER}' placeholders "
                                                    "from 'faultlens refs new'; write them out"))
        problems += _check_regexes(ref, where)
        problems += _check_measures(ref, where)
        refs.append(ref)
    known = {r.id for r in refs}
    planned = planned_ids(root)
    for ref in refs:
        where = f"{ref.category}/{ref.id}"
        for rel, ids in (("siblings", [s.id for s in ref.siblings]), ("downstream_of", ref.downstream_of)):
            for other in ids:
                if other == ref.id:
                    problems.append(Problem("error", where, f"{rel}: names the reference itself"))
                elif other in planned and other not in known:
                    problems.append(Problem("warning", where, f"{rel}: '{other}' is planned "
                                                              "(catalogue/planned.txt) but not written yet"))
                elif other not in known:
                    problems.append(Problem("error", where, f"{rel}: '{other}' is not a reference in "
                                                            "the catalogue; fix the id or write it"))
    for pid in sorted(planned & known):
        problems.append(Problem("warning", "catalogue/planned.txt",
                                f"'{pid}' exists now; remove it from planned.txt"))
    return problems, refs


def example_files(ref_path: str) -> tuple[list[Path], list[Path]]:
    folder = Path(ref_path) / "examples"
    return sorted(folder.glob("match-*.log*")), sorted(folder.glob("nomatch-*.log*"))


def sidecar(log: Path) -> Path:
    name = log.name
    for ext in (".log.gz", ".log.zst", ".log.xz", ".log.bz2", ".log"):
        if name.endswith(ext):
            return log.with_name(name[: -len(ext)] + ".yaml")
    return log.with_suffix(".yaml")


def read_sidecar(log: Path) -> dict:
    import yaml

    path = sidecar(log)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return data if isinstance(data, dict) else {}


def ranked_ids(report) -> list[str]:
    """The ids a user reads first: failures and warnings before info notes."""
    return [d.id for d in report.diagnoses]


def check_examples(refs, diagnose: Callable, progress: Callable | None = None) -> list[Problem]:
    """Run every example through the engine."""
    problems = []
    for i, ref in enumerate(refs):
        if progress:
            progress(i, len(refs), ref.id)
        where = f"{ref.category}/{ref.id}"
        matches, nomatches = example_files(ref.path)
        if not matches:
            problems.append(Problem("error", where, "add at least one examples/match-*.log "
                                                    "(a real log excerpt, source URL in its .yaml)"))
        if not nomatches:
            problems.append(Problem("error", where, "add at least one examples/nomatch-*.log: "
                                                    "a near-miss (same message, other cause)"))
        for log in matches + nomatches:
            meta = read_sidecar(log)
            if not meta.get("source"):
                problems.append(Problem("error", f"{where}/examples/{log.name}",
                                        f"add {sidecar(log).name} with 'source:' (the URL of the "
                                        "public log) or 'source: synthetic' and a note"))
            try:
                report = diagnose(str(log), meta.get("facts") or None)
            except FaultlensError as exc:
                problems.append(Problem("error", f"{where}/examples/{log.name}", f"cannot diagnose: {exc}"))
                continue
            ids = ranked_ids(report)
            if log in matches and (not ids or ids[0] != ref.id):
                got = ids[0] if ids else "nothing"
                problems.append(Problem("error", f"{where}/examples/{log.name}",
                                        f"must rank {ref.id} first, but got {got}"
                                        + (f" (then {', '.join(ids[1:3])})" if len(ids) > 1 else "")))
            if log in nomatches and ids and ids[0] == ref.id:
                problems.append(Problem("error", f"{where}/examples/{log.name}",
                                        f"must not rank {ref.id} first; tighten the fingerprint or "
                                        "add negative evidence (fingerprint.none)"))
    return problems


def check_baseline(folder: Path, diagnose: Callable) -> list[Problem]:
    problems = []
    logs = sorted(p for p in folder.glob("*") if p.is_file() and not p.name.endswith((".yaml", ".md")))
    if not logs:
        problems.append(Problem("warning", str(folder), "no healthy logs to check against"))
    for log in logs:
        meta = read_sidecar(log)
        if not meta.get("source"):
            problems.append(Problem("error", str(log), f"add {sidecar(log).name} with 'source:'"))
        try:
            report = diagnose(str(log), meta.get("facts") or None)
        except FaultlensError as exc:
            problems.append(Problem("error", str(log), f"cannot diagnose: {exc}"))
            continue
        for d in report.failures:
            line = f" (line {d.first.line})" if d.first else ""
            problems.append(Problem("error", str(log), f"healthy log diagnosed as failure {d.id}{line}; "
                                                       "tighten that reference's fingerprint"))
    return problems
