from __future__ import annotations

import os
from pathlib import Path

import pytest

from faultlens.api import diagnose
from faultlens.engine.compile import build
from faultlens import catalogue as catalogue_mod

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def missing(reason: str) -> None:
    """Something a test needs (PostgreSQL, chromium) is absent: fail in CI ($CI set), skip
    elsewhere."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (required in CI)", pytrace=False)
    pytest.skip(reason)


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
