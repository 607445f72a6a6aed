"""`faultlens lint`: every check a reference must pass before it lands.

Schema, semantic names, folder = id, category = parent folder, duplicate ids, regexes compile in
Python, in Hyperscan and in the linear-time engine (RE2) and cannot match an empty line, sibling /
downstream ids exist, every reference has match and nomatch examples with a source, match examples
rank the reference first (with the variant their sidecar claims), nomatch examples rank their
sidecar's `winner:` first, and the healthy logs in baseline/ raise no failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import catalogue as cat_mod
from .engine import linear
from .errors import CatalogueError, FaultlensError
from .origins.coverage import check_origins

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


def top_level_branches(expr: str) -> list[str]:
    """The branches of `expr`'s outermost alternation (one when it has none)."""
    out, cur, depth, esc, cls = [], "", 0, False, False
    for ch in expr:
        if esc:
            cur, esc = cur + ch, False
            continue
        if ch == "\\":
            cur, esc = cur + ch, True
            continue
        if cls:
            cur += ch
            cls = ch != "]"
            continue
        if ch == "[":
            cls = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    return out + [cur]


def anchored_top_level_branch(expr: str) -> bool:
    branches = top_level_branches(expr)
    return len(branches) > 1 and any(b.startswith("^") for b in branches)


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
        why = linear.problem(sig.regex)
        if why:
            out.append(Problem("error", where, f"signals/{sig.name}: {why}"))
        if anchored_top_level_branch(sig.regex):
            out.append(Problem("error", where, f"signals/{sig.name}: a top-level alternation with a "
                                                "`^` branch; wrap it in one group, (?:A|^B): in "
                                                "the shared Hyperscan database that shape made "
                                                "another pattern's matches disappear"))
    # every other catalogue regex that runs on input text must run in linear time too
    others = [(f"probes/{p.id}", p.pattern) for p in ref.probes if p.pattern]
    others += [(f"{kind}/{c.fact}", c.value) for kind, conds in
               (("facts", ref.facts), ("preflight", ref.preflight), ("checks", ref.checks))
               for c in conds if c.op == "matches" and c.value and not c.value.startswith("@")]
    for name, expr in others:
        why = linear.problem(expr)
        if why:
            out.append(Problem("error", where, f"{name}: {why}"))
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
            from .engine.linear import problem

            slow = problem(m.regex)
            if slow:
                out.append(Problem("error", where, f"{at}: {slow}"))
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
    problems += check_origins(refs)
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


def check_examples(refs, diagnose: Callable, progress: Callable | None = None,
                   all_ids=None) -> list[Problem]:
    """Run every example through the engine.

    A match example must rank its reference first (and the `variant:` its sidecar claims); a nomatch
    example must rank the sidecar's `winner:` first. `all_ids` are the catalogue's ids when `refs`
    is only part of it.
    """
    problems = []
    known = {r.id for r in refs} | set(all_ids or ())
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
        metas = {log: read_sidecar(log) for log in matches + nomatches}  # each sidecar read once
        problems += _check_real_examples(where, [metas[m] for m in matches],
                                         [metas[n] for n in nomatches])
        for log in matches + nomatches:
            meta = metas[log]
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
            at = f"{where}/examples/{log.name}"
            if log in matches:
                if not ids or ids[0] != ref.id:
                    got = ids[0] if ids else "nothing"
                    problems.append(Problem("error", at, f"must rank {ref.id} first, but got {got}"
                                            + (f" (then {', '.join(ids[1:3])})" if len(ids) > 1 else "")))
                else:
                    problems += _check_variant(ref, meta, report.diagnoses[0], at)
            else:
                confirmed = [d.id for d in report.diagnoses if d.status == "confirmed"]
                if confirmed and confirmed[0] == ref.id:
                    problems.append(Problem("error", at, f"must not rank {ref.id} first; tighten the "
                                                         "fingerprint or add negative evidence "
                                                         "(fingerprint.none)"))
                problems += _check_winner(ref, meta, report, known, at)
    return problems


def _is_synthetic(meta: dict) -> bool:
    return str(meta.get("source", "")).strip().lower().startswith("synthetic")


def _check_real_examples(where: str, metas: list[dict], near: list[dict]) -> list[Problem]:
    """Issue 14: every reference has a real match example (or says, in a synthetic example's
    `no_public_log:`, which public threads were searched and why none has the lines) and a real
    near-miss whose `winner:` is a reference."""
    out = []
    if metas and all(_is_synthetic(m) for m in metas) and \
            not any(str(m.get("no_public_log") or "").strip() for m in metas):
        out.append(Problem("warning", where, "only synthetic match examples: add a real public log "
                                             "excerpt, or say in a synthetic example's "
                                             "`no_public_log:` which threads were searched"))
    if near and not any(not _is_synthetic(m) and expected_winner(m) not in
                        (None, NO_FAILURE, UNEXPLAINED) for m in near):
        out.append(Problem("warning", where, "no real near-miss with a reference as `winner:`: add "
                                             "a public log with the same core message and another "
                                             "cause, naming the reference that must rank first"))
    return out


NO_FAILURE = "none"
"""`winner: none`: the log shows no failure, so nothing may be diagnosed as one."""
UNEXPLAINED = "unexplained"
"""`winner: unexplained`: a real failure that no reference explains yet, so nothing may be confirmed
(references whose core message it shows may be listed as possible); the sidecar's `unexplained:` names the proposed class. Not yet a near-miss (lint warns)."""


def expected_winner(meta: dict) -> str | None:
    """The `winner:` of a nomatch sidecar: a reference id, 'none', 'unexplained', or None if missing."""
    value = meta.get("winner")
    return str(value).strip() if value not in (None, "") else None


def _check_winner(ref, meta: dict, report, known: set[str], at: str) -> list[Problem]:
    winner = expected_winner(meta)
    if winner is None:
        return [Problem("error", at, f"add `winner: <id>` to {sidecar(Path(at)).name} naming the "
                                     "reference that must rank first on this near-miss (or "
                                     "`winner: none` when the log shows no failure)")]
    if winner == ref.id:
        return [Problem("error", at, f"winner: names {ref.id} itself; a nomatch example's winner is the "
                                     "sibling that explains it")]
    if winner not in (NO_FAILURE, UNEXPLAINED) and winner not in known:
        return [Problem("error", at, f"winner: '{winner}' is not a reference in the catalogue; fix the id")]
    ids = ranked_ids(report)
    if winner in (NO_FAILURE, UNEXPLAINED):
        # a failure no reference covers may still list references as possible, never confirmed
        wrong = report.failures if winner == NO_FAILURE else report.confirmed
        if wrong:
            return [Problem("error", at, f"winner: {winner}, but {wrong[0].id} is diagnosed as a "
                                         "failure; name it as the winner or fix its fingerprint")]
        if winner == UNEXPLAINED:
            if not meta.get("unexplained"):
                return [Problem("error", at, "winner: unexplained needs `unexplained: <class-id>`, the "
                                             "proposed reference that would explain this failure")]
            return [Problem("warning", at, f"not a near-miss yet: no reference explains "
                                           f"'{meta['unexplained']}'; replace it with a log that has "
                                           f"{ref.id}'s core message and a winner that ranks first")]
        return []
    if not ids or ids[0] != winner:
        got = ids[0] if ids else "nothing"
        return [Problem("error", at, f"winner: {winner} must rank first on this near-miss, but got {got}")]
    return []


def _check_variant(ref, meta: dict, diagnosis, at: str) -> list[Problem]:
    claimed = meta.get("variant")
    if claimed in (None, ""):
        return []
    if claimed not in {v.id for v in ref.variants}:
        return [Problem("error", at, f"variant: '{claimed}' is not a variant of {ref.id}; use one of "
                                     f"{', '.join(v.id for v in ref.variants) or '(none defined)'}")]
    if diagnosis.variant != claimed:
        return [Problem("error", at, f"variant: {claimed} claimed, but the diagnosis names "
                                     f"{diagnosis.variant or 'no variant'}; fix the variant's signals "
                                     "or the claim")]
    return []


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
