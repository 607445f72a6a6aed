"""Bounded context (issue 12, item 3): context counts only near the error line when a reference
says so (`window:` on a signal or the fingerprint)."""

from conftest import ROOT
from faultlens.api import diagnose

EXAMPLE = (ROOT / "catalogue" / "distributed" / "watchdog-timeout-checkpoint-save" / "examples"
           / "match-deepspeed-checkpoint-then-timeout.log")


def _with_steps_between(n: int) -> str:
    save, rest = EXAMPLE.read_text().split("\n", 1)
    steps = "".join(f"[Rank 6] step {i} loss 1.234 lr 2e-05\n" for i in range(n))
    return save + "\n" + steps + rest


def test_a_save_right_before_the_timeout_is_its_context(real_scanner):
    report = diagnose(_with_steps_between(3).encode(), scanner=real_scanner)
    assert report.top.id == "watchdog-timeout-checkpoint-save"


def test_a_save_hundreds_of_healthy_steps_earlier_is_not(real_scanner):
    report = diagnose(_with_steps_between(500).encode(), scanner=real_scanner)
    assert report.top.id == "nccl-watchdog-collective-timeout"
    save = next((d for d in report.diagnoses if d.id == "watchdog-timeout-checkpoint-save"), None)
    assert save is None or save.status == "possible"
    reasons = {r.id: r.reason for r in report.top.rejected_siblings}
    if "watchdog-timeout-checkpoint-save" in reasons and save is None:
        assert "too far from the error line" in reasons["watchdog-timeout-checkpoint-save"]


def test_same_process_window_ignores_another_process(demo_scanner, tmp_path):
    """The demo catalogue's specific reference needs its backend line from the same process."""
    from faultlens.catalogue import load
    from faultlens.engine.compile import build

    cat_dir = tmp_path / "cat"
    import shutil

    shutil.copytree(ROOT / "tests" / "data" / "catalogue", cat_dir)
    ref = cat_dir / "demo" / "demo-specific-index" / "reference.yaml"
    ref.write_text(ref.read_text().replace(
        "backend: {regex: \"Using 'EMULATION' backend\", level: info, explain: the emulation backend line}",
        "backend: {regex: \"Using 'EMULATION' backend\", level: info, explain: the emulation backend line, "
        "window: {same_process: true}}"))
    scanner = build(load(cat_dir))
    other = ("(EngineCore pid=7) INFO Using 'EMULATION' backend out of potential backends\n"
             "(EngineCore pid=9) RuntimeError: indices should be either on cpu or on the same device "
             "as the indexed tensor (cpu)\n")
    same = other.replace("pid=7", "pid=9")
    assert diagnose(same.encode(), scanner=scanner).top.id == "demo-specific-index"
    top = diagnose(other.encode(), scanner=scanner).top
    assert top.id == "demo-generic-index"
