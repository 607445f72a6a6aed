"""The Jinja2 environment shared by the server and the static site. Autoescaping is on for every
template: log text, ids and catalogue prose are always shown as text, never as markup."""

from __future__ import annotations

import jinja2

from .. import __version__
from ..render.text import MARK


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("faultlens.web", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals.update(version=__version__, MARK=MARK)
    return env


def render(env: jinja2.Environment, template: str, links, **context) -> str:
    return env.get_template(template).render(links=links, **context)
