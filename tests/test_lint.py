"""`faultlens lint` catches what it promises to, with messages that say how to fix."""

import shutil

import pytest

from conftest import DATA
from faultlens import lint
from faultlens.api import diagnose
from faultlens.engine.compile import build
from faultlens import catalogue as catalogue_mod


@pytest.fixture
def cat(tmp_path):
    root = tmp_path / "catalogue"
    shutil.copytree(DATA / "catalogue", root)
    return root


def messages(root):
    problems, _ = lint.check_files(root)
    return [f"{p.where}: {p.message}" for p in problems if p.level == "error"]


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_clean_catalogue(cat):
    assert messages(cat) == []


def test_missing_sources_says_how_to_fix(cat):
    ref = cat / "memory" / "demo-oom" / "reference.yaml"
    text = ref.read_text()
    ref.write_text(text[: text.index("sources:")])
    assert any("add a field called 'sources' with at least one https:// URL" in m for m in messages(cat))


def test_regex_that_hyperscan_rejects(cat):
    edit(cat / "memory" / "demo-oom" / "reference.yaml", "CUDA out of memory\\. Tried",
         "(?<=CUDA )out of memory\\. Tried")
    assert any("Hyperscan cannot compile" in m for m in messages(cat))


def test_regex_matching_empty_line(cat):
    edit(cat / "memory" / "demo-oom" / "reference.yaml", "'CUDA out of memory\\. Tried to allocate'",
         "'(CUDA)?'")
    assert any("matches an empty line" in m for m in messages(cat))


def test_folder_must_equal_id_and_category(cat):
    shutil.move(cat / "memory" / "demo-oom", cat / "demo" / "demo-oom-renamed")
    found = messages(cat)
    assert any("differs from its folder" in m for m in found)
    assert any("differs from the parent folder" in m for m in found)


def test_duplicate_ids(cat):
    shutil.copytree(cat / "memory" / "demo-oom", cat / "demo" / "demo-oom")
    edit(cat / "demo" / "demo-oom" / "reference.yaml", "category: memory", "category: demo")
    assert any("already used" in m for m in messages(cat))


def test_unknown_sibling_and_planned_sibling(cat):
    edit(cat / "distributed" / "demo-watchdog" / "reference.yaml", "downstream_of: [demo-oom]",
         "downstream_of: [demo-oom, not-a-ref, later-ref]")
    (cat / "planned.txt").write_text("later-ref\tcatalogue-9\n")
    problems, _ = lint.check_files(cat)
    errors = [p.message for p in problems if p.level == "error"]
    warnings = [p.message for p in problems if p.level == "warning"]
    assert any("'not-a-ref' is not a reference" in m for m in errors)
    assert any("'later-ref' is planned" in m for m in warnings)


def test_undefined_signal_name(cat):
    edit(cat / "memory" / "demo-oom" / "reference.yaml", "all: [oom]", "all: [oom, ghost]")
    assert any("'ghost' is not a signal" in m for m in messages(cat))


def test_examples_must_behave(cat):
    ex = cat / "memory" / "demo-oom" / "examples"
    ex.mkdir()
    (ex / "match-ok.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (ex / "match-ok.yaml").write_text("source: synthetic\n")
    (ex / "match-wrong.log").write_text("nothing here\n")
    (ex / "nomatch-wrong.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    scanner = build(catalogue_mod.load(cat))
    refs = [r for r in scanner.catalogue.references if r.id == "demo-oom"]
    problems = lint.check_examples(refs, lambda p, f: diagnose(p, env=f, scanner=scanner))
    text = "\n".join(f"{p.where}: {p.message}" for p in problems)
    assert "match-wrong.log: must rank demo-oom first, but got nothing" in text
    assert "nomatch-wrong.log: must not rank demo-oom first" in text
    assert "add match-wrong.yaml with 'source:'" in text
    assert "match-ok.log" not in text


def _nomatch_problems(cat, log_text, sidecar_text):
    ex = cat / "memory" / "demo-oom" / "examples"
    ex.mkdir(exist_ok=True)
    (ex / "match-ok.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (ex / "match-ok.yaml").write_text("source: synthetic\n")
    (ex / "nomatch-x.log").write_text(log_text)
    (ex / "nomatch-x.yaml").write_text(sidecar_text)
    scanner = build(catalogue_mod.load(cat))
    refs = [r for r in scanner.catalogue.references if r.id == "demo-oom"]
    ids = [r.id for r in scanner.catalogue.references]
    problems = lint.check_examples(refs, lambda p, f: diagnose(p, env=f, scanner=scanner), all_ids=ids)
    return [p.message for p in problems if "nomatch-x.log" in p.where]


WATCHDOG = "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)\n"


def test_nomatch_must_name_its_winner(cat):
    found = _nomatch_problems(cat, WATCHDOG, "source: synthetic\n")
    assert any("add `winner: <id>`" in m and "must rank first on this near-miss" in m for m in found)


def test_nomatch_winner_must_rank_first(cat):
    assert _nomatch_problems(cat, WATCHDOG, "source: synthetic\nwinner: demo-watchdog\n") == []
    found = _nomatch_problems(cat, WATCHDOG, "source: synthetic\nwinner: demo-wrapper\n")
    assert any("winner: demo-wrapper must rank first on this near-miss, but got demo-watchdog" in m
               for m in found)
    found = _nomatch_problems(cat, WATCHDOG, "source: synthetic\nwinner: no-such-ref\n")
    assert any("'no-such-ref' is not a reference" in m for m in found)
    found = _nomatch_problems(cat, WATCHDOG, "source: synthetic\nwinner: none\n")
    assert any("winner: none, but demo-watchdog is diagnosed" in m for m in found)
    assert _nomatch_problems(cat, "step 1 loss 0.5\n", "source: synthetic\nwinner: none\n") == []


def test_unexplained_nomatch_is_asserted_and_warned(cat):
    found = _nomatch_problems(cat, "Segmentation fault (core dumped)\n",
                              "source: synthetic\nwinner: unexplained\n")
    assert any("needs `unexplained: <class-id>`" in m for m in found)
    found = _nomatch_problems(cat, "Segmentation fault (core dumped)\n",
                              "source: synthetic\nwinner: unexplained\nunexplained: native-segfault\n")
    assert len(found) == 1 and "not a near-miss yet" in found[0] and "'native-segfault'" in found[0]
    found = _nomatch_problems(cat, WATCHDOG, "source: synthetic\nwinner: unexplained\n"
                                             "unexplained: native-segfault\n")
    assert any("winner: unexplained, but demo-watchdog is diagnosed" in m for m in found)


def test_claimed_variant_must_be_the_diagnosed_one(cat):
    ex = cat / "demo" / "demo-specific-index" / "examples"
    ex.mkdir()
    log = ("Using 'EMULATION' backend\nVLLM_BATCH_INVARIANT=1\n"
           "RuntimeError: indices should be either on cpu or on the same device\n")
    (ex / "match-invariant.log").write_text(log)
    (ex / "match-invariant.yaml").write_text("source: synthetic\nvariant: batch-invariant\n")
    (ex / "match-claims-other.log").write_text(log)
    (ex / "match-claims-other.yaml").write_text("source: synthetic\nvariant: no-native\n")
    (ex / "match-claims-ghost.log").write_text(log)
    (ex / "match-claims-ghost.yaml").write_text("source: synthetic\nvariant: ghost\n")
    scanner = build(catalogue_mod.load(cat))
    refs = [r for r in scanner.catalogue.references if r.id == "demo-specific-index"]
    problems = lint.check_examples(refs, lambda p, f: diagnose(p, env=f, scanner=scanner))
    text = "\n".join(f"{p.where}: {p.message}" for p in problems)
    assert "match-invariant.log" not in text
    assert "match-claims-other.log: variant: no-native claimed, but the diagnosis names batch-invariant" in text
    assert "match-claims-ghost.log: variant: 'ghost' is not a variant of demo-specific-index" in text


def test_baseline_failure_is_reported(cat, tmp_path):
    base = tmp_path / "baseline"
    base.mkdir()
    (base / "healthy.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (base / "healthy.yaml").write_text("source: synthetic\n")
    scanner = build(catalogue_mod.load(cat))
    problems = lint.check_baseline(base, lambda p, f: diagnose(p, env=f, scanner=scanner))
    assert any("diagnosed as failure demo-oom" in p.message for p in problems)
