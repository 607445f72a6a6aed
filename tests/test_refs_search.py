"""`refs search`: BM25 ranking over the real catalogue, a relevance cut-off, a snippet."""

from __future__ import annotations

import pytest

from faultlens.refs import search, snippet


@pytest.fixture(scope="module")
def refs(real_scanner):
    return real_scanner.catalogue.references


@pytest.mark.parametrize("query,first", [
    ("nccl timeout", "nccl-watchdog-collective-timeout"),
    ("watchdog timeout", "nccl-watchdog-collective-timeout"),
    ("cuda out of memory", "cuda-out-of-memory"),
    ("illegal memory access", "cuda-illegal-memory-access"),
    ("fragmentation", "cuda-oom-fragmentation"),
    ("vllm kv cache", "vllm-kv-cache-insufficient"),
])
def test_the_canonical_reference_comes_first(refs, query, first):
    assert search(refs, query)[0][1].id == first


def test_a_pasted_error_line_finds_its_reference(refs):
    line = ("[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1)")
    assert search(refs, line)[0][1].id == "nccl-watchdog-collective-timeout"


def test_irrelevant_results_are_cut_off(refs):
    assert search(refs, "zzqx nonsenseword") == []
    found = search(refs, "fragmentation", limit=100)
    assert 0 < len(found) < 10
    best = found[0][0]
    assert all(score >= 0.6 * best for score, _ in found)


def test_snippet_shows_what_matched(refs):
    ref = next(r for r in refs if r.id == "cuda-oom-fragmentation")
    text = snippet(ref, "expandable_segments", 100)
    assert "expandable" in text.lower() and len(text) <= 100
