"""`faultlens serve`: pages, the HTTP API, the one error shape, security, and the agents' --post.

Most tests drive the app in-process (fastapi.testclient) on the demo catalogue; the agent tests
run a real server."""

import bz2
import gzip
import json
import re
import subprocess
import sys
import urllib.request

import pytest
from conftest import DATA, ROOT
from fastapi.testclient import TestClient
from markupsafe import escape
from live_server import server_env, serving

from faultlens.cli import main
from faultlens.web.app import create_app

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
NVFP4 = ("INFO start\n"
         "Using 'EMULATION' backend\n"
         "loading weights\n"
         '  File "/x/emulation_utils.py", line 38, in break_fp4_bytes\n'
         "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor\n"
         "shutting down\n")
SECRETS = ["hf_abcdefghijklmnopqrstuvwxyz012345", "AKIAABCDEFGHIJKLMNOP",
           "eyJhbGciOiJIUzI1NiJ9.payload.sig", "hunter2secret"]
SECRET_LOG = ("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345\n"
              "aws AKIAABCDEFGHIJKLMNOP\n"
              "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig'\n"
              "git clone https://alice:hunter2secret@git.example.com/r.git\n"
              + OOM.rstrip() + " (token hf_abcdefghijklmnopqrstuvwxyz012345)\n")
HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def make_client(tmp_path):
    def make(**kw):
        app = create_app(str(tmp_path / "incidents.db"), catalogue=DATA / "catalogue", **kw)
        return TestClient(app)
    return make


@pytest.fixture
def client(make_client):
    return make_client()


def text_post(client, path, body, **kw):
    return client.post(path, content=body, headers={"content-type": "text/plain"}, **kw)


def assert_error(resp, status, code):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["message"]


# --- pages ---------------------------------------------------------------------------------------

def test_home_lists_categories_with_counts(client):
    html = client.get("/").text
    for name, count in [("demo", 5), ("distributed", 2), ("memory", 1)]:
        assert f'<a href="/categories/{name}">{name}</a> <span class="count">{count}</span>' in html
    assert 'action="/search"' in html


def test_search_page_by_words_and_by_pasted_error_line(client):
    html = client.get("/search", params={"q": "out of memory"}).text
    assert 'href="/references/demo-oom"' in html
    line = "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor"
    html = client.get("/search", params={"q": line}).text
    assert 'href="/references/demo-generic-index"' in html and 'href="/references/demo-specific-index"' in html
    assert "No reference matches" in client.get("/search", params={"q": "zzzqqq"}).text


def test_category_page(client):
    html = client.get("/categories/memory").text
    assert 'href="/references/demo-oom"' in html and "demo-watchdog" not in html
    assert_error(client.get("/categories/nothing"), 404, "not_found")


def test_reference_page_shows_every_field(client):
    resp = client.get("/references/demo-specific-index")
    assert resp.status_code == 200
    html = resp.text
    for text in ["wins over demo-generic-index only when",          # summary
                 "Requires the generic message plus one piece",      # mechanism
                 "the RuntimeError plus an emulation frame",         # symptoms
                 "tests only",                                       # affects
                 "requires all of", "and at least one of", "supported by", "in this order",
                 "indices should be either on cpu or on the same device",   # a signal's pattern
                 "the emulation helper frame", "traceback frame",    # explain, kind
                 "gpu.compute_capability &lt; 10.0",                 # environment fact
                 "The emulation backend was selected at start-up.", "fails when absent",
                 "by hand: run it on a B200",                        # a manual check's how
                 "Restore an accelerated backend.",                  # fix
                 "Triggered by batch-invariant mode", "Unset VLLM_BATCH_INVARIANT and restart.",
                 "The generic one has no emulation context.",        # sibling's distinguishing evidence
                 "https://github.com/vllm-project/vllm/issues/52407"]:
        assert text in html, text
    assert '<a href="/references/demo-generic-index">demo-generic-index</a>' in html


def test_reference_page_on_the_real_catalogue(tmp_path):
    """Smoke test: every real reference renders; examples carry their source URLs; fix in order."""
    from markupsafe import escape

    from faultlens.lint import example_files, read_sidecar

    client = TestClient(create_app(str(tmp_path / "i.db"), catalogue=ROOT / "catalogue"))
    refs = client.app.state.faultlens.catalogue.references
    for ref in refs:
        assert client.get(f"/references/{ref.id}").status_code == 200, ref.id
    ref = next(r for r in refs if r.fix[1:] and any(
        str(read_sidecar(p).get("source", "")).startswith("https://") for p in example_files(r.path)[0]))
    html = client.get(f"/references/{ref.id}").text
    source = next(str(read_sidecar(p)["source"]) for p in example_files(ref.path)[0]
                  if str(read_sidecar(p).get("source", "")).startswith("https://"))
    assert f'href="{source}"' in html and '<span class="badge badge-match">match</span>' in html
    positions = [html.index(str(escape(f.do))) for f in ref.fix]
    assert positions == sorted(positions)


def test_diagnose_page_shows_the_differential(client):
    resp = client.post("/diagnose", data={"text": NVFP4, "save": "1", "host": "n1", "job": "j1"})
    assert resp.status_code == 200
    html = resp.text
    first, second = html.index("<strong>demo-specific-index</strong>"), html.index("<strong>demo-generic-index</strong>")
    assert first < second  # ranked
    assert '<tr class="hit"><td class="ln">5</td>' in html  # the error line, numbered
    assert '<td class="ln">3</td>' in html                  # context around the evidence
    assert "<mark>indices should be either on cpu or on the same device</mark>" in html
    assert '<span class="mark" title="pass">✓</span>' in html
    assert '<span class="mark" title="unknown">?</span>' in html
    assert "Why not" in html and 'href="/references/demo-generic-index"' in html
    assert "Restore an accelerated backend." in html
    assert 'href="/references/demo-specific-index"' in html
    assert re.search(r'Saved as <a href="/incidents/\d+">incident \d+</a>', html)


def test_diagnose_page_accepts_a_gzipped_file(client):
    resp = client.post("/diagnose", files={"file": ("rank3.log.gz", gzip.compress(OOM.encode()))},
                       data={"text": ""})
    assert resp.status_code == 200
    assert "<strong>demo-oom</strong>" in resp.text and "rank3.log.gz (1 line, gzip)" in resp.text


def test_diagnose_page_without_a_log(client):
    assert_error(client.post("/diagnose", data={"text": "  "}), 422, "empty_log")
    html = client.post("/diagnose", data={"text": ""}, headers={"accept": "text/html"})
    # a browser gets the form again with a friendly message, not an error page
    assert html.status_code == 422 and "Paste a log into the box" in html.text
    assert '<form class="diagnose"' in html.text and "422 Unprocessable" not in html.text


def test_diagnose_redirects_to_a_permalink_that_keeps_the_log(client):
    resp = client.post("/diagnose", data={"text": NVFP4, "host": "n1"}, follow_redirects=False)
    assert resp.status_code == 303
    link = resp.headers["location"].split("#")[0]
    assert re.fullmatch(r"/d/[\w-]{8,}", link)
    page = client.get(link)
    assert page.status_code == 200
    html = page.text
    assert html.index('id="result"') < html.index('<form class="diagnose"')  # result first
    assert "<strong>demo-specific-index</strong>" in html
    assert str(escape(NVFP4.splitlines()[0])) in html.split("<textarea", 1)[1]  # the log kept
    assert 'value="n1"' in html
    assert client.get("/d/not-a-kept-result", headers={"accept": "text/html"}).status_code == 404


def test_the_kept_log_is_redacted(client):
    secret = "hf_abcdefghijklmnopqrstuvwxyz0123"
    resp = client.post("/diagnose", data={"text": f"HF_TOKEN={secret}\n{OOM}"})
    assert resp.status_code == 200 and secret not in resp.text


def test_evidence_context_merges_windows_and_marks_the_match():
    from types import SimpleNamespace

    from faultlens.web.evidence import LogLines, display_line, evidence_context, shown_lines

    diagnosis = {"id": "x", "evidence": [{"file": "f", "line": n, "signal": "s"} for n in (3, 5, 11)]
                 + [{"file": "other.log", "line": 1, "signal": "s"}]}
    lines = LogLines(b"a\nb\nERR one\nc\nERR two\nd\ne\nf\ng\nh\nERR three\n",
                     shown_lines([diagnosis], "f"))
    refs = {"x": SimpleNamespace(signals={"s": SimpleNamespace(regex=r"ERR \w+")})}
    blocks = evidence_context(lines, "f", diagnosis, refs)
    assert [[ln.number for ln in b] for b in blocks] == [[1, 2, 3, 4, 5, 6, 7], [9, 10, 11]]
    assert [ln.number for b in blocks for ln in b if ln.hit] == [3, 5, 11]
    assert blocks[0][2].parts == (("ERR one", True),) and blocks[0][3].parts == (("c", False),)
    line = b"\x1b[31mstep\x1b[0m 10%\r 50%\r100% token hf_abcdefghijklmnopqrstuvwxyz\r"
    assert display_line(line) == "100% token <redacted>"


# --- API -----------------------------------------------------------------------------------------

def test_api_references_are_what_the_cli_prints(client, capsys, monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    main(["refs", "list", "--json"])
    listed = json.loads(capsys.readouterr().out)
    assert sorted(client.get("/api/v1/references").json(), key=lambda r: r["id"]) == \
        sorted(listed, key=lambda r: r["id"])
    main(["refs", "show", "demo-specific-index", "--json"])
    assert client.get("/api/v1/references/demo-specific-index").json() == json.loads(capsys.readouterr().out)
    assert [r["id"] for r in client.get("/api/v1/references", params={"category": "memory"}).json()] == ["demo-oom"]


def test_api_search(client):
    found = client.get("/api/v1/search", params={"q": "CUDA out of memory"}).json()
    assert found[0]["id"] == "demo-oom" and found[0]["score"] > 0


def test_api_diagnose_returns_the_cli_json_contract(client, capsys, monkeypatch, tmp_path):
    log = tmp_path / "job.log"
    log.write_text(NVFP4)
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    main(["diagnose", "--json", str(log)])
    expected = json.loads(capsys.readouterr().out.replace(str(log), "<text>"))  # the name differs
    resp = text_post(client, "/api/v1/diagnose", NVFP4, params={"store": "false"})
    assert resp.status_code == 200 and resp.json() == expected
    assert "x-faultlens-incident" not in resp.headers and "incident" not in resp.json()


def test_api_diagnose_file_upload_and_gzip(client):
    resp = client.post("/api/v1/diagnose", files={"file": ("a.log", OOM.encode())})
    assert resp.json()["diagnoses"][0]["id"] == "demo-oom"
    resp = client.post("/api/v1/diagnose", content=gzip.compress(OOM.encode()),
                       headers={"content-type": "application/gzip"})
    assert resp.json()["input"]["files"][0]["compression"] == "gzip"
    resp = client.post("/api/v1/diagnose", content=bz2.compress(OOM.encode()),
                       headers={"content-type": "application/octet-stream"})
    assert resp.json()["input"]["files"][0]["compression"] == "bzip2"
    assert_error(client.post("/api/v1/diagnose", content=b"BZh91AY&SY" + b"\0" * 20,
                             headers={"content-type": "application/octet-stream"}),
                 422, "unreadable_log")
    assert_error(client.post("/api/v1/diagnose", content=gzip.compress(OOM.encode())[:-12],
                             headers={"content-type": "application/gzip"}), 422, "unreadable_log")
    assert_error(text_post(client, "/api/v1/diagnose", "text\0\0\0binary\n"), 422, "unreadable_log")


def test_api_diagnose_stores_an_incident(client):
    resp = text_post(client, "/api/v1/diagnose", OOM, params={"host": "node7", "job": "llama"})
    incident_id = int(resp.headers["x-faultlens-incident"])
    body = resp.json()
    assert body.pop("incident") == {"id": incident_id, "url": f"/incidents/{incident_id}"}
    assert client.get(f"/incidents/{incident_id}").status_code == 200
    listed = client.get("/api/v1/incidents").json()["incidents"]
    assert [(i["id"], i["source"], i["host"], i["job"], i["reference"]) for i in listed] == \
        [(incident_id, "api", "node7", "llama", "demo-oom")]
    full = client.get(f"/api/v1/incidents/{incident_id}").json()
    assert full["diagnosis"] == body and full["log"] == OOM


def test_api_incidents_post_list_filter(client, demo):
    from faultlens.render.json import report_dict

    report = report_dict(demo(OOM))
    for host, job, source in [("n1", "a", "run"), ("n2", "b", "watch")]:
        resp = client.post("/api/v1/incidents", json={"host": host, "job": job, "source": source,
                                                      "report": report, "log": OOM})
        assert resp.status_code == 201 and resp.json()["url"] == f"/incidents/{resp.json()['id']}"

    def jobs(**params):
        return [i["job"] for i in client.get("/api/v1/incidents", params=params).json()["incidents"]]

    assert jobs() == ["b", "a"]
    assert jobs(host="n1") == ["a"] and jobs(source="watch") == ["b"] and jobs(reference="demo-oom") == ["b", "a"]
    assert jobs(since="2000-01-01T00:00:00Z", limit=1) == ["b"] and jobs(until="2000-01-01T00:00:00") == []
    assert_error(client.post("/api/v1/incidents", json={"report": {"schema": 9}}), 422, "invalid_request")
    assert_error(client.post("/api/v1/incidents", json={"report": report, "source": "email"}), 422, "invalid_request")
    assert_error(client.get("/api/v1/incidents/999"), 404, "not_found")


def test_incident_pages(client):
    text_post(client, "/api/v1/diagnose", OOM, params={"host": "node7", "job": "llama"})
    text_post(client, "/api/v1/diagnose", NVFP4, params={"host": "node8"})
    html = client.get("/incidents").text
    assert '<a href="/incidents?reference=demo-oom">demo-oom</a>' in html
    assert html.count('<a href="/incidents/') == 2
    html = client.get("/incidents", params={"host": "node7"}).text
    assert html.count('<a href="/incidents/') == 1 and "demo-specific-index" not in html
    page = client.get("/incidents/1").text
    assert "<strong>demo-oom</strong>" in page and "The stored log (redacted)" in page and "node7" in page
    assert_error(client.get("/incidents", params={"since": "yesterday"}), 422, "invalid_request")
    assert_error(client.get("/incidents/42"), 404, "not_found")


# --- one error shape -----------------------------------------------------------------------------

@pytest.mark.parametrize("method, path, kwargs, status, code", [
    ("get", "/api/v1/nothing", {}, 404, "not_found"),
    ("get", "/no/such/page", {}, 404, "not_found"),
    ("get", "/api/v1/references/no-such-id", {}, 404, "not_found"),
    ("get", "/references/no-such-id", {}, 404, "not_found"),
    ("get", "/api/v1/diagnose", {}, 405, "method_not_allowed"),
    ("delete", "/api/v1/references", {}, 405, "method_not_allowed"),
    ("post", "/api/v1/diagnose", {"content": b"x" * 3000, "headers": {"content-type": "text/plain"}}, 413, "too_large"),
    ("post", "/api/v1/diagnose", {"content": b"{}", "headers": {"content-type": "application/json"}}, 415, "unsupported_media_type"),
    ("get", "/api/v1/search", {}, 422, "invalid_request"),
    ("get", "/api/v1/search?q=x&limit=0", {}, 422, "invalid_request"),
    ("post", "/api/v1/incidents", {"content": b"not json", "headers": {"content-type": "application/json"}}, 422, "invalid_request"),
    ("post", "/api/v1/diagnose", {"content": b"", "headers": {"content-type": "text/plain"}}, 422, "empty_log"),
])
def test_every_error_has_one_json_shape(make_client, method, path, kwargs, status, code):
    client = make_client(max_upload_bytes=2000)
    assert_error(getattr(client, method)(path, **kwargs), status, code)


def test_unauthorised_write_has_the_error_shape(make_client):
    resp = make_client(token="s3cret").post("/api/v1/incidents", json={})
    assert_error(resp, 401, "unauthorized")
    assert resp.headers["www-authenticate"] == "Bearer"


def test_browsers_get_the_error_as_a_page(client):
    resp = client.get("/references/no-such-id", headers={"accept": "text/html"})
    assert resp.status_code == 404 and "<html" in resp.text and "no reference with id" in resp.text
    api = client.get("/api/v1/references/no-such-id", headers={"accept": "text/html"})
    assert api.json()["error"]["code"] == "not_found"


# --- security ------------------------------------------------------------------------------------

def test_html_in_a_log_is_shown_escaped_everywhere(client):
    log = f"{HOSTILE}\n{OOM.rstrip()} {HOSTILE}\n"
    pages = [client.post("/diagnose", data={"text": log, "save": "1", "host": HOSTILE, "job": HOSTILE}).text]
    pages += [client.get("/incidents").text, client.get("/incidents/1").text]
    for html in pages:
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    assert "<script>" not in client.get("/search", params={"q": HOSTILE}).text


def test_oversize_uploads_are_refused(make_client):
    client = make_client(max_upload_bytes=1000)
    big = (OOM * 40).encode()  # 2.8 kB
    message = assert_error(text_post(client, "/api/v1/diagnose", big), 413, "too_large")
    assert message == ("<text> is 2.8 kB; this server accepts logs up to 1000 bytes "
                       "(faultlens serve --max-upload-mb)")
    bomb = gzip.compress(b"x" * 200_000)  # 200 kB of log in a few hundred bytes
    assert len(bomb) < 1000
    message = assert_error(client.post("/api/v1/diagnose", content=bomb,
                                       headers={"content-type": "application/gzip"}), 413, "too_large")
    assert "after decompression" in message
    assert_error(client.post("/api/v1/diagnose", files={"file": ("big.log", big)}), 413, "too_large")
    html = client.post("/diagnose", data={"text": big.decode()}, headers={"accept": "text/html"})
    assert html.status_code == 413 and "--max-upload-mb" in html.text
    # a body larger than the transport limit, announced or streamed without a length
    huge = b"x" * (3 << 20)
    assert_error(text_post(client, "/api/v1/diagnose", huge), 413, "too_large")
    assert_error(client.post("/api/v1/diagnose", content=iter([huge[:1 << 20]] * 3),
                             headers={"content-type": "text/plain"}), 413, "too_large")
    assert_error(client.post("/api/v1/diagnose", files={"file": ("huge.log", huge)}), 413, "too_large")
    assert client.get("/api/v1/incidents").json()["incidents"] == []


def test_the_body_limit_stops_reading_at_the_limit(client):
    import asyncio

    from faultlens.web.errors import ApiError
    from faultlens.web.limits import BodyLimit

    assert BodyLimit in [m.cls for m in client.app.user_middleware]

    reads = 0

    async def receive():
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": b"x" * (1 << 20), "more_body": True}

    async def app(scope, receive, send):
        while True:
            await receive()

    limited = BodyLimit(app, max_log_bytes=1000)  # + 1 MiB for the form around the log
    with pytest.raises(ApiError) as info:
        asyncio.run(limited({"type": "http", "headers": []}, receive, None))
    assert info.value.status_code == 413 and reads == 2
    reads = 0
    with pytest.raises(ApiError):
        asyncio.run(limited({"type": "http", "headers": [(b"content-length", b"9000000")]}, receive, None))
    assert reads == 0  # announced too large: not a byte is read


@pytest.mark.parametrize("path", [
    "/references/..%2F..%2F..%2Fpyproject.toml", "/references/%2e%2e", "/references/../../pyproject.toml",
    "/api/v1/references/..%2Fmemory%2Fdemo-oom", "/api/v1/references/..%2F..%2Fetc%2Fpasswd",
    "/categories/..%2F..", "/static/..%2F..%2F..%2F..%2Fpyproject.toml", "/static/%2e%2e/app.py",
])
def test_no_path_traversal_through_ids(client, path):
    resp = client.get(path)
    assert resp.status_code == 404
    assert "[build-system]" not in resp.text and "create_app" not in resp.text and "root:" not in resp.text


def test_writes_need_the_token_when_the_server_has_one(make_client, demo):
    from faultlens.render.json import report_dict

    client = make_client(token="s3cret")
    body = {"host": "n1", "job": "j", "source": "run", "report": report_dict(demo(OOM))}
    assert client.post("/api/v1/incidents", json=body).status_code == 401
    assert client.post("/api/v1/incidents", json=body, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.post("/api/v1/incidents", json=body, headers={"authorization": "Basic s3cret"}).status_code == 401
    assert client.post("/api/v1/incidents", json=body, headers={"authorization": "Bearer s3cret"}).status_code == 201
    message = assert_error(text_post(client, "/api/v1/diagnose", OOM), 401, "unauthorized")
    assert "store=false" in message
    assert text_post(client, "/api/v1/diagnose", OOM, params={"store": "false"}).status_code == 200
    page = client.post("/diagnose", data={"text": OOM, "save": "1"})
    assert page.status_code == 200 and "Not saved" in page.text and 'type="password"' in page.text
    page = client.post("/diagnose", data={"text": OOM, "save": "1", "token": "s3cret"})
    assert "Saved as" in page.text
    assert len(client.get("/api/v1/incidents").json()["incidents"]) == 2  # reads stay open


def test_secrets_are_redacted_in_pages_responses_and_the_store(client):
    page = client.post("/diagnose", data={"text": SECRET_LOG, "save": "1"}).text
    api = text_post(client, "/api/v1/diagnose", SECRET_LOG)
    incident_id = api.headers["x-faultlens-incident"]
    shown = [page, api.text, client.get(f"/incidents/{incident_id}").text,
             client.get(f"/api/v1/incidents/{incident_id}").text, client.get("/incidents/1").text]
    for text in shown:
        for secret in SECRETS:
            assert secret not in text
    assert "&lt;redacted&gt;" in page and "<redacted>" in api.text


# --- the serve command and the agents ------------------------------------------------------------

def test_serve_refuses_to_listen_beyond_loopback_without_a_token(capsys, monkeypatch):
    monkeypatch.delenv("FAULTLENS_TOKEN", raising=False)
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "refusing to listen on 0.0.0.0 without a token" in err and "Tip:" in err


def test_serve_starts_uvicorn_with_the_app(monkeypatch, tmp_path, capsys):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    monkeypatch.setenv("FAULTLENS_TOKEN", "t0k")
    assert main(["serve", "--host", "0.0.0.0", "--port", "9999", "--db", str(tmp_path / "x.db"),
                 "--max-upload-mb", "2"]) == 0
    app, kw = calls[0]
    assert kw["host"] == "0.0.0.0" and kw["port"] == 9999
    ctx = app.state.faultlens
    assert ctx.token == "t0k" and ctx.max_upload_bytes == 2 << 20
    assert str(tmp_path / "x.db") in capsys.readouterr().err


def test_importing_the_cli_does_not_import_the_web_stack():
    code = ("import sys, faultlens.cli as c; c.build_parser(); "
            "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn', 'sqlalchemy', 'jinja2', "
            "'urllib.request') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == "[]"


def test_run_and_watch_post_their_reports(tmp_path):
    env = server_env(tmp_path)
    agent_env = {**env, "FAULTLENS_RUNS": str(tmp_path / "runs")}
    with serving(tmp_path, "--token", "s3cret", env=env) as base:
        crash = f"import sys; print('step 1'); print({OOM.strip()!r}); sys.exit(3)"
        run = subprocess.run([sys.executable, "-m", "faultlens", "run", "--no-env", "--post", base,
                              "--token", "s3cret", "--job", "train-7b", "--", sys.executable, "-c", crash],
                             capture_output=True, text=True, env=agent_env, timeout=120)
        assert run.returncode == 3, run.stderr
        assert "posted to" in run.stderr
        watch = subprocess.run([sys.executable, "-m", "faultlens", "watch", "-", "--post",
                                base + "/api/v1/incidents"], input="step 2\n" + OOM,
                               capture_output=True, text=True, env={**agent_env, "FAULTLENS_TOKEN": "s3cret"},
                               timeout=120)
        assert watch.returncode == 0 and "posted to" in watch.stderr, watch.stderr
        refused = subprocess.run([sys.executable, "-m", "faultlens", "watch", "-", "--post", base],
                                 input=OOM, capture_output=True, text=True, env=agent_env, timeout=120)
        assert refused.returncode == 0 and "refused the incident: 401" in refused.stderr
        with urllib.request.urlopen(base + "/api/v1/incidents") as resp:
            incidents = json.loads(resp.read())["incidents"]
    got = sorted((i["source"], i["job"], i["reference"]) for i in incidents)
    assert got == [("run", "train-7b", "demo-oom"), ("watch", "-", "demo-oom")]
    run_incident = next(i for i in incidents if i["source"] == "run")
    assert run_incident["log_bytes"] > len(OOM)  # the log's tail came along


def test_a_dead_server_is_only_a_warning(tmp_path):
    from live_server import free_port

    env = {**server_env(tmp_path), "FAULTLENS_RUNS": str(tmp_path / "runs")}
    res = subprocess.run([sys.executable, "-m", "faultlens", "run", "--no-env", "--post",
                          f"http://127.0.0.1:{free_port()}", "--", sys.executable, "-c",
                          f"print({OOM.strip()!r}); raise SystemExit(5)"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 5 and "warning: " in res.stderr and "cannot post the incident" in res.stderr


def test_fleet_aggregates_match_what_scan_reports(client, demo):
    """serve shows scan's aggregates: per reference, per host (a node whose failure recurs stands
    out), per day, and the unexplained error lines clustered into templates."""
    from faultlens.render.json import report_dict

    oom = report_dict(demo(OOM))
    healthy_log = "step 1\nRuntimeError: flux capacitor drained on shard 17\n"
    unexplained = report_dict(demo(healthy_log))
    posts = [("node-13", f"job-{i}", oom, OOM) for i in range(6)]
    posts += [(f"node-{i}", f"ok-{i}", unexplained, healthy_log.replace("17", str(i))) for i in range(1, 25)]
    for host, job, report, log in posts:
        assert client.post("/api/v1/incidents", json={"host": host, "job": job, "source": "scan",
                                                      "report": report, "log": log}).status_code == 201
    data = client.get("/api/v1/fleet").json()
    assert data["jobs"] == 30 and data["diagnosed"] == 6 and data["unexplained"] == 24
    assert data["references"][0]["id"] == "demo-oom" and data["references"][0]["jobs"] == 6
    node13 = next(h for h in data["hosts"] if h["host"] == "node-13")
    assert node13["repeated"] and node13["repeated"][0]["id"] == "demo-oom"
    templates = data["unexplained_templates"]
    assert templates and templates[0]["jobs"] == 24 and "flux capacitor drained" in templates[0]["template"]
    page = client.get("/fleet")
    assert page.status_code == 200
    assert "node-13" in page.text and "flux capacitor drained" in page.text
    assert client.get("/fleet", params={"host": "node-13"}).text.count("job-") >= 1


def test_api_docs_are_served_without_a_cdn(client):
    page = client.get("/docs").text
    assert "/docs/assets/swagger-ui-bundle.js" in page and "cdn." not in page
    assert "https://" not in page  # nothing fetched from elsewhere
    js = client.get("/docs/assets/swagger-ui-bundle.js")
    assert js.status_code == 200 and len(js.content) > 100_000
    assert client.get("/docs/assets/swagger-ui.css").status_code == 200


def test_one_access_log_line_per_request(client, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="faultlens.access"):
        client.get("/api/v1/references", params={"category": "x"})
        client.get("/no-such-page", headers={"accept": "application/json"})
    lines = [r.getMessage() for r in caplog.records if r.name == "faultlens.access"]
    assert len(lines) == 2
    assert lines[0].startswith('testclient "GET /api/v1/references" 200 ')
    assert "category" not in lines[0]  # no query strings in the log
    assert ' "GET /no-such-page" 404 ' in lines[1] and lines[1].endswith("ms")
