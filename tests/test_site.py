"""`faultlens site build DIR`: every page, relative links that resolve offline, the search index."""

import dataclasses
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import DATA, ROOT

from faultlens import catalogue as catalogue_mod
from faultlens.cli import main
from faultlens.errors import CatalogueError
from faultlens.web.site import build_site, readable_pattern


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("href", "src") and v]


def links_of(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text())
    return parser.links


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    build_site(catalogue_mod.load(DATA / "catalogue"), out)
    return out


def test_cli_builds_the_site(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    assert main(["site", "build", str(tmp_path / "out")]) == 0
    assert "wrote 12 pages" in capsys.readouterr().out  # home + 3 categories + 8 references
    (tmp_path / "file").write_text("")
    assert main(["site", "build", str(tmp_path / "file")]) == 2


def test_every_reference_and_category_has_a_page(site):
    ids = {r.id for r in catalogue_mod.load(DATA / "catalogue").references}
    assert {p.stem for p in (site / "references").glob("*.html")} == ids
    assert {p.stem for p in (site / "categories").glob("*.html")} == {"demo", "distributed", "memory"}
    assert (site / "index.html").is_file() and (site / "static" / "style.css").is_file()


def test_links_are_relative_and_resolve_offline(site):
    pages = list(site.rglob("*.html"))
    checked = 0
    for page in pages:
        for link in links_of(page):
            parts = urlsplit(link)
            if parts.scheme in ("http", "https") or link.startswith("#"):
                continue
            assert not parts.scheme and not link.startswith("/"), f"{page.name}: {link}"
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to missing {link}"
            assert site.resolve() in target.parents
            checked += 1
    assert checked > 50


def test_reference_page_links_its_siblings_and_has_no_server_links(site):
    html = (site / "references" / "demo-specific-index.html").read_text()
    assert '<a href="../references/demo-generic-index.html">demo-generic-index</a>' in html
    assert "The generic one has no emulation context." in html
    assert "/diagnose" not in html and "/incidents" not in html


def test_search_index(site):
    index = json.loads((site / "search-index.json").read_text())
    script = (site / "static" / "search-index.js").read_text()
    assert script.startswith("window.FAULTLENS_INDEX = ") and script.rstrip().endswith(";")
    assert json.loads(script[len("window.FAULTLENS_INDEX = "):].rstrip().rstrip(";")) == index
    by_id = {e["id"]: e for e in index}
    assert set(by_id) == {p.stem for p in (site / "references").glob("*.html")}
    assert all((site / e["url"]).is_file() for e in index)
    assert "CUDA out of memory. Tried to allocate" in by_id["demo-oom"]["messages"]
    assert by_id["demo-specific-index"]["symptoms"] == "the RuntimeError plus an emulation frame"


def test_catalogue_text_is_escaped(tmp_path):
    cat = tmp_path / "catalogue"
    shutil.copytree(DATA / "catalogue", cat)
    ref = cat / "memory" / "demo-oom" / "reference.yaml"
    ref.write_text(ref.read_text().replace("title: Test fixture", "title: <script>alert(1)</script> Test fixture"))
    out = tmp_path / "site"
    build_site(catalogue_mod.load(cat), out)
    for page in out.rglob("*.html"):
        assert "<script>alert" not in page.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "references" / "demo-oom.html").read_text()


def test_ids_that_are_not_file_names_are_refused(tmp_path):
    cat = catalogue_mod.load(DATA / "catalogue")
    evil = dataclasses.replace(cat.references[0], id="../../evil")
    with pytest.raises(CatalogueError, match="not a valid id"):
        build_site(catalogue_mod.Catalogue(cat.root, cat.digest, (evil,)), tmp_path / "site")
    assert not (tmp_path / "evil.html").exists()


def test_readable_pattern():
    assert readable_pattern(r"CUDA out of memory\. Tried to allocate") == "CUDA out of memory. Tried to allocate"
    assert readable_pattern(r"Using '?EMULATION'? NvFp4|NvFp4LinearBackend\.EMULATION") == \
        "Using 'EMULATION' NvFp4 NvFp4LinearBackend.EMULATION"
    assert readable_pattern(r"(?:NCCL|nccl) error:\s+unhandled [a-z]+ error \(run with") == \
        "NCCL nccl error: unhandled error (run with"


def test_the_real_catalogue_builds(tmp_path):
    cat = catalogue_mod.load(ROOT / "catalogue")
    pages = build_site(cat, tmp_path)
    assert pages == 1 + len({r.category for r in cat.references}) + len(cat.references)
