"""The Python API: diagnose a job's logs and get a `Report`."""

from __future__ import annotations

import os
from pathlib import Path

from .engine import unexplained as unexplained_mod
from .engine.compile import Scanner, load_scanner
from .engine.differential import LineOrder
from .engine.differential import diagnose as rank
from .engine.scan import scan_file
from .engine.score import evaluate
from .engine.structure import observe
from .logs import paste
from .model import InputFile, Report


def _inputs(source) -> list[tuple[object, str]]:
    """Normalise what the caller passed into (readable source, display name) pairs."""
    if isinstance(source, (bytes, bytearray)):
        return [(bytes(source), "<text>")]
    if isinstance(source, Path):
        return [(str(source), str(source))]
    if isinstance(source, str):
        if "\n" in source or len(source) > 4096:
            return [(source.encode("utf-8", "replace"), "<text>")]
        return [(source, "<stdin>" if source == "-" else source)]
    return [item for s in source for item in _inputs(s)]


def diagnose(source, *, env: dict | None = None, catalogue=None,
             scanner: Scanner | None = None, progress=None, origins: bool = True) -> Report:
    """Diagnose one job: a path, '-', raw text/bytes, or a list of those (e.g. one log per rank).

    `env` is a mapping of environment facts that fills in what the log does not show.
    `origins`: trace evidence and unexplained lines to the upstream code that prints them.
    Raises `InputError` for unreadable input and `CatalogueError` for an invalid catalogue.
    """
    scanner = scanner or load_scanner(catalogue)
    scans = []
    done = 0
    for src, name in _inputs(source):
        step = None if progress is None else (lambda n, base=done: progress(base + n))
        scans.append(_scan_one(scanner, src, name, step))
        done += scans[-1].stats.bytes
    return build_report(scanner, scans, env, origins=origins)


def _scan_one(scanner: Scanner, src, name: str, progress):
    """Scan one input; a paste-sized one is cleaned of paste artefacts first (logs/paste.py)."""
    small = paste.read_small(src)
    if small is None:
        return scan_file(scanner, src, name, progress=progress)
    if small[0] == "spooled":
        try:
            return scan_file(scanner, small[1], name, progress=progress)
        finally:
            os.unlink(small[1])
    data, stats = small
    norm = paste.normalise(data)
    if not norm.changed:
        fs = scan_file(scanner, data, name, progress=progress)
    else:
        fs = scan_file(scanner, norm.data, name, progress=progress)
        fs.paste = norm
        fs.stats.lines = norm.original_lines
        fs.stats.bytes = len(data)
    fs.stats.compression = stats.compression
    fs.stats.warnings[:0] = stats.warnings
    return fs


def build_report(scanner: Scanner, scans: list, env: dict | None = None, *,
                 origins: bool = True) -> Report:
    """Rank the references against finished scans of one job's files; with `origins`, the
    evidence and unexplained lines carry the upstream code that prints them."""
    obs = observe(scanner, scans)
    from_env = []
    for key, value in (env or {}).items():
        if key not in obs.facts:
            obs.facts[key] = str(value)
            from_env.append(key)
    order = LineOrder(obs, [])
    cands = _candidates(scanner.catalogue, obs, order)
    diagnoses = rank(cands, obs)
    unexplained = _unexplained(scanner, obs, cands, diagnoses)
    inputs = []
    for fs in scans:
        inputs.append(InputFile(path=fs.name, bytes=fs.stats.bytes, lines=fs.stats.lines,
                                compression=fs.stats.compression, warnings=tuple(fs.stats.warnings)))
    if obs.invalid_utf8 and inputs:
        first = inputs[0]
        inputs[0] = InputFile(first.path, first.bytes, first.lines, first.compression,
                              first.warnings + (f"{obs.invalid_utf8} matched lines were not valid "
                                                "UTF-8 and were decoded with replacement characters",))
    report = Report(inputs=tuple(inputs), diagnoses=tuple(diagnoses), facts=dict(obs.facts),
                    tracebacks=tuple(obs.tracebacks), catalogue_digest=scanner.catalogue.digest,
                    reference_count=len(scanner.catalogue), unexplained=unexplained,
                    environment_facts=tuple(sorted(from_env)))
    if origins and (report.diagnoses or report.unexplained):
        from .origins.attach import attach
        report = attach(report)
    return report


def _candidates(cat, obs, order) -> list:
    """Every reference that can rank: those with a line in the log (and the few whose
    fingerprint needs none), then the siblings of those that match, which their diagnoses
    explain away. A reference with no line in the log cannot match, so it is not evaluated
    (nor unpickled); catalogue order is kept."""
    pos = {rid: i for i, rid in enumerate(cat.ids)}
    todo = {rid for rid, _name in obs.signals} | set(cat.unconditional)
    done: dict[str, object] = {}
    while todo:
        for rid in todo:
            ref = cat.get(rid)
            if ref is not None:
                done[rid] = evaluate(ref, obs, order)
        todo = {sib.id for rid in todo if rid in done and (done[rid].matched or done[rid].possible)
                for sib in done[rid].ref.siblings} - done.keys()
    return [done[rid] for rid in sorted(done, key=pos.__getitem__)]


def _unexplained(scanner: Scanner, obs, cands, diagnoses) -> tuple:
    if not obs.tracebacks and not obs.failure_lines:
        return ()  # nothing in the log says it failed
    diagnosed = {d.id for d in diagnoses}
    explained: set[tuple[str, int]] = set()
    templates: set[str] = set()
    partial: dict[tuple[str, int], list[str]] = {}
    for c in cands:
        for name, lines in c.present.items():
            for ln in lines:
                if c.ref.id in diagnosed:
                    explained.add((ln.file, ln.number))
                    templates.add(unexplained_mod.template(ln.text))
                elif c.ref.signals[name].level == "error":
                    partial.setdefault((ln.file, ln.number), []).append(c.ref.id)

    def sim():  # built only when a line is named: it costs a pass over the catalogue
        return scanner.similarity or unexplained_mod.similarity_for(scanner.catalogue.digest,
                                                                    scanner.catalogue.references)

    confirmed = any(d.status == "confirmed" and d.severity == "failure" for d in diagnoses)
    return unexplained_mod.find(obs, explained, templates, diagnosed, confirmed, sim, partial)
