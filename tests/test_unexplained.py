"""The failing line is named when no reference explains it (issue 12, item 4)."""

import json

from faultlens.api import diagnose
from faultlens.render import json as json_render, markdown, text as text_render

UNKNOWN_TB = '''[rank0]: Traceback (most recent call last):
[rank0]:   File "/home/me/project/train.py", line 41, in <module>
[rank0]:     main(cfg)
[rank0]:   File "/home/me/project/train.py", line 30, in main
[rank0]:     model = load(cfg.path)
[rank0]:   File "/opt/conda/lib/python3.11/site-packages/transformers/models/llama/configuration_llama.py", line 182, in _rope_scaling_validation
[rank0]:     raise ValueError(
[rank0]: ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': 8.0, 'rope_type': 'llama3'}
'''


def test_unmatched_traceback_names_line_kind_component_and_user_frame(demo):
    report = demo(UNKNOWN_TB)
    assert report.failures == ()
    (item,) = report.unexplained
    assert item.line == 8
    assert item.kind == "ValueError"
    assert item.component == "transformers"
    assert item.user_frame == "/home/me/project/train.py:30 in main"
    assert item.process == "rank0"


def test_json_and_text_and_markdown_say_it(demo):
    report = demo(UNKNOWN_TB)
    data = json.loads(json_render.render(report))
    assert data["failure"] is True and data["diagnoses"] == []
    (u,) = data["unexplained"]
    assert set(u) >= {"file", "line", "text", "kind", "component", "user_frame", "nearest"}
    out = text_render.render(report)
    assert "No reference in the catalogue explains this failure" in out
    assert "line 8" in out and "ValueError" in out
    assert "No failure found" not in out
    assert "line 8" in markdown.render(report)


def test_warnings_only_have_no_unexplained_entry(demo):
    log = ("/usr/lib/python3/site-packages/x.py:3: UserWarning: TypedStorage is deprecated\n"
           "  warnings.warn(\n"
           "WARNING 04-09 13:00:57 [config.py:1] Possibly too large swap space\n"
           "[W socket.cpp:663] [c10d] The client socket has failed to connect (errno: 99).\n")
    report = demo(log)
    assert report.failures == () and report.unexplained == ()


def test_a_diagnosed_line_is_not_unexplained(demo):
    report = demo("RuntimeError: indices should be either on cpu or on the same device as the "
                  "indexed tensor (cpu)\n")
    assert report.top.id == "demo-generic-index"
    assert report.unexplained == ()


def test_structural_failure_lines_without_traceback(demo):
    log = ("step 10 loss 2.31\n"
           "NCCL WARN Cuda failure 'out of memory'\n"
           "RuntimeError: CUDA error: misaligned address\n")
    kinds = {u.kind for u in demo(log).unexplained}
    assert {"NCCL error", "RuntimeError"} <= kinds


def test_nearest_references_come_from_the_real_catalogue(real_scanner):
    # torch's own error line, with the reference's context absent: similar, not matched
    log = "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, " \
          "unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
    report = diagnose(log, scanner=real_scanner)
    assert report.failures or report.unexplained
    if not report.failures:
        assert report.unexplained[0].nearest


# real lines (corpus/ entries of batch 2026-12-01-d; their threads are in those sidecars) that no
# traceback, exception or "Error:" shape announces, yet each says the run failed
import pytest  # noqa: E402


@pytest.mark.parametrize("line, kind", [
    ("[  238.521491] NVRM: GPU 0000:00:04.0: RmInitAdapter failed! (0x63:0x55:2344)",
     "NVIDIA driver error"),
    ("CRITICAL 12-13 17:31:42 launcher.py:99] MQLLMEngine is already dead, terminating server "
     "process", "fatal"),
    ("Error occurred when executing KSampler:", "fatal"),
    ("    Running setup.py install for apex ... error", "build failure"),
    ("train_loss:  nan", "NaN loss"),
    ("CUDA SETUP: Setup Failed!", "error line"),
    ("*************** EP Error ***************", "error line"),
    # batch 2026-12-01-f (corpus/ray-train-macos-gloo-uv-accept-sigabrt and
    # corpus/xformers029-mea-not-enough-values-to-unpack): absl's fatal-signal line, a Python
    # unpacking error quoted without its exception class
    ("(RayTrainWorker pid=7315) *** SIGABRT received at time=1734086759 ***", "killed process"),
    ("Error during memory_efficient_attention: not enough values to unpack (expected 8, got 4) "
     "with release 0.29 after the update.", "failure message"),
])
def test_failure_line_shapes_beyond_exceptions(demo, line, kind):
    (u,) = demo(f"step 1 loss 2.31\n{line}\n").unexplained
    assert (u.line, u.kind) == (2, kind)


@pytest.mark.parametrize("line", [
    "step 10 loss 0.0123 grad_norm 1.02",
    "Building wheel for flash-attn (setup.py) ... done",
    "INFO: training finished, no failure found",
    "[I 12-13 17:31:42] loss: 1.25, lr: 2e-05",
    "Error handling is configured in errors.yaml",
    "values to unpack: 3 of 3 unpacked",
])
def test_healthy_lines_of_the_same_shapes_are_not_failures(demo, line):
    assert demo(line + "\n").unexplained == ()
