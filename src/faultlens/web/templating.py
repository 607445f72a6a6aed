"""The Jinja2 environment shared by the server and the static site. Autoescaping is on for every
template: log text, ids and catalogue prose are always shown as text, never as markup."""

from __future__ import annotations

import re

import jinja2
from markupsafe import Markup, escape

from .. import __version__
from ..render.text import MARK
from ..render.words import dedupe_fixes, plural

_CODE = re.compile(r"`([^`\n]+)`")


def inline_code(text: str) -> Markup:
    """Catalogue prose with `backticks` shown as code; everything else escaped."""
    parts = _CODE.split(str(text or ""))
    return Markup("".join(f"<code>{escape(p)}</code>" if i % 2 else str(escape(p))
                          for i, p in enumerate(parts)))


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("faultlens.web", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals.update(version=__version__, MARK=MARK)
    env.filters.update(code=inline_code, plural=plural, dedupe_fixes=dedupe_fixes)
    return env


def render(env: jinja2.Environment, template: str, links, **context) -> str:
    return env.get_template(template).render(links=links, **context)
