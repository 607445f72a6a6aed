"""The cached catalogue is unpickled reference by reference, and only the references a log can
rank are evaluated: the diagnosis must be exactly the one that evaluating every reference gives."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

from faultlens import api
from faultlens import catalogue as catalogue_mod
from faultlens.engine import compile as compile_mod
from faultlens.engine.differential import LineOrder, diagnose as rank
from faultlens.engine.score import evaluate
from faultlens.engine.structure import observe

ROOT = Path(__file__).resolve().parent.parent


def test_a_pickled_catalogue_unpickles_only_what_is_asked(real_scanner):
    cat = pickle.loads(pickle.dumps(real_scanner.catalogue))
    assert len(cat) == len(real_scanner.catalogue) and cat.ids == real_scanner.catalogue.ids
    assert cat.digest == real_scanner.catalogue.digest
    assert not cat._refs  # nothing unpickled yet
    ref_id = cat.ids[3]
    assert cat.get(ref_id) == real_scanner.catalogue.get(ref_id)
    assert list(cat._refs) == [ref_id]
    assert cat.get("no-such-reference") is None
    assert cat.references == real_scanner.catalogue.references
    # pickled again after partial use: nothing is lost
    again = pickle.loads(pickle.dumps(cat))
    assert again.references == real_scanner.catalogue.references


def test_a_warm_diagnosis_evaluates_only_references_with_lines(real_scanner):
    scanner = pickle.loads(pickle.dumps(real_scanner))
    report = api.diagnose(str(ROOT / "examples" / "vllm-nvfp4-emulation-crash.log"), scanner=scanner,
                          origins=False)
    assert report.diagnoses and report.reference_count == len(real_scanner.catalogue)
    assert 0 < len(scanner.catalogue._refs) < len(real_scanner.catalogue) / 4


def _every_match_example():
    for ref_dir in sorted((ROOT / "catalogue").glob("*/*")):
        yield from sorted((ref_dir / "examples").glob("match-*.log"))


def test_only_lines_and_siblings_rank_exactly_like_every_reference(real_scanner):
    """Over every match example: evaluating the references with a line in the log (and the
    siblings of those that match) ranks exactly as evaluating the whole catalogue."""
    paths = list(_every_match_example())
    assert len(paths) > 500
    for path in paths:
        scans = [api._scan_one(real_scanner, str(path), str(path), None)]
        obs = observe(real_scanner, scans)
        order = LineOrder(obs, [])
        every = rank([evaluate(r, obs, order) for r in real_scanner.catalogue.references], obs)
        obs = observe(real_scanner, scans)
        few = rank(api._candidates(real_scanner.catalogue, obs, LineOrder(obs, [])), obs)
        assert few == every, path


def test_the_cache_key_follows_every_reference_file(tmp_path):
    root = tmp_path / "catalogue"
    shutil.copytree(ROOT / "tests" / "data" / "catalogue", root)
    before = compile_mod._cache_key(root)
    assert compile_mod._cache_key(root) == before
    ref = sorted(root.glob("*/*/reference.yaml"))[0]
    ref.write_text(ref.read_text() + "\n")
    assert compile_mod._cache_key(root) != before
    changed = compile_mod._cache_key(root)
    st = ref.stat()
    os.utime(ref, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched, same content
    assert compile_mod._cache_key(root) != changed
    new = root / ref.parent.parent.name / "zz-new-reference"
    shutil.copytree(ref.parent, new)
    assert compile_mod._cache_key(root) not in (before, changed)


def test_the_cache_key_of_a_missing_catalogue_is_a_clear_error(tmp_path):
    import pytest

    from faultlens.errors import CatalogueError

    with pytest.raises(CatalogueError, match="catalogue folder not found"):
        catalogue_mod.stat_signature(tmp_path / "nowhere")
