"""Paste-proof reading (issue 12, item 1): what pasting does to a log leaves the diagnosis unchanged.

The property: for every match example in the catalogue, each transformation that issue trackers,
chats, terminals and e-mail apply to a pasted log keeps the same top diagnosis.
"""

import html
import textwrap

import pytest

from conftest import ROOT
from faultlens import catalogue as catalogue_mod
from faultlens import lint
from faultlens.api import diagnose
from faultlens.logs import paste
from faultlens.logs.reader import ReadStats, iter_chunks

REFS = catalogue_mod.load(ROOT / "catalogue").references


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _each(f):
    return lambda text: "\n".join(f(ln) for ln in _lines(text)) + "\n"


def _wrap80(text: str) -> str:
    return "\n".join(w for ln in _lines(text)
                     for w in (textwrap.wrap(ln, 80, drop_whitespace=True, break_long_words=True,
                                             break_on_hyphens=False) or [""])) + "\n"


def _fold80(text: str) -> str:
    return "\n".join(ln[i:i + 80] for ln in _lines(text) for i in range(0, max(len(ln), 1), 80)) + "\n"


TRANSFORMS = {
    "quote": _each(lambda ln: "> " + ln),
    "backticks": _each(lambda ln: "`" + ln + "`" if ln.strip() else ln),
    "html-escape": lambda text: html.escape(text, quote=True),
    "wrap-80": _wrap80,
    "fold-80": _fold80,
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "journald": _each(lambda ln: "Dec 01 10:00:00 node7 python3[4242]: " + ln),
    "pytest": _each(lambda ln: "E       " + ln),
}


def _read(path) -> str:
    stats = ReadStats(name=str(path))
    return b"".join(c for c, _ in iter_chunks(str(path), stats)).decode("utf-8", "replace")


def _match_examples():
    for ref in REFS:
        matches, _ = lint.example_files(ref.path)
        for log in matches:
            yield ref.id, log


MATCHES = list(_match_examples())


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_paste_artefacts_keep_the_top_diagnosis(real_scanner, name):
    transform = TRANSFORMS[name]
    changed = []
    for ref_id, log in MATCHES:
        meta = lint.read_sidecar(log)
        env = meta.get("facts") or None
        text = _read(log)
        before = diagnose(text.encode(), env=env, scanner=real_scanner)
        after = diagnose(transform(text).encode(), env=env, scanner=real_scanner)
        top_before = before.diagnoses[0].id if before.diagnoses else None
        top_after = after.diagnoses[0].id if after.diagnoses else None
        if top_before != top_after:
            changed.append(f"{ref_id}/{log.name}: {top_before} -> {top_after}")
    assert not changed, f"{name} changed {len(changed)} of {len(MATCHES)}:\n" + "\n".join(changed)


def test_evidence_keeps_original_line_numbers(real_scanner):
    log = (ROOT / "examples" / "vllm-nvfp4-emulation-crash.log").read_text()
    plain = diagnose(log.encode(), scanner=real_scanner).top
    quoted = diagnose(TRANSFORMS["quote"](log).encode(), scanner=real_scanner).top
    assert [e.line for e in quoted.evidence] == [e.line for e in plain.evidence]
    wrapped_text = _wrap80(log)
    wrapped = diagnose(wrapped_text.encode(), scanner=real_scanner)
    assert wrapped.top.id == plain.id
    assert wrapped.inputs[0].lines == len(_lines(wrapped_text))
    # the error line is reported where its first wrapped piece is
    first_piece = next(i for i, ln in enumerate(_lines(wrapped_text), 1) if "indices should" in ln)
    assert wrapped.top.first.line == first_piece


def test_exception_in_repr_form_inside_a_logger_line():
    norm = paste.normalise(b"ERROR 12-01 10:00:00 [engine.py:9] Engine loop failed: "
                           b"RuntimeError('CUDA error: an illegal memory access was encountered\\n"
                           b"Compile with `TORCH_USE_CUDA_DSA`')\n")
    extra = norm.data.split(b"\n")[norm.original_lines:]
    assert extra[0] == b"RuntimeError: CUDA error: an illegal memory access was encountered"
    assert norm.origin(norm.original_lines + 1) == (1, 1)


def test_joins_are_only_made_for_hard_wrapped_pastes():
    long_lines = b"".join(b"x" * 150 + b"\n" for _ in range(3))
    assert paste.normalise(long_lines).extra == []
    wrapped = b"a" * 80 + b"\n" + b"b" * 80 + b"\n" + b"c" * 10 + b"\n"
    norm = paste.normalise(wrapped)
    assert norm.extra == [(1, 2), (1, 2), (1, 3), (1, 3), (2, 3), (2, 3)]
    assert b"a" * 80 + b"b" * 80 + b"c" * 10 in norm.data


def test_clean_lines_are_left_alone():
    text = b"step 1 loss 2.3\nstep 2 loss 2.1\n"
    norm = paste.normalise(text)
    assert not norm.changed and norm.data == text
