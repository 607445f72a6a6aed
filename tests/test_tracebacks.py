from hypothesis import given, strategies as st

from faultlens.engine.structure import to_line
from faultlens.logs.tracebacks import parse_traceback


def lines(text, file="x.log"):
    return [to_line(file, i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_chained_traceback_keeps_final_and_earlier_exceptions():
    tb = parse_traceback(lines('''Traceback (most recent call last):
  File "a.py", line 1, in f
    g()
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "b.py", line 2, in h
    raise RuntimeError("y")
RuntimeError: y
next unrelated line'''))
    assert tb.exception == "RuntimeError: y"
    assert tb.chained_from == ("KeyError: 'x'",)
    assert [f.path for f in tb.frames] == ["b.py"]
    assert tb.exception_line == 11


def test_direct_cause_chain():
    tb = parse_traceback(lines('''Traceback (most recent call last):
  File "a.py", line 1, in f
ValueError: inner

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "b.py", line 9, in g
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB'''))
    assert tb.final_exception.startswith("torch.OutOfMemoryError")
    assert tb.chained_from == ("ValueError: inner",)


def test_python311_carets_and_prefixes():
    tb = parse_traceback(lines('''[rank1]:Traceback (most recent call last):
[rank1]:  File "/w/train.py", line 5, in <module>
[rank1]:    loss = model(x)
[rank1]:           ^^^^^^^^
[rank1]:RuntimeError: CUDA error: an illegal memory access was encountered'''))
    assert tb.process == "rank1"
    assert tb.exception.startswith("RuntimeError: CUDA error")
    assert tb.frames[0].function == "<module>"


def test_interleaved_processes_are_kept_apart(demo):
    text = "\n".join([
        "[rank0]:Traceback (most recent call last):",
        "[rank1]:Traceback (most recent call last):",
        '[rank0]:  File "a.py", line 1, in f',
        '[rank1]:  File "b.py", line 2, in g',
        "[rank1]:ValueError: from rank one",
        "[rank0]:KeyError: 'from rank zero'",
    ]) + "\n"
    report = demo(text)
    by_proc = {tb.process: tb for tb in report.tracebacks}
    assert by_proc["rank0"].exception == "KeyError: 'from rank zero'"
    assert by_proc["rank1"].exception == "ValueError: from rank one"
    assert by_proc["rank1"].frames[0].path == "b.py"


def test_header_without_exception_is_not_a_traceback():
    assert parse_traceback(lines("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n")) is None


@given(st.lists(st.sampled_from([
    "Traceback (most recent call last):", '  File "a.py", line 3, in f', "    x = y",
    "    ^^^^", "", "RuntimeError: boom", "KeyError: 'k'",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:", "noise line",
]), max_size=40))
def test_parser_never_raises(body):
    tb = parse_traceback(lines("\n".join(["Traceback (most recent call last):"] + body)))
    if tb is not None:
        assert tb.exception
