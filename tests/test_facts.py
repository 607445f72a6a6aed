"""Facts read from log text and derived from each other (facts/extract.py, facts/patterns.yaml)."""

import pytest

from faultlens.api import diagnose
from faultlens.facts.extract import arch_in_list, derive_arch_support, snapshot_facts

TORCH_124 = "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
TORCH_128 = "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"


@pytest.mark.parametrize("capability,arch_list,expected", [
    ("12.0", TORCH_124, False),          # RTX 50-series on a cu124 wheel
    ("12.0", TORCH_128, True),
    ("12.1", TORCH_128, True),           # GB10: sm_120 SASS runs on 12.1 (same major, lower minor)
    ("8.9", TORCH_124, True),            # Ada runs sm_86 SASS
    ("8.0", "sm_86 sm_90", False),       # sm_86 SASS does not run on 8.0
    ("6.1", TORCH_128, False),           # Pascal dropped from cu128 wheels
    ("10.0", "sm_80 compute_90", True),  # PTX is JIT-compiled for newer GPUs
    ("8.0", "sm_70 compute_90", False),  # ...but not for older ones
    ("9.0", "sm_80,sm_90a", True),       # an "a" target runs on exactly its capability
    ("10.0", "sm_90a", False),
    ("unknown", TORCH_124, None),
    ("12.0", "", None),
])
def test_arch_in_list(capability, arch_list, expected):
    assert arch_in_list(capability, arch_list) is expected


def test_arch_support_derived_only_when_both_facts_are_known():
    assert derive_arch_support({"torch.arch_list": TORCH_124}) == {"torch.arch_list": TORCH_124}
    facts = derive_arch_support({"torch.arch_list": TORCH_124, "gpu.compute_capability": "12.0"})
    assert facts["torch.arch_supported"] == "no"
    snap = snapshot_facts({"facts": {"torch.arch_list": TORCH_128, "gpu.compute_capability": "12.0"}})
    assert snap["torch.arch_supported"] == "yes"


def test_torch_warning_gives_capability_arch_list_and_support(tmp_path, real_scanner):
    log = tmp_path / "warn.log"
    log.write_text(
        "UserWarning: \n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\n"
        f"The current PyTorch install supports CUDA capabilities {TORCH_124}.\n")
    facts = diagnose(str(log), scanner=real_scanner).facts
    assert facts["gpu.compute_capability"] == "12.0"
    assert facts["torch.arch_list"] == TORCH_124
    assert facts["torch.arch_supported"] == "no"


def test_newer_torch_capability_warning_gives_capability(tmp_path, real_scanner):
    log = tmp_path / "warn.log"
    log.write_text("UserWarning: Found GPU0 NVIDIA GeForce GTX 1070 which is of cuda capability 6.1.\n"
                   "Minimum and Maximum cuda capability supported by this version of PyTorch is (7.0) - (12.0)\n")
    assert diagnose(str(log), scanner=real_scanner).facts["gpu.compute_capability"] == "6.1"
