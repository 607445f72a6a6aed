"""The command line: exit codes, bad input, output formats. Runs `main()` in-process."""

import gzip
import json
import subprocess
import sys

import pytest

from conftest import DATA, ROOT
from faultlens.cli import main

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


@pytest.fixture(autouse=True)
def demo_catalogue(monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))


def run(capsys, *argv):
    """Exit code, stdout, stderr; argparse's usage errors (SystemExit) count as an exit code."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_diagnose_text(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text("step 1\n" + OOM)
    code, out, err = run(capsys, "diagnose", str(log))
    assert code == 0
    assert "demo-oom" in out and "line 2" in out
    assert "Fix" in out and "Checks" in out


def test_json_contract(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text(OOM)
    code, out, _ = run(capsys, "diagnose", "--json", str(log))
    data = json.loads(out)
    assert code == 0 and data["schema"] == 1
    assert set(data) >= {"schema", "input", "diagnoses"}
    d = data["diagnoses"][0]
    assert set(d) >= {"id", "title", "category", "severity", "confidence", "evidence", "checks",
                      "fix", "rejected_siblings", "sources"}
    origin = d["evidence"][0].pop("origin")
    assert d["evidence"][0] == {"file": str(log), "line": 1, "text": OOM.strip(),
                                "signal": "oom", "process": None}
    # the OOM message is in torch's c10 CUDA library: traced, with the releases that print it
    assert origin["project"] == "torch" and origin["releases"]
    assert {c["status"] for c in d["checks"]} <= {"pass", "fail", "unknown", "manual"}
    assert 0 <= d["confidence"] <= 1


def test_markdown_and_top(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text(OOM + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n")
    code, out, _ = run(capsys, "diagnose", "--format", "markdown", "--top", "1", str(log))
    assert code == 0 and out.startswith("## faultlens diagnosis")
    assert "demo-oom" in out and "demo-wrapper" not in out


def test_github_annotations(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text("step 1\n" + OOM)
    code, out, _ = run(capsys, "diagnose", "--format", "github", str(log))
    first = out.splitlines()[0]
    assert code == 0 and first.startswith(f"::error file={log},line=2,title=faultlens%3A demo-oom")
    assert "%0AFix: Lower the batch size." in first
    log.write_text("all good\n")
    assert run(capsys, "diagnose", "--format", "github", str(log))[1].startswith("::notice")


def test_exit_code_flag(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_text(OOM)
    assert run(capsys, "diagnose", "--exit-code", str(log))[0] == 1
    log.write_text("all good\n")
    assert run(capsys, "diagnose", "--exit-code", str(log))[0] == 0


def test_stdin(monkeypatch, capsys):
    import io
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(OOM.encode())))
    code, out, _ = run(capsys, "diagnose", "-")
    assert code == 0 and "demo-oom" in out


def test_gzip_input(tmp_path, capsys):
    log = tmp_path / "job.log.gz"
    log.write_bytes(gzip.compress(OOM.encode()))
    code, out, _ = run(capsys, "diagnose", "--json", str(log))
    data = json.loads(out)
    assert data["input"]["files"][0]["compression"] == "gzip"
    assert data["diagnoses"][0]["id"] == "demo-oom"


def _bad_inputs(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"\x7fELF\x00\x00\x01" * 100)
    truncated = tmp_path / "cut.log.gz"
    data = gzip.compress(OOM.encode() * 5000)
    truncated.write_bytes(data[: len(data) // 2])
    return {
        "empty": (str(empty), "is empty"),
        "binary": (str(binary), "binary"),
        "directory": (str(tmp_path), "is a directory"),
        "missing": (str(tmp_path / "nope.log"), "no such file"),
        "truncated-gzip": (str(truncated), "truncated"),
    }


@pytest.mark.parametrize("case", ["empty", "binary", "directory", "missing", "truncated-gzip"])
def test_bad_input_one_line_exit_3(tmp_path, capsys, case):
    path, message = _bad_inputs(tmp_path)[case]
    code, out, err = run(capsys, "diagnose", path)
    assert code == 3
    assert out == ""
    first, *rest = err.strip().splitlines()
    assert first.startswith("faultlens: error: ") and message in first
    assert all(line.startswith("Tip: ") for line in rest)
    assert "Traceback" not in err


def test_invalid_utf8_is_diagnosed_with_a_warning(tmp_path, capsys):
    log = tmp_path / "latin1.log"
    log.write_bytes(b"caf\xe9 \xff\xfe\n" + b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate \xe9\n")
    code, out, err = run(capsys, "diagnose", str(log))
    assert code == 0 and "demo-oom" in out
    assert "not valid UTF-8" in err


def test_huge_single_line(tmp_path, capsys):
    log = tmp_path / "oneline.log"
    with open(log, "wb") as fh:
        block = b"x" * (1 << 20)
        for _ in range(200):
            fh.write(block)
        fh.write(b" " + OOM.encode())
    code, out, err = run(capsys, "diagnose", str(log))
    assert code == 0
    assert "demo-oom" in out
    assert "were split" in err


def test_usage_errors(capsys):
    assert run(capsys, "diagnose", "--top", "0", "x.log")[0] == 2
    code, out, err = run(capsys, "diagnose", "--format", "yaml", "x.log")
    assert code == 2 and out == ""
    assert "--format" in err and "invalid choice: 'yaml'" in err and "Traceback" not in err
    assert run(capsys)[0] == 2


def test_bad_env_snapshot(tmp_path, capsys):
    log = tmp_path / "a.log"
    log.write_text(OOM)
    env = tmp_path / "env.json"
    env.write_text("{not json")
    code, _, err = run(capsys, "diagnose", "--env", str(env), str(log))
    assert code == 3 and "environment snapshot" in err


def test_env_snapshot_facts_are_used(tmp_path, capsys):
    log = tmp_path / "a.log"
    log.write_text("RuntimeError: indices should be either on cpu or on the same device\n"
                   '  File "/x/emulation_utils.py", line 3, in f\n')
    env = tmp_path / "env.json"
    env.write_text(json.dumps({"facts": {"gpu.compute_capability": "9.0"}}))
    code, out, _ = run(capsys, "diagnose", "--json", "--env", str(env), str(log))
    checks = {c["id"]: c["status"] for c in json.loads(out)["diagnoses"][0]["checks"]}
    assert checks["old-gpu"] == "pass"


def test_invalid_catalogue_exit_4(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "cat" / "x" / "bad-ref"
    bad.mkdir(parents=True)
    (bad / "reference.yaml").write_text("id: bad-ref\ntitle: [unclosed\n")
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(tmp_path / "cat"))
    log = tmp_path / "a.log"
    log.write_text(OOM)
    code, _, err = run(capsys, "diagnose", str(log))
    assert code == 4 and "not valid YAML" in err


def test_refs_commands(capsys):
    code, out, _ = run(capsys, "refs", "list", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["id"] for r in rows} >= {"demo-oom", "demo-watchdog"}
    assert all(set(r) >= {"id", "title", "category", "severity"} for r in rows)
    code, out, _ = run(capsys, "refs", "show", "demo-watchdog")
    assert code == 0 and "Fingerprint" in out and "consequence" in out
    code, _, err = run(capsys, "refs", "show", "demo-watchdg")
    assert code == 2 and "did you mean" in err
    code, out, _ = run(capsys, "refs", "search", "Watchdog caught collective operation timeout")
    assert out.splitlines()[0].startswith("demo-watchdog")
    code, out, _ = run(capsys, "refs", "patterns")
    assert "CUDA out of memory\\. Tried to allocate" in out.splitlines()
    code, out, _ = run(capsys, "refs", "patterns", "--json")
    assert {"id": "demo-oom", "signal": "oom", "regex": "CUDA out of memory\\. Tried to allocate"} in json.loads(out)


def test_refs_new_scaffold_fails_lint_until_filled(tmp_path, capsys, monkeypatch):
    import shutil
    cat = tmp_path / "cat"
    shutil.copytree(DATA / "catalogue", cat)
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(cat))
    code, out, _ = run(capsys, "refs", "new", "nccl-ib-timeout", "--category", "distributed")
    assert code == 0 and (cat / "distributed" / "nccl-ib-timeout" / "reference.yaml").is_file()
    code, _, err = run(capsys, "refs", "new", "nccl-ib-timeout", "--category", "distributed")
    assert code == 2 and "already exists" in err
    code, out, _ = run(capsys, "lint", "--no-examples")
    assert code == 1 and "FILL IN" in out


def test_console_script_and_module(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(OOM)
    env = {"FAULTLENS_CATALOGUE": str(DATA / "catalogue"), "PATH": "/usr/bin:/bin",
           "FAULTLENS_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "faultlens", "diagnose", "--json", str(log)],
                         capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT / "src")})
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["diagnoses"][0]["id"] == "demo-oom"
    res = subprocess.run([sys.executable, "-m", "faultlens", "diagnose", str(tmp_path / "missing.log")],
                         capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT / "src")})
    assert res.returncode == 3 and res.stderr.startswith("faultlens: error:")


def test_only_the_named_command_is_built_and_every_command_still_parses(capsys):
    """build_parser(argv) builds the named sub-command in full and only the name and help line
    of the others: the top-level help and the unknown-command error still list every command,
    and each command's own --help works."""
    from faultlens.cli import build_parser

    full = build_parser()
    names = list(full._subparsers._group_actions[0].choices)
    assert {"diagnose", "refs", "lint", "eval", "origin", "serve", "scan"} <= set(names)
    for argv in (["diagnose", "x.log"], ["--catalogue", "diagnose", "refs", "list"]):
        p = build_parser(argv)
        assert list(p._subparsers._group_actions[0].choices) == names
    assert build_parser(["diagnose", "x.log"]).format_help() == full.format_help()
    args = build_parser(["diagnose", "--top", "2", "x.log"]).parse_args(["diagnose", "--top", "2", "x.log"])
    assert args.top == 2 and args.files == ["x.log"]
    for name in names:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0, name
        assert f"usage: faultlens {name}" in capsys.readouterr().out
    code, _out, err = run(capsys, "no-such-command")
    assert code == 2 and all(f"'{n}'" in err for n in names)
