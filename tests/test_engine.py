"""Differential diagnosis on the demo catalogue in tests/data/catalogue."""

GENERIC = '''Traceback (most recent call last):
  File "/work/model/net.py", line 89, in topk
    idx = self.top_index[topk_index]
RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
'''

SPECIFIC = '''(EngineCore pid=9) INFO 04-09 13:00:58 [nvfp4.py:285] Using 'EMULATION' backend out of potential backends
(EngineCore pid=9) ERROR 04-09 13:01:12 [core.py:1096] Traceback (most recent call last):
(EngineCore pid=9) ERROR 04-09 13:01:12 [core.py:1096]   File "/v/emulation_utils.py", line 38, in break_fp4_bytes
(EngineCore pid=9) ERROR 04-09 13:01:12 [core.py:1096]     values = kE2M1[abs_vals]
(EngineCore pid=9) ERROR 04-09 13:01:12 [core.py:1096] RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
'''


def ids(report):
    return [d.id for d in report.diagnoses]


def test_generic_wins_without_context_and_specific_is_only_possible(demo):
    report = demo(GENERIC)
    assert ids(report) == ["demo-generic-index", "demo-specific-index"]
    assert [d.status for d in report.diagnoses] == ["confirmed", "possible"]
    generic, specific = report.diagnoses
    assert specific.confidence < generic.confidence
    rejected = {r.id: r.reason for r in report.top.rejected_siblings}
    assert "demo-specific-index" in rejected
    assert "possible only" in rejected["demo-specific-index"]
    # the missing context becomes an open check that says what would decide it
    open_checks = [c for c in specific.checks if c.id.startswith("confirm-")]
    assert open_checks and all(c.status == "unknown" for c in open_checks)
    assert "the emulation backend line" in " ".join(c.text for c in open_checks)


def test_specific_wins_with_context_and_says_why_generic_lost(demo):
    report = demo(SPECIFIC)
    assert ids(report)[:2] == ["demo-specific-index", "demo-generic-index"]
    top = report.top
    assert top.variant == "no-native"
    reasons = {r.id: r.reason for r in top.rejected_siblings}
    assert "more evidence" in reasons["demo-generic-index"]
    assert top.confidence > report.diagnoses[1].confidence
    assert {e.signal for e in top.evidence} >= {"message", "frame", "backend"}
    assert top.first.line == 5 and top.first.process == "EngineCore pid=9"


def test_variant_and_its_fix_come_first(demo):
    report = demo("VLLM_BATCH_INVARIANT=1 python serve.py\n" + SPECIFIC)
    top = report.top
    assert top.variant == "batch-invariant"
    assert top.fix[0].do.startswith("Unset VLLM_BATCH_INVARIANT")
    assert report.facts["env.VLLM_BATCH_INVARIANT"] == "1"


def test_checks_are_decided_from_log_facts_and_manual(demo):
    report = demo(SPECIFIC, env={"gpu.compute_capability": "9.0"})
    status = {c.id: c.status for c in report.top.checks}
    assert status == {"backend-line": "pass", "old-gpu": "pass", "other-gpu": "manual"}
    report = demo(SPECIFIC.replace("Using 'EMULATION' backend", "Using 'X' backend")
                  .replace("emulation_utils", "emulation_utils"))
    status = {c.id: c.status for c in report.top.checks}
    assert status["backend-line"] == "fail" and status["old-gpu"] == "unknown"


def test_facts_raise_and_lower_confidence(demo):
    for_ = demo(SPECIFIC, env={"gpu.compute_capability": "9.0"}).top.confidence
    against = demo(SPECIFIC, env={"gpu.compute_capability": "12.0"}).top.confidence
    unknown = demo(SPECIFIC).top.confidence
    assert for_ > unknown > against


def test_gpu_name_in_log_gives_compute_capability(demo):
    report = demo("GPU 0: NVIDIA H100 80GB HBM3\n" + SPECIFIC)
    assert report.facts["gpu.name"].startswith("H100")
    assert report.facts["gpu.compute_capability"] == "9.0"


def test_order_violation_lowers_score(demo):
    lines = SPECIFIC.splitlines()
    reordered = "\n".join(lines[1:] + lines[:1]) + "\n"
    assert demo(reordered).top.score < demo(SPECIFIC).top.score


OOM_THEN_TIMEOUTS = '''[rank1]:[E1129 10:00:01.000 ProcessGroupNCCL.cpp:1] something unrelated
[rank0]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.1 GiB
[rank1]:[E1129 10:10:01.000 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.
[rank2]:[E1129 10:10:01.000 ProcessGroupNCCL.cpp:607] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
'''


def test_root_cause_ranks_first_and_consequences_name_it(demo):
    report = demo(OOM_THEN_TIMEOUTS)
    assert ids(report)[0] == "demo-oom"
    cons = {d.id: d.consequence_of for d in report.diagnoses[1:]}
    assert cons == {"demo-watchdog": "demo-oom", "demo-wrapper": "demo-oom"}
    assert report.top.first.process == "rank0"


def test_consequence_alone_is_still_reported(demo):
    report = demo(OOM_THEN_TIMEOUTS.replace("CUDA out of memory. Tried", "CUDA something. Tried"))
    assert ids(report)[0] == "demo-watchdog"
    assert report.top.consequence_of is None


def test_wrapper_never_outranks_what_it_wraps(demo):
    text = GENERIC + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    report = demo(text)
    assert ids(report) == ["demo-generic-index", "demo-wrapper", "demo-specific-index"]
    # a possible candidate ranks below every confirmed one, consequences included
    assert [d.status for d in report.diagnoses] == ["confirmed", "confirmed", "possible"]


def test_first_failing_rank_across_files_uses_timestamps(demo, tmp_path):
    a = tmp_path / "rank0.log"
    b = tmp_path / "rank1.log"
    a.write_text("2024-05-01T10:05:00Z torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n")
    b.write_text("2024-05-01T10:00:00Z torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n")
    report = demo([str(a), str(b)])
    assert report.top.first.file == str(b)


def test_info_reference_explains_but_is_not_a_failure(demo):
    report = demo("(EngineCore pid=1) WARNING 04-09 13:00:57 [marlin.py:1] Your GPU does not have native support for FP4\n")
    assert ids(report) == ["demo-info-note"]
    assert report.failures == ()
    assert report.top is None


def test_healthy_text_has_no_diagnosis(demo):
    report = demo("epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
    assert report.diagnoses == ()


def test_matches_across_chunk_boundaries_and_caps(demo_scanner, tmp_path):
    from faultlens.engine.scan import FIRST_HITS, LAST_HITS, scan_file

    body = "".join(f"noise {i}\n" for i in range(300))
    line = "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n"
    text = body + line * 200 + "Traceback (most recent call last):\n" + body[:200] + "KeyError: 'k'\n"
    path = tmp_path / "big.log"
    path.write_text(text)
    small = scan_file(demo_scanner, str(path), chunk_size=97)
    large = scan_file(demo_scanner, str(path))
    pid = demo_scanner.expressions.index(
        "indices should be either on cpu or on the same device")
    assert small.hits[pid].count == large.hits[pid].count == 200
    assert small.hits[pid].lines == large.hits[pid].lines
    assert len(small.hits[pid].lines) == FIRST_HITS + LAST_HITS
    assert small.hits[pid].lines[0] == 301
    assert small.windows[0][0] == large.windows[0][0] == 501
    assert small.windows[0][1] == large.windows[0][1]


def test_a_consequence_that_explains_a_generic_line_better_still_wins(tmp_path):
    """A consequence-role reference with more evidence on the same line as a generic initiating one."""
    import shutil
    from conftest import DATA
    from faultlens import catalogue as catalogue_mod
    from faultlens.api import diagnose
    from faultlens.engine.compile import build

    cat = tmp_path / "cat"
    shutil.copytree(DATA / "catalogue", cat)
    ref = cat / "distributed" / "demo-watchdog" / "reference.yaml"
    text = ref.read_text().replace(
        "  watchdog: {regex: 'Watchdog caught collective operation timeout', level: error}",
        "  watchdog: {regex: 'Watchdog caught collective operation timeout', level: error}\n"
        "  generic_line: {regex: 'indices should be either on cpu or on the same device', level: error}\n"
        "  pickled: {regex: 'pickled by the launcher'}")
    text = text.replace("  all: [watchdog]", "  any: [watchdog, generic_line]\n  support: [pickled]")
    ref.write_text(text)
    scanner = build(catalogue_mod.load(cat))
    log = "pickled by the launcher\nRuntimeError: indices should be either on cpu or on the same device\n"
    report = diagnose(log, scanner=scanner)
    assert [d.id for d in report.diagnoses][:2] == ["demo-watchdog", "demo-generic-index"]
    assert report.top.consequence_of is None


def test_advice_lines_are_not_environment_facts(demo):
    report = demo("CUDA out of memory. Tried to allocate 20.00 MiB. If reserved but unallocated memory "
                  "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
                  "launch: NCCL_DEBUG=INFO torchrun train.py\n")
    assert "env.PYTORCH_CUDA_ALLOC_CONF" not in report.facts
    assert report.facts["env.NCCL_DEBUG"] == "INFO"


def test_a_failure_seen_only_in_a_warning_ranks_below_one_that_raised(tmp_path):
    """A UserWarning-only diagnosis (the run went on) ranks below the exception that ended it."""
    import shutil
    from conftest import DATA
    from faultlens import catalogue as catalogue_mod
    from faultlens.api import diagnose
    from faultlens.engine.compile import build

    cat = tmp_path / "cat"
    shutil.copytree(DATA / "catalogue", cat)
    ref = cat / "demo" / "demo-driver-too-old" / "reference.yaml"
    ref.write_text(ref.read_text().replace(
        "  insufficient: {regex: 'CUDA driver version is insufficient for CUDA runtime version', level: error}",
        "  insufficient: {regex: 'CUDA driver version is insufficient for CUDA runtime version|driver on your system is too old', level: error}\n"
        "  init: {regex: 'CUDA initialization'}").replace("  all: [insufficient]", "  all: [insufficient]\n  support: [init]"))
    scanner = build(catalogue_mod.load(cat))
    log = ("torch/cuda/__init__.py:138: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old\n"
           "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n")
    ranked = [d.id for d in diagnose(log, scanner=scanner).diagnoses]
    assert ranked[:2] == ["demo-generic-index", "demo-driver-too-old"]
    only_warning = log.splitlines()[0] + "\n"
    assert [d.id for d in diagnose(only_warning, scanner=scanner).diagnoses] == ["demo-driver-too-old"]
