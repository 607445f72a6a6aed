"""Checks decided from the figures the log prints (the `measure` cases of a check)."""

from __future__ import annotations

import pytest

from faultlens.engine.measure import decide, number, parse
from faultlens.model import Line, Measure

NEW = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total "
       "capacity of 23.52 GiB of which 38.31 MiB is free. Of the allocated memory 22.10 GiB is "
       "allocated by PyTorch, and {unalloc} is reserved by PyTorch but unallocated.")
OLD = ("RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; 79.35 GiB total capacity; "
       "{alloc} already allocated; 145.19 MiB free; {reserved} reserved in total by PyTorch)")


def _check(real_scanner, ref_id, check_id):
    ref = next(r for r in real_scanner.catalogue.references if r.id == ref_id)
    return next(c for c in ref.checks if c.id == check_id)


def test_sizes_compare_in_bytes():
    assert number("64.00 MiB") == 64 * 2**20
    assert number("1.5 GiB") > number("1500 MiB")
    assert number("0 bytes") == 0 and number("896.00 KiB") == 896 * 1024
    assert number("a lot") is None
    with pytest.raises(ValueError):
        parse("request")


@pytest.mark.parametrize("req,unalloc,status", [("64.00 MiB", "221.32 MiB", "fail"),
                                               ("2.00 GiB", "1.64 GiB", "pass"),
                                               ("20.00 MiB", "21.90 GiB", "fail")])
def test_oom_fragmentation_decided_from_the_new_format(real_scanner, req, unalloc, status):
    chk = _check(real_scanner, "cuda-out-of-memory", "fragmentation-ruled-out")
    line = Line("x.log", 7, NEW.format(req=req, unalloc=unalloc))
    got, detail = decide(chk.measure, {"oom_allocator": [line]})
    assert got == status
    assert unalloc in detail and req in detail and "line 7" in detail


def test_old_format_subtracts_allocated_from_reserved(real_scanner):
    chk = _check(real_scanner, "cuda-oom-fragmentation", "compare-by-hand")
    # 31.99 - 26.21 = 5.78 GiB free in the cache against a 9.14 GiB request: not fragmentation
    line = Line("x.log", 3, OLD.format(req="9.14 GiB", alloc="26.21 GiB", reserved="31.99 GiB"))
    assert decide(chk.measure, {"oom_allocator": [line]})[0] == "fail"
    line = Line("x.log", 3, OLD.format(req="1.00 GiB", alloc="26.21 GiB", reserved="31.99 GiB"))
    assert decide(chk.measure, {"oom_allocator": [line]})[0] == "pass"


def test_no_figures_leaves_the_check_to_the_reader(real_scanner):
    chk = _check(real_scanner, "cuda-out-of-memory", "fragmentation-ruled-out")
    wrapped = Line("x.log", 3, "OutOfMemoryError: CUDA out of memory. Tried to allocate 642.00 MiB. GPU")
    assert decide(chk.measure, {"oom_allocator": [wrapped]}) is None
    assert decide(chk.measure, {}) is None


def test_count_of_distinct_values_against_a_figure():
    case = Measure("timeout", r"\[Rank (?P<rank>\d+)\].*world size (?P<world>\d+)|\[Rank (?P<r2>\d+)\]",
                   "count(rank) < world", "{count(rank)} of {world} ranks reported ({list(rank)})")
    lines = [Line("x", i, f"[Rank {r}] timed out, world size 4") for i, r in enumerate([0, 1, 1, 3])]
    status, detail = decide((case,), {"timeout": lines})
    assert status == "pass" and detail.startswith("3 of 4 ranks reported (0, 1, 3)")


def test_catalogue_measures_run_on_the_examples(real_scanner):
    from conftest import ROOT
    from faultlens.api import diagnose

    log = ROOT / "catalogue/memory/cuda-out-of-memory/examples/match-rank-prefixed-module-to.log"
    report = diagnose(str(log), scanner=real_scanner)
    checks = {c.id: c for c in report.top.checks}
    # 416.38 MiB unallocated against a 462.00 MiB request, as the log prints it
    assert checks["fragmentation-ruled-out"].status == "pass"
    assert "416.38 MiB" in checks["fragmentation-ruled-out"].detail
    assert checks["request-vs-capacity"].status == "pass"


def test_nccl_ranks_that_reported_against_the_group_size(real_scanner):
    from faultlens.api import diagnose

    log = "".join(
        [f"[rank{r}]:I0527 15:16:51.665375 58626 ProcessGroupNCCL.cpp:869] [PG 0 Rank {r}] "
         f"ProcessGroupNCCL initialization options: size: 4, global rank: {r}, TIMEOUT(ms): 600000\n"
         for r in range(4)]
        + [f"[rank{r}]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
           f"collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, "
           f"NumelOut=1, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n"
           for r in (0, 1, 3)])
    report = diagnose(log, scanner=real_scanner)
    d = next(d for d in report.diagnoses if d.id == "nccl-watchdog-collective-timeout")
    chk = next(c for c in d.checks if c.id == "find-missing-rank")
    assert chk.status == "pass"
    assert chk.detail.startswith("3 of 4 ranks reported the timeout (ranks 0, 1, 3)")
