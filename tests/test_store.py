"""The incident store, on SQLite and on PostgreSQL ($FAULTLENS_TEST_PG_URL, provided by .ci/run),
and the agents' client."""

import json
import os
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from conftest import missing

from faultlens.render.json import report_dict
from faultlens.store import schema
from faultlens.store.client import incidents_url, read_tail
from faultlens.store.incidents import (
    IncidentFilter,
    IncidentStore,
    StoreError,
    cap_log,
)
from faultlens.store.paths import default_db_path, resolve_db_url

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
SECRETS = {
    "hf_abcdefghijklmnopqrstuvwxyz012345": "HF_TOKEN is hf_abcdefghijklmnopqrstuvwxyz012345",
    "AKIAABCDEFGHIJKLMNOP": "aws key AKIAABCDEFGHIJKLMNOP in use",
    "eyJhbGciOiJIUzI1NiJ9.payload.sig": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
    "hunter2secret": "cloning https://alice:hunter2secret@git.example.com/repo.git",
}
DAY = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        s = IncidentStore(str(tmp_path / "incidents.db"))
    else:
        url = os.environ.get("FAULTLENS_TEST_PG_URL")
        if not url:
            missing("PostgreSQL store tests need FAULTLENS_TEST_PG_URL, a database they may wipe "
                    "(.ci/run starts one)")
        s = IncidentStore(url)  # unreachable: StoreError, and the test fails
        schema.metadata.drop_all(s.engine)
        schema.metadata.create_all(s.engine)
    yield s
    s.close()


@pytest.fixture
def oom_report(demo):
    return report_dict(demo("step 1\n" + OOM))


@pytest.fixture
def healthy_report(demo):
    return report_dict(demo("step 1 loss 0.5\n"))


def test_add_and_get(store, oom_report):
    added = store.add_incident(oom_report, log="step 1\n" + OOM, host="node7", job="llama-70b",
                               source="run", created_at=DAY)
    got = store.get_incident(added.id)
    assert got == added
    assert (got.reference, got.host, got.job, got.source) == ("demo-oom", "node7", "llama-70b", "run")
    assert got.confidence == oom_report["diagnoses"][0]["confidence"]
    assert got.diagnosis == oom_report
    assert got.created_at == DAY and got.created_at.tzinfo is not None
    assert got.log == "step 1\n" + OOM and got.log_bytes == len(("step 1\n" + OOM).encode())
    assert store.get_incident(added.id + 1000) is None


def test_no_failure_has_no_reference(store, healthy_report):
    inc = store.add_incident(healthy_report, log="step 1 loss 0.5\n")
    assert inc.reference is None and inc.confidence is None


def test_secrets_are_redacted_before_storing(store, oom_report):
    log = "\n".join(SECRETS.values()) + "\n" + OOM
    # a report from an agent is not trusted to be redacted already
    oom_report["diagnoses"][0]["evidence"][0]["text"] += " hf_zyxwvutsrqponmlkjihgfedcba987"
    oom_report["input"]["facts"]["env.WANDB_API_KEY"] = "plainvalue123"
    inc = store.add_incident(oom_report, log=log, host="node1",
                             job="train --key hf_abcdefghijklmnopqrstuvwxyz012345")
    with store.engine.connect() as conn:
        raw = json.dumps([str(v) for v in conn.execute(sa.select(schema.incidents)).one()])
    for secret in [*SECRETS, "hf_zyxwvutsrqponmlkjihgfedcba987", "plainvalue123"]:
        assert secret not in raw
    assert inc.log.count("<redacted>") == len(SECRETS)
    assert inc.diagnosis["input"]["facts"]["env.WANDB_API_KEY"] == "<redacted>"
    assert inc.job == "train --key <redacted>" and inc.reference == "demo-oom"


def test_long_logs_keep_head_and_tail(tmp_path, oom_report):
    store = IncidentStore(str(tmp_path / "i.db"), max_log_bytes=2000)
    lines = [f"line {i:04d} " + "x" * 40 for i in range(200)]
    log = "\n".join(lines) + "\n"
    inc = store.add_incident(oom_report, log=log)
    assert inc.log_bytes == len(log)
    assert len(inc.log.encode()) < 2100
    assert inc.log.startswith("line 0000 ") and inc.log.endswith(lines[-1] + "\n")
    assert "bytes of the log not stored]" in inc.log
    assert all(ln.startswith(("line ", "[faultlens:")) for ln in inc.log.splitlines())


def test_cap_log_leaves_short_logs_alone():
    assert cap_log("a\nb\n", 10) == "a\nb\n"
    capped = cap_log("0123456789\n" * 10, 44)
    assert capped.startswith("0123456789\n") and capped.endswith("0123456789\n")
    assert "[faultlens: " in capped


def test_nul_characters_can_be_stored(store, oom_report):
    inc = store.add_incident(oom_report, log="before\x00after\n" + OOM, job="a\x00b")
    got = store.get_incident(inc.id)
    assert "\x00" not in got.log and got.log.startswith("before\ufffdafter")


def test_filters(store, oom_report, healthy_report):
    rows = [("node1", "a", "run", oom_report, DAY), ("node2", "a", "web", oom_report, DAY + timedelta(days=1)),
            ("node1", "b", "api", healthy_report, DAY + timedelta(days=2))]
    ids = [store.add_incident(r, host=h, job=j, source=s, created_at=t).id for h, j, s, r, t in rows]

    def listed(**kw):
        return [i.id for i in store.list_incidents(IncidentFilter(**kw))]

    assert listed() == ids[::-1]  # newest first
    assert listed(host="node1") == [ids[2], ids[0]]
    assert listed(job="a") == [ids[1], ids[0]]
    assert listed(reference="demo-oom") == [ids[1], ids[0]]
    assert listed(source="web") == [ids[1]]
    assert listed(since=DAY + timedelta(hours=1)) == [ids[2], ids[1]]
    assert listed(until=DAY + timedelta(days=1)) == [ids[0]]
    assert listed(limit=1, offset=1) == [ids[1]]
    summary = store.list_incidents(IncidentFilter(limit=1))[0]
    assert not hasattr(summary, "log") and summary.log_bytes == 0


def test_counts_per_reference_per_day(store, oom_report, healthy_report):
    for offset, report, host in [(0, oom_report, "n1"), (0, oom_report, "n2"), (1, oom_report, "n1"),
                                 (1, healthy_report, "n1"), (26 / 24, oom_report, "n1")]:
        store.add_incident(report, host=host, created_at=DAY + timedelta(days=offset))
    got = [(c.day, c.reference, c.count) for c in store.counts()]
    assert got == [("2026-03-01", "demo-oom", 2), ("2026-03-02", None, 1), ("2026-03-02", "demo-oom", 2)]
    by_host = [(c.day, c.reference, c.count) for c in store.counts(IncidentFilter(host="n2"))]
    assert by_host == [("2026-03-01", "demo-oom", 1)]


def test_unknown_source_is_refused(store, oom_report):
    with pytest.raises(ValueError, match="source must be one of"):
        store.add_incident(oom_report, source="email")


def test_sqlite_store_uses_wal(tmp_path):
    store = IncidentStore(str(tmp_path / "deep" / "i.db"))
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_unreachable_store_is_a_clear_error_without_the_password():
    with pytest.raises(StoreError) as info:
        IncidentStore("postgresql://alice:pw-s3cret@127.0.0.1:1/nothing")
    assert "cannot open the incident store" in str(info.value)
    assert "pw-s3cret" not in str(info.value) and info.value.tip


def test_store_location(monkeypatch, tmp_path):
    monkeypatch.delenv("FAULTLENS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "faultlens" / "incidents.db"
    assert resolve_db_url() == f"sqlite:///{tmp_path}/faultlens/incidents.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert str(default_db_path()).endswith(".local/share/faultlens/incidents.db")
    monkeypatch.setenv("FAULTLENS_DB", "/srv/fl.db")
    assert resolve_db_url() == "sqlite:////srv/fl.db"
    assert resolve_db_url("postgresql://u@db/fl") == "postgresql+psycopg://u@db/fl"
    assert resolve_db_url("postgres://u@db/fl") == "postgresql+psycopg://u@db/fl"
    assert resolve_db_url("sqlite:///x.db") == "sqlite:///x.db"


def test_client_url_and_log_tail(tmp_path):
    assert incidents_url("http://h:8000") == "http://h:8000/api/v1/incidents"
    assert incidents_url("http://h:8000/api/v1/incidents/") == "http://h:8000/api/v1/incidents"
    log = tmp_path / "run.log"
    log.write_text("".join(f"line {i}\n" for i in range(1000)))
    tail = read_tail(log, limit=100)
    assert tail.startswith("line ") and tail.endswith("line 999\n") and len(tail) <= 100
    assert read_tail(tmp_path / "absent.log") == ""
