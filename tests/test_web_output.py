"""The web report in plain words: status, the variant's sentence, inline code, failure lines no
reference explains, and no internal signal name in the HTML of the real catalogue's examples."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from conftest import ROOT
from faultlens.web.app import create_app
from faultlens.web.templating import inline_code
from test_output_text import _signal_names

EXAMPLES = ["catalogue/memory/cuda-out-of-memory/examples/match-forward-activation.log",
            "catalogue/inference/vllm-nvfp4-emulation-lut-on-cpu/examples/match-moe-emulation-startup.log",
            "catalogue/distributed/nccl-watchdog-collective-timeout/examples/match-allreduce-same-seqnum.log"]


@pytest.fixture(scope="module")
def real_client(tmp_path_factory):
    app = create_app(str(tmp_path_factory.mktemp("db") / "incidents.db"), catalogue=ROOT / "catalogue")
    return TestClient(app)


def test_inline_code_is_markup_and_the_rest_is_escaped():
    html = str(inline_code("set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` <now>"))
    assert "<code>PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True</code>" in html
    assert "&lt;now&gt;" in html and "`" not in html


def test_report_pages_speak_plain_words(real_client, real_scanner):
    names = _signal_names(real_scanner)
    pattern = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])")
    for rel in EXAMPLES:
        log = (ROOT / rel).read_text()
        html = real_client.post("/diagnose", data={"text": log}).text
        assert 'class="status status-confirmed"' in html
        # our prose, outside the quoted log lines and the refilled form
        prose = re.sub(r"<table class=\"log\">.*?</table>|<textarea.*?</textarea>", "", html, flags=re.S)
        assert not pattern.findall(prose), (rel, pattern.findall(prose)[:5])
        assert not re.search(r"<p>[^<]*`[^`<]+`", prose), rel  # no literal backticks in prose


def test_variant_by_its_sentence_and_unexplained_lines(real_client):
    log = (ROOT / EXAMPLES[1]).read_text()
    html = real_client.post("/diagnose", data={"text": log}).text
    assert "Variant: Emulation chosen because the GPU has no native NVFP4 backend" in html
    unknown = ('Traceback (most recent call last):\n  File "/home/u/t.py", line 2, in <module>\n'
               "    f()\nZorkError: bad zork\n")
    html = real_client.post("/diagnose", data={"text": log + unknown}).text
    assert "Also in the log, explained by no reference" in html and "ZorkError: bad zork" in html
    html = real_client.post("/diagnose", data={"text": unknown}).text
    assert "No reference explains this failure" in html and "/home/u/t.py:2" in html


def test_reference_page_puts_what_to_do_first(real_client):
    html = real_client.get("/references/cuda-out-of-memory").text
    order = [html.index(f'<section id="{s}"') for s in
             ("summary", "fix", "checks", "siblings", "mechanism", "fingerprint", "sources", "examples")]
    assert order == sorted(order)
    assert '<nav class="toc"' in html and 'href="#fingerprint"' in html
    assert 'id="check-fragmentation-ruled-out"' in html  # stable anchors


def test_404_suggests_references(real_client):
    resp = real_client.get("/references/nccl-timeout", headers={"accept": "text/html"})
    assert resp.status_code == 404
    assert "Did you mean" in resp.text and 'href="/references/nccl-watchdog-collective-timeout"' in resp.text
    api = real_client.get("/references/nccl-timeout", headers={"accept": "application/json"})
    assert api.json()["error"]["code"] == "not_found"


def test_incident_page_shows_evidence_in_context(real_client):
    log = (ROOT / EXAMPLES[1]).read_text()
    html = real_client.post("/diagnose", data={"text": log, "save": "1"}).text
    link = re.search(r'href="(/incidents/\d+)"', html).group(1)
    page = real_client.get(link).text
    assert '<tr class="gap">' in page or page.count('<td class="ln">') > page.count('<tr class="hit">')
    assert "<mark>" in page  # the matched text highlighted, as on the diagnose page


def test_evidence_links_the_upstream_code_that_prints_it(real_client):
    log = (ROOT / EXAMPLES[1]).read_text()
    html = real_client.post("/diagnose", data={"text": log}).text
    # the RuntimeError line of the example is printed by torch (a library string: no link);
    # vLLM's own start-up line links its source at the newest release that prints it
    assert re.search(r'printed by <a href="https://github\.com/vllm-project/vllm/blob/v[^"]+#L\d+"',
                     html)
    assert "printed by torch <code>" in html
