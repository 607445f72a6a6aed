"""docs/coverage.md is what tools/coverage_table.py generates from docs/coverage-data/."""

import importlib.util
import sys

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("coverage_table", ROOT / "tools" / "coverage_table.py")
coverage_table = importlib.util.module_from_spec(_spec)
sys.modules["coverage_table"] = coverage_table  # dataclasses look their module up
_spec.loader.exec_module(coverage_table)

HEADER = "class\turl\tdate\tcomponent\ttitle\n"


def test_coverage_md_is_regenerated_from_the_data():
    assert (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8") == coverage_table.render(), \
        "docs/coverage.md is stale: run python tools/coverage_table.py"


def _catalogue(tmp_path, *ids):
    for ref_id in ids:
        folder = tmp_path / "catalogue" / "cuda" / ref_id
        folder.mkdir(parents=True)
        (folder / "reference.yaml").write_text(f"id: {ref_id}\n")
    return tmp_path / "catalogue"


def test_counts_dedupe_by_url_and_mark_coverage(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "threads-a.tsv").write_text(
        HEADER
        + "known-ref\thttps://github.com/o/r/issues/1\t2025-01-02\ttorch\tone\n"
        + "known-ref\thttps://github.com/o/r/issues/2\t2023-05-06\ttorch\ttwo\n"
        + "new-class\thttps://github.com/o/r/issues/3\t2024-07-08\tdeepspeed\tthree\n")
    (data / "threads-b.tsv").write_text(
        HEADER
        + "other-label\thttps://github.com/o/r/issues/1/\t2025-01-02\ttorch\tduplicate of one\n"
        + "new-class\thttps://github.com/o/r/issues/4\t\tdeepspeed\tno date\n")
    text = coverage_table.render(data, _catalogue(tmp_path, "known-ref"))
    assert "Counted threads: **4** (2 since 2024)" in text
    assert "Covered by a reference: **2 of 4 (50.0%)**; since 2024: **1 of 2 (50.0%)**" in text
    assert "| known-ref | 2 | 1 | torch (2) |" in text
    assert "| new-class | 2 | 1 | deepspeed (2) |" in text
    assert "other-label" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith(("| new-class", "| known-ref"))]
    assert lines[0].endswith("| `known-ref` |") and lines[1].endswith("| not yet |")
    assert coverage_table.summary(data, _catalogue(tmp_path / "again", "known-ref")) == (
        "Counted threads: **4**; covered by a reference: **50.0%** overall, **50.0%** of the 2 since 2024.")


def test_bad_header_is_one_clear_error(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "threads-x.tsv").write_text("url\tclass\n")
    with pytest.raises(ValueError, match="header must be"):
        coverage_table.render(data, _catalogue(tmp_path))


def test_readme_coverage_line_is_regenerated_from_the_data():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert coverage_table.README_START in readme
    assert coverage_table.with_readme_summary(readme, coverage_table.summary()) == readme, \
        "README coverage line is stale: run python tools/coverage_table.py"


def test_readme_summary_replaces_only_between_markers():
    text = "a\n<!-- coverage:start -->\nold\n<!-- coverage:end -->\nb\n"
    assert coverage_table.with_readme_summary(text, "new") == \
        "a\n<!-- coverage:start -->\nnew\n<!-- coverage:end -->\nb\n"
    assert coverage_table.with_readme_summary("no markers", "new") == "no markers"
