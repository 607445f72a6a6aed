"""`faultlens site build DIR`: the whole catalogue as static HTML that works from any folder,
file:// included: relative links, and a prebuilt search index loaded as a script (browsers do
not let a file:// page fetch JSON)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ..catalogue import Catalogue
from ..errors import CatalogueError
from ..refs import ID_RE
from . import views
from .links import SiteLinks
from .templating import environment, render

STATIC = Path(__file__).resolve().parent / "static"


def readable_pattern(regex: str) -> str:
    """A signal's regex as words a person would paste: escapes and character classes dropped."""
    text = re.sub(r"\\[sdwbSDWB]|\[[^\]]*\]|(?<!\\)\|", " ", regex.replace("(?:", "("))
    text = re.sub(r"\{\d+(,\d*)?\}|(?<!\\)[?*+()^$]", "", text)  # quantifiers, groups, anchors
    return re.sub(r"\s+", " ", re.sub(r"\\(.)", r"\1", text)).strip()


def search_index(refs) -> list[dict]:
    """One entry per reference, with its URL relative to the site's root."""
    links = SiteLinks(0)
    return [{"id": r.id, "title": r.title, "category": r.category, "severity": r.severity,
             "summary": r.summary, "symptoms": " ".join(r.symptoms),
             "messages": " ".join(readable_pattern(s.regex) for s in r.signals.values()),
             "url": links.reference(r.id)} for r in refs]


def build_site(catalogue: Catalogue, out: Path) -> int:
    """Write the site into `out` (created if needed); returns the number of HTML pages."""
    refs = sorted(catalogue.references, key=lambda r: (r.category, r.id))
    for name in {r.id for r in refs} | {r.category for r in refs}:
        if not ID_RE.match(name):  # ids and categories become file names
            raise CatalogueError(f"'{name}' is not a valid id or category name",
                                 tip="run 'faultlens lint'")
    env = environment()
    known = {r.id for r in refs}
    pages = {"index.html": render(env, "home.html", SiteLinks(0), **views.home_context(refs))}
    for name, _count in views.categories(refs):
        pages[f"categories/{name}.html"] = render(env, "category.html", SiteLinks(1),
                                                  **views.category_context(refs, name))
    for ref in refs:
        pages[f"references/{ref.id}.html"] = render(env, "reference.html", SiteLinks(1),
                                                    **views.reference_context(ref, known))
    for rel, html in pages.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    (out / "static").mkdir(parents=True, exist_ok=True)
    for asset in ("style.css", "search.js", "copy.js"):
        shutil.copyfile(STATIC / asset, out / "static" / asset)
    index = search_index(refs)
    (out / "search-index.json").write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    (out / "static" / "search-index.js").write_text(
        f"window.FAULTLENS_INDEX = {json.dumps(index, ensure_ascii=False)};\n", encoding="utf-8")
    return len(pages)
