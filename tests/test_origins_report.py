"""Origins on a diagnosis: evidence and unexplained lines carry the upstream code that prints
them (JSON `origin`, one short line in text and markdown, a link on the web page), a version-skew
sentence when the log's release does not print the line, and nothing breaks without an index."""

import json

import pytest
from conftest import ROOT
from test_origins import index  # noqa: F401  (the fixture: a small index of a fake package)

from faultlens.api import diagnose
from faultlens.origins import attach as attach_mod
from faultlens.origins.store import IndexMissing
from faultlens.render import json as json_render
from faultlens.render import markdown, text

HEAD_SIZE = """\
Traceback (most recent call last):
  File "/home/me/serve.py", line 40, in <module>
    run(model)
  File "/usr/lib/python3.11/site-packages/fakepkg/attention.py", line 88, in run
    ops.paged_attention(out, head_size)
RuntimeError: Unsupported head size: 96. Supported sizes are 64 and 128.
"""
CHECKPOINT = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 12, in <module>
    loader.load_state(path)
  File "/usr/lib/python3.11/site-packages/fakepkg/loader.py", line 10, in load_state
    raise ValueError(f"Checkpoint path '{path}' does not exist or is not a directory")
ValueError: Checkpoint path '/ckpt/step-100' does not exist or is not a directory
"""


@pytest.fixture
def fake_index(index, monkeypatch):  # noqa: F811
    monkeypatch.setattr(attach_mod, "default_index", lambda: index)
    return index


def test_unexplained_line_names_its_origin_and_releases(fake_index):
    report = diagnose(HEAD_SIZE)
    [u] = report.unexplained
    assert (u.origin.project, u.origin.path, u.origin.kind) == (
        "fakepkg", "fakepkg/kernels.cu", "TORCH_CHECK")
    assert u.origin.releases == ("2.0",) and u.origin.function == "paged_attention_launcher"
    data = json.loads(json_render.render(report))["unexplained"][0]["origin"]
    assert data["url"].startswith("https://github.com/example/fakepkg/blob/v2.0/src/fakepkg/kernels.cu#L")
    assert data["skew"] is None
    out = text.render(report)
    assert "printed by fakepkg kernels.cu (paged_attention_launcher), 2.0" in out
    assert "printed by [fakepkg `fakepkg/kernels.cu`](https://github.com/example/fakepkg" in \
        markdown.render(report)


def test_evidence_line_of_a_diagnosis_carries_its_origin(fake_index):
    report = diagnose(CHECKPOINT)
    top = report.diagnoses[0]
    traced = [e for e in top.evidence if e.origin]
    assert traced and traced[0].text.startswith("ValueError: Checkpoint path")
    assert traced[0].origin.function == "ModelLoader.load_state"
    assert top.first.origin == traced[0].origin
    data = json.loads(json_render.render(report))["diagnoses"][0]
    assert data["first"]["origin"]["releases"] == ["1.0", "2.0"]
    assert data["first"]["origin"]["span"] == "1.0–2.0"
    assert "printed by fakepkg loader.py (ModelLoader.load_state), 1.0–2.0" in text.render(report)


def test_release_that_does_not_print_the_line_is_called_skew(fake_index):
    report = diagnose(HEAD_SIZE, env={"fakepkg.version": "1.0"})
    [u] = report.unexplained
    assert "the log reports fakepkg 1.0" in u.origin.skew
    assert "version skew: the log reports fakepkg 1.0" in text.render(report)
    same = diagnose(HEAD_SIZE, env={"fakepkg.version": "2.0"})
    assert same.unexplained[0].origin.skew == ""


def test_no_index_leaves_the_report_as_it_is(monkeypatch):
    def missing():
        raise IndexMissing("origins index not found")

    monkeypatch.setattr(attach_mod, "default_index", missing)
    report = diagnose(HEAD_SIZE)
    assert report.unexplained and report.unexplained[0].origin is None
    assert "printed by" not in text.render(report)


def test_origins_can_be_turned_off_and_healthy_logs_look_nothing_up(fake_index, monkeypatch):
    calls = []
    monkeypatch.setattr(attach_mod, "attach", lambda r, index=None: calls.append(r) or r)
    assert diagnose(HEAD_SIZE, origins=False).unexplained[0].origin is None
    diagnose("step 1 loss 2.31\nstep 2 loss 2.20\n")
    assert calls == []


def test_shipped_index_traces_the_bundled_example():
    report = diagnose(ROOT / "examples" / "vllm-nvfp4-emulation-crash.log")
    origins = {e.origin.project for e in report.diagnoses[0].evidence if e.origin}
    assert {"vllm", "torch"} <= origins


# --- lint's regex fallback: a regex that spells out only part of a message ---------------------

@pytest.mark.parametrize("regex, runs", [
    # TensorRT's archive assertion: the first alternative is all literal text, the second is not
    (r"Size specified in header does not match archive size|sizeRead == static_cast(<[a-z0-9_]+>)?"
     r"\(mEnd - mCurrent\) failed", ["Size specified in header does not match archive size"]),
    (r"(?:Tensors must be CUDA and dense)", ["Tensors must be CUDA and dense"]),
    # the literal run is a minority of what the alternative requires: a template that holds it
    # would not print this message (ray's 'is deprecated and will be removed in the future')
    (r"(LLAMA|WHISPER)_(CUBLAS|CUDA) is (deprecated and will be removed in the future|removed)", []),
    (r"Could not find any (nv|NVIDIA) (files|binaries|libraries|devices) on this host", []),
    (r"size mismatch for [\w.]+: copying a param", []),
])
def test_literal_runs_name_a_template_only_when_they_carry_the_message(regex, runs):
    from faultlens.origins.coverage import literal_runs

    assert literal_runs(regex) == runs


def test_a_signal_whose_example_wording_is_not_indexed_still_finds_its_template(fake_index, tmp_path):
    """An example line in a wording no indexed release prints (an older release's) no longer hides
    the template the signal's regex also matches: lint does not ask for origin: none."""
    from types import SimpleNamespace

    from faultlens.origins.coverage import signal_origins

    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "match-old.log").write_text("Checkpoint path /ckpt/7 is missing\n")
    sig = SimpleNamespace(name="missing", level="error", kind="line", origin="",
                          regex=r"Checkpoint path \S+ (does not exist or is not a directory|is missing)")
    ref = SimpleNamespace(id="demo", path=str(tmp_path), signals={"missing": sig})
    assert fake_index.candidates("Checkpoint path /ckpt/7 is missing", limit=3) == []
    [so] = signal_origins(ref, fake_index)
    assert so.lines == ("Checkpoint path /ckpt/7 is missing",)
    assert so.origins and {o.project for o in so.origins} == {"fakepkg"}
