import pytest
from hypothesis import given, strategies as st

from faultlens.logs.prefix import clean, parse


@pytest.mark.parametrize("raw,message,rank,process,pid,level", [
    ("[rank3]:Traceback (most recent call last):", "Traceback (most recent call last):", 3, None, None, None),
    ("[rank3]:[W1129 10:00:00.123456 123 ProcessGroupNCCL.cpp:1234] Watchdog fired",
     "Watchdog fired", 3, None, 123, "WARNING"),
    ("[rank0]:E0915 03:59:15.531000 2660106 site-packages/torch/_inductor/x.py:715] tmp76 = 1",
     "tmp76 = 1", 0, None, 2660106, "ERROR"),
    ("(EngineCore pid=123) INFO 04-09 13:00:57 [nvfp4_utils.py:150] Using NvFp4LinearBackend.EMULATION",
     "Using NvFp4LinearBackend.EMULATION", None, "EngineCore", 123, "INFO"),
    ("(EngineCore_DP0 pid=77) ERROR 04-09 13:01:12 [core.py:1096]   File \"x.py\", line 1, in f",
     "  File \"x.py\", line 1, in f", None, "EngineCore_DP0", 77, "ERROR"),
    ("(VllmWorker TP1 pid=55) WARNING 05-01 10:00:00 [marlin.py:12] GPU does not have native support",
     "GPU does not have native support", 1, "VllmWorker TP1", 55, "WARNING"),
    ("(Worker_TP5 pid=9) ERROR 05-27 15:35:13 [multiproc_executor.py:962] boom", "boom", 5, "Worker_TP5", 9, "ERROR"),
    ("(RayWorkerWrapper pid=4242, ip=10.0.0.2) RuntimeError: x", "RuntimeError: x", None, "RayWorkerWrapper", 4242, None),
    ("2024-05-01T10:00:00.123Z RuntimeError: CUDA error", "RuntimeError: CUDA error", None, None, None, None),
    ("Nov 29 10:00:00 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
     "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", None, "kernel", None, None),
    ("trainer-1  | [rank1]:RuntimeError: x", "RuntimeError: x", 1, "trainer-1", None, None),
    ("\x1b_bk;t=1776672180490\x07 RuntimeError: gloo", "RuntimeError: gloo", None, None, None, None),
    ("\x1b[31mERROR\x1b[0m: something broke", "something broke", None, None, None, "ERROR"),
    ("[default3]:  File \"train.py\", line 10, in <module>", " File \"train.py\", line 10, in <module>", 3, None, None, None),
])
def test_prefixes(raw, message, rank, process, pid, level):
    pre, text = parse(raw)
    assert text == message
    assert pre.rank == rank
    assert pre.process == process
    assert pre.pid == pid
    assert pre.level == level


def test_progress_bar_keeps_last_rewrite():
    assert clean(" 10%|#  |\r 50%|#####|\rRuntimeError: boom\r\n") == "RuntimeError: boom"


def test_timestamps_order_lines():
    a, _ = parse("2024-05-01T10:00:00Z x")
    b, _ = parse("2024-05-01T10:00:01.5Z x")
    assert a.timestamp < b.timestamp


def test_traceback_indentation_survives_prefixes():
    _, text = parse("(EngineCore pid=1) ERROR 04-09 13:01:12 [core.py:1096]     values = kE2M1[abs_vals]")
    assert text == "    values = kE2M1[abs_vals]"


@given(st.text(max_size=300))
def test_parse_never_raises_and_returns_a_suffix(raw):
    pre, text = parse(raw)
    assert clean(raw).endswith(text)
