"""The default text output is the verdict in a screenful, wrapped to the terminal width; no output
speaks in the catalogue's internal signal names."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from faultlens.api import diagnose
from faultlens.render import markdown, text

MATCH_LOGS = sorted(ROOT.glob("catalogue/*/*/examples/match-*.log"))
CUT_EVIDENCE = re.compile(r"^\s+(\S+:)?(line )?\d+:?  ?.*…$")


@pytest.fixture(scope="module")
def reports(real_scanner):
    return {p: diagnose(str(p), scanner=real_scanner) for p in MATCH_LOGS}


def test_default_output_is_short_and_fits_80_columns(reports):
    assert len(reports) > 100
    too_long, too_wide = [], []
    for path, report in reports.items():
        lines = text.render(report, width=80).splitlines()
        if len(lines) > 30:
            too_long.append(f"{path.relative_to(ROOT)}: {len(lines)} lines")
        too_wide += [f"{path.name}: {ln}" for ln in lines
                     if len(ln) > 80 and not CUT_EVIDENCE.match(ln)]
    assert not too_long
    assert not too_wide


def test_verbose_output_wraps_to_the_width_and_says_more(reports):
    path = ROOT / "catalogue/memory/cuda-out-of-memory/examples/match-forward-activation.log"
    short = text.render(reports[path], width=80)
    full = text.render(reports[path], verbose=True, width=60)
    assert "Why not" in full and "Sources" in full and "Why not" not in short
    assert len(full.splitlines()) > len(short.splitlines())
    long_lines = [ln for ln in full.splitlines() if len(ln) > 60 and not CUT_EVIDENCE.match(ln)
                  and not ln.strip().startswith("http")]
    assert not long_lines


def test_evidence_lines_are_cut_with_an_ellipsis_and_keep_their_number(reports):
    path = ROOT / "catalogue/memory/cuda-out-of-memory/examples/match-forward-activation.log"
    lines = text.render(reports[path], width=60).splitlines()
    cut = [ln for ln in lines if ln.endswith("…") and re.match(r"^\s+9  torch", ln)]
    assert cut and all(len(ln) <= 60 for ln in cut)


def _prose(ref) -> str:
    parts = [ref.title, ref.summary, ref.mechanism, *ref.symptoms]
    parts += [s.explain for s in ref.signals.values()]
    parts += [f"{c.text} {c.how or ''}" for c in ref.checks]
    parts += [f"{f.do} {f.why}" for f in ref.fix]
    parts += [s.distinguish for s in ref.siblings]
    for v in ref.variants:
        parts += [v.title, *(f"{c.text} {c.how or ''}" for c in v.checks),
                  *(f"{f.do} {f.why}" for f in v.fix)]
    return "\n".join(parts)


def _signal_names(real_scanner) -> set[str]:
    """Signal names used as identifiers (with an underscore; plain words may appear in prose),
    less those that are also upstream code names the references' own prose quotes
    (`break_fp4_bytes` is a vLLM function as well as a signal)."""
    refs = real_scanner.catalogue.references
    prose = "\n".join(_prose(r) for r in refs)
    return {name for ref in refs for name in ref.signals
            if "_" in name and not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", prose)}


def test_no_signal_name_in_text_or_markdown(reports, real_scanner):
    names = _signal_names(real_scanner)
    assert len(names) > 100
    pattern = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])")
    found = []
    for path, report in reports.items():
        for label, out in (("text", text.render(report, width=100)),
                           ("verbose", text.render(report, verbose=True, width=100)),
                           ("markdown", markdown.render(report))):
            # log lines are quoted as they were printed; only our own words are checked
            ours = "\n".join(ln for ln in out.splitlines() if not _is_log_line(ln, report))
            found += [f"{path.name} ({label}): {m.group(1)}" for m in pattern.finditer(ours)]
    assert not found, found[:20]


def _is_log_line(line: str, report) -> bool:
    texts = {e.text.strip()[:40] for d in report.diagnoses for e in d.evidence}
    texts |= {u.text.strip()[:40] for u in report.unexplained}
    return any(t and t[:30] in line for t in texts)


def test_github_annotates_a_failure_no_reference_explains(demo):
    from faultlens.render import github

    report = demo('Traceback (most recent call last):\n  File "/home/u/t.py", line 2, in <module>\n'
                  "    f()\nZorkError: bad zork\n")
    out = github.render(report)
    assert out.startswith("::error ") and "explained by no reference" in out and "bad zork" in out
    assert "No known failure" not in out


def test_facts_say_whether_the_log_or_the_machine_gave_them(real_scanner):
    from faultlens.api import diagnose
    from faultlens.render import json as json_render
    from faultlens.render.text import render

    log = "PyTorch version: 2.4.1+cu121\nRuntimeError: CUDA error: out of memory\n"
    env = {"gpu.name": "NVIDIA H100 80GB HBM3", "torch.version": "2.5.0"}
    report = diagnose(log, scanner=real_scanner, env=env, origins=False)
    assert report.environment_facts == ("gpu.name",)  # the log's own torch version wins
    assert report.facts["torch.version"] == "2.4.1+cu121"
    lines = render(report, verbose=True, width=200).splitlines()
    logged = next(x for x in lines if x.startswith("facts from the log: "))
    machine = next(x for x in lines if x.startswith("facts from this machine: "))
    assert "torch.version=2.4.1+cu121" in logged and "gpu.name" not in logged
    assert machine == "facts from this machine: gpu.name=NVIDIA H100 80GB HBM3"
    data = json_render.report_dict(report)
    assert data["input"]["facts_from_environment"] == ["gpu.name"]
