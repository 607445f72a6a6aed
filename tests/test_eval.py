"""The labelled corpus of real public logs, through `faultlens eval`, with the README's thresholds."""

import json

from conftest import DATA, ROOT
from faultlens import evaluation
from faultlens.api import diagnose
from faultlens.cli import main

MIN_TOP1 = 0.85  # over the entries whose reference exists (0.856 measured 2026-12-01, 558 entries)
MIN_ANSWER_RATE = 0.9  # failure logs that get a diagnosis or their failing line named (0.919)
MAX_FALSE_ALARMS = 0


def test_corpus_meets_thresholds(capsys):
    code = main(["eval", str(ROOT / "corpus"), "--json", "--min-top1", str(MIN_TOP1),
                 "--min-answer-rate", str(MIN_ANSWER_RATE),
                 "--max-false-alarms", str(MAX_FALSE_ALARMS)])
    data = json.loads(capsys.readouterr().out)
    assert data["entries"] >= 25
    wrong = [o for o in data["outcomes"] if not o["top1"]]
    assert code == 0, f"top-1 {data['top1']}, false alarms {data['false_alarms']}, wrong: {wrong}"


def test_corpus_entries_cite_sources():
    for entry in evaluation.load_corpus(ROOT / "corpus"):
        assert entry.source.startswith("https://"), entry.name


def test_eval_counts_false_alarms_and_confusions(tmp_path, demo_scanner):
    (tmp_path / "ok.log").write_text("all fine\n")
    (tmp_path / "ok.yaml").write_text("expect: none\nsource: synthetic\n")
    (tmp_path / "alarm.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "alarm.yaml").write_text("expect: none\nsource: synthetic\n")
    (tmp_path / "conf.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "conf.yaml").write_text("expect: demo-watchdog\nsource: synthetic\n")
    (tmp_path / "hit.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "hit.yaml").write_text("expect: demo-oom\nsource: synthetic\n")
    summary = evaluation.run(tmp_path, lambda f: diagnose(f, scanner=demo_scanner))
    data = summary.as_dict()
    assert data["false_alarms"] == ["alarm"]
    assert data["top1"] == 0.5
    assert data["confusions"] == [{"expected": "demo-watchdog", "got": "demo-oom", "count": 1}]
    assert data["per_reference"]["demo-oom"] == {"n": 1, "top1": 1, "top3": 1}


def test_eval_thresholds_set_exit_code(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    (tmp_path / "conf.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "conf.yaml").write_text("expect: demo-watchdog\nsource: synthetic\n")
    assert main(["eval", str(tmp_path), "--min-top1", "0.9"]) == 1
    assert main(["eval", str(tmp_path)]) == 0


def test_eval_answer_rate_status_and_failure_lines(tmp_path, demo_scanner):
    # answered by a diagnosis, answered by the failing line only, and an unknown class
    (tmp_path / "hit.log").write_text("step 1\nCUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "hit.yaml").write_text("expect: demo-oom\nsource: synthetic\nfailure_line: 2\n"
                                       "batch: b1\n")
    (tmp_path / "named.log").write_text("loading\nValueError: rope_scaling must have two fields\n")
    (tmp_path / "named.yaml").write_text("expect: rope-scaling-config\nsource: synthetic\n"
                                         "failure_line: 2\nbatch: b1\n")
    (tmp_path / "ok.log").write_text("all fine\n")
    (tmp_path / "ok.yaml").write_text("expect: none\nsource: synthetic\nbatch: b2\n")
    known = {r.id for r in demo_scanner.catalogue.references}
    summary = evaluation.run(tmp_path, lambda f: diagnose(f, scanner=demo_scanner), known=known)
    data = summary.as_dict()
    assert data["unreferenced"] == 1
    assert data["top1"] == 0.5 and data["top1_referenced"] == 1.0
    assert data["answer_rate"] == 1.0
    assert data["by_status"]["confirmed"] == {"n": 1, "top1": 1.0, "top3": 1.0}
    assert data["failure_lines"] == {"n": 2, "precision": 1.0, "recall": 1.0}
    assert data["batches"]["b1"]["entries"] == 2 and data["batches"]["b2"]["false_alarms"] == 0
    only = evaluation.run(tmp_path, lambda f: diagnose(f, scanner=demo_scanner), known=known,
                          batch="b2")
    assert [o.entry.name for o in only.outcomes] == ["ok"]


def test_first_sight_rows_are_appended_once_and_never_rewritten(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    (tmp_path / "README.md").write_text("# corpus\n\nAbout the corpus.\n")
    (tmp_path / "hit.log").write_text("CUDA out of memory. Tried to allocate 1 GiB\n")
    (tmp_path / "hit.yaml").write_text("expect: demo-oom\nsource: synthetic\nbatch: b1\n")
    (tmp_path / "ok.log").write_text("all fine\n")
    (tmp_path / "ok.yaml").write_text("expect: none\nsource: synthetic\nbatch: b2\n")
    assert main(["eval", str(tmp_path), "--batch", "b1", "--record-first-sight"]) == 0
    assert main(["eval", str(tmp_path), "--batch", "b2", "--record-first-sight"]) == 0
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("# corpus\n\nAbout the corpus.\n")
    rows = [ln for ln in text.splitlines() if ln.startswith("| 2")]
    assert [r.split("|")[2].strip() for r in rows] == ["b1", "b2"]
    assert main(["eval", str(tmp_path), "--batch", "b1", "--record-first-sight"]) == 2
    assert "already recorded" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text() == text


def _thread(url: str) -> str:
    """A source URL without its comment anchor or trailing slash: one public thread."""
    return url.split("#")[0].rstrip("/")


def _lines(path) -> set[str]:
    import gzip

    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return {ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()}


def _catalogue_examples():
    from faultlens import lint

    for log in sorted((ROOT / "catalogue").glob("*/*/examples/*.log*")):
        yield log, _thread(str(lint.read_sidecar(log).get("source") or ""))


def test_no_corpus_entry_uses_a_catalogue_example_thread():
    """The corpus measures first sight: a thread that is already a catalogue example is not new."""
    example_threads = {src for _, src in _catalogue_examples() if src.startswith("https://")}
    shared = sorted(e.name for e in evaluation.load_corpus(ROOT / "corpus")
                    if _thread(e.source) in example_threads)
    assert not shared, f"corpus entries whose thread is a catalogue example's source: {shared}"


def test_no_corpus_entry_copies_a_catalogue_example():
    """No corpus log whose lines all stand in one catalogue example from the same thread.

    Other threads may print the very same lines (a library's fixed warning text); the thread
    decides whether it is a copy.
    """
    from pathlib import Path

    examples = [(log, src, _lines(log)) for log, src in _catalogue_examples()]
    copies = []
    for entry in evaluation.load_corpus(ROOT / "corpus"):
        lines = set().union(*(_lines(Path(f)) for f in entry.files))
        for log, src, ex_lines in examples:
            if lines and lines <= ex_lines and src == _thread(entry.source):
                copies.append(f"{entry.name} = {log.relative_to(ROOT)}")
    assert not copies, copies
