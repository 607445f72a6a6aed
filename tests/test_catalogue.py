"""Every reference x every example, every baseline log, and the labelled corpus, on the real catalogue."""

from pathlib import Path

import pytest

from conftest import ROOT
from faultlens import catalogue as catalogue_mod
from faultlens import lint
from faultlens.api import diagnose

CATALOGUE = ROOT / "catalogue"
REFS = catalogue_mod.load(CATALOGUE).references


def _examples():
    for ref in REFS:
        matches, nomatches = lint.example_files(ref.path)
        for log in matches:
            yield pytest.param(ref.id, log, True, id=f"{ref.id}/{log.name}")
        for log in nomatches:
            yield pytest.param(ref.id, log, False, id=f"{ref.id}/{log.name}")


@pytest.mark.parametrize("ref_id,log,should_match", list(_examples()))
def test_example(real_scanner, ref_id, log, should_match):
    meta = lint.read_sidecar(log)
    assert meta.get("source"), f"{log}: sidecar with 'source:' missing"
    report = diagnose(str(log), env=meta.get("facts") or None, scanner=real_scanner)
    ranked = [d.id for d in report.diagnoses]
    if should_match:
        assert ranked and ranked[0] == ref_id, f"{log.name}: expected {ref_id} first, got {ranked[:3]}"
        if meta.get("variant"):
            got = report.diagnoses[0].variant
            assert got == meta["variant"], f"{log.name}: expected variant {meta['variant']}, got {got}"
        return
    winner = lint.expected_winner(meta)
    assert winner, f"{log.name}: sidecar names no 'winner:' (the reference that must rank first)"
    assert winner != ref_id, f"{log.name}: winner names the reference itself"
    confirmed = [d.id for d in report.diagnoses if d.status == "confirmed"]
    assert not confirmed or confirmed[0] != ref_id, f"{log.name}: {ref_id} must not rank first"
    if winner == lint.NO_FAILURE:
        assert report.failures == (), f"{log.name}: expected no failure diagnosis, got {ranked[:3]}"
    elif winner == lint.UNEXPLAINED:
        # a failure no reference covers (some print no error line at all: garbage output, a
        # shrinking loss scale): at most possible candidates, nothing confirmed
        assert not report.confirmed, f"{log.name}: expected no confirmed diagnosis, got {confirmed[:3]}"
    else:
        assert ranked and ranked[0] == winner, f"{log.name}: expected {winner} first, got {ranked[:3]}"


@pytest.mark.parametrize("ref_id", [r.id for r in REFS])
def test_every_reference_has_both_kinds_of_example(ref_id):
    ref = next(r for r in REFS if r.id == ref_id)
    matches, nomatches = lint.example_files(ref.path)
    assert matches, f"{ref_id}: no match example"
    assert nomatches, f"{ref_id}: no nomatch example"


BASELINE = sorted(p for p in (ROOT / "baseline").glob("*.log*"))


def test_baseline_has_at_least_six_healthy_logs():
    assert len(BASELINE) >= 6


@pytest.mark.parametrize("log", BASELINE, ids=[p.name for p in BASELINE])
def test_baseline_raises_no_failure(real_scanner, log):
    report = diagnose(str(log), scanner=real_scanner)
    assert report.failures == (), [(d.id, d.first) for d in report.failures]


def test_static_lint_is_clean():
    problems, refs = lint.check_files(CATALOGUE)
    errors = [p for p in problems if p.level == "error"]
    assert not errors, "\n".join(f"{p.where}: {p.message}" for p in errors)
    assert len(refs) == len(REFS)


def test_every_coverage_id_is_written_or_planned():
    coverage = ROOT.parent / "shared" / "coverage.tsv"
    if not coverage.is_file():
        pytest.skip("shared/coverage.tsv is not beside this checkout")
    wanted = {line.split("\t")[0] for line in coverage.read_text().splitlines()[1:] if line.strip()}
    have = {r.id for r in REFS} | lint.planned_ids(CATALOGUE)
    assert wanted <= have, sorted(wanted - have)


def test_preflight_findings_on_a_gpu_node_snapshot():
    """The real catalogue's preconditions against a snapshot of a misconfigured 8-GPU container."""
    import json

    from faultlens.preflight import preflight

    snap = json.loads((ROOT / "tests" / "data" / "env" / "gpu-node-snapshot.json").read_text())
    facts = {k: str(v) for k, v in snap["facts"].items()}
    found = {f.ref.id: f for f in preflight(REFS, facts)}
    assert {"cuda-driver-runtime-mismatch", "nccl-shm-namespace",
            "vllm-batch-invariant-excludes-backends"} <= set(found)
    assert found["cuda-driver-runtime-mismatch"].severity == "failure"
    healthy = {**facts, "torch.cuda": "12.1", "shm.size_mb": "16384", "env.VLLM_BATCH_INVARIANT": "0"}
    assert not {"cuda-driver-runtime-mismatch", "nccl-shm-namespace",
                "vllm-batch-invariant-excludes-backends"} & {f.ref.id for f in preflight(REFS, healthy)}


def test_preflight_gpu_arch_against_the_torch_build_arch_list():
    """An RTX 50-series GPU on a cu124 build is flagged; the same GPU on a cu128 build is not."""
    from faultlens.facts.extract import snapshot_facts
    from faultlens.preflight import preflight

    gpu = {"gpu.name": "NVIDIA GeForce RTX 5090", "gpu.compute_capability": "12.0"}
    old = snapshot_facts({**gpu, "torch.arch_list": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"})
    new = snapshot_facts({**gpu, "torch.arch_list": "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"})
    assert "cuda-arch-not-in-build" in {f.ref.id for f in preflight(REFS, old)}
    assert "cuda-arch-not-in-build" not in {f.ref.id for f in preflight(REFS, new)}
