from __future__ import annotations

from pathlib import Path

import pytest

from faultlens.api import diagnose
from faultlens.engine.compile import build
from faultlens import catalogue as catalogue_mod

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("FAULTLENS_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.delenv("FAULTLENS_CATALOGUE", raising=False)


@pytest.fixture(scope="session")
def demo_scanner():
    return build(catalogue_mod.load(DATA / "catalogue"))


@pytest.fixture(scope="session")
def real_scanner():
    return build(catalogue_mod.load(ROOT / "catalogue"))


@pytest.fixture
def demo(demo_scanner):
    def run(text_or_paths, env=None):
        return diagnose(text_or_paths, env=env, scanner=demo_scanner)
    return run
