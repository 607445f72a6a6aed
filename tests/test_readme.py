"""The README's promises: two set-up commands first, CI runs the second, the --help block is current."""

import re
import subprocess
import sys

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_opens_with_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert README.index("```bash") < README.index("\n## ")
    assert len(first_block) == 2
    assert "faultlens diagnose examples/" in first_block[0]
    assert (ROOT / first_block[0].split("diagnose ")[1].strip()).is_file()
    assert "pytest" in first_block[1]


def test_ci_runs_the_readme_test_command():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert first_block[1] in (ROOT / ".ci" / "run").read_text()


def test_help_block_matches_the_real_output():
    block = re.search(r"<!-- help:start -->\n```\n(.*?)```\n<!-- help:end -->", README, re.S).group(1)
    real = subprocess.run([sys.executable, "-m", "faultlens", "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "100", "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(ROOT / "src")}).stdout
    assert block == real, "regenerate the README block with: COLUMNS=100 faultlens --help"
