"""`faultlens site build DIR`: the catalogue as a static site (Jinja2, from the `web` extra,
is imported inside the handler)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .serve import WEB_EXTRA_TIP


def register(sub) -> None:
    site = sub.add_parser("site", help="build the static reference site",
                          description="Render the whole catalogue as static HTML pages with a "
                                      "prebuilt search index; links are relative, so the folder "
                                      "works anywhere, file:// included.")
    actions = site.add_subparsers(dest="site_command", metavar="ACTION", parser_class=type(site))
    build = actions.add_parser("build", help="write the site into DIR")
    build.add_argument("dir", metavar="DIR")
    site.set_defaults(handler=cmd_site)


def cmd_site(args) -> int:
    if args.site_command != "build":
        raise UsageError("say what to do with the site", tip="faultlens site build DIR")
    out = Path(args.dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: exists and is not a folder")
    try:
        from ..web.site import build_site
    except ImportError as exc:
        raise UsageError(f"faultlens site needs {exc.name}, which is not installed",
                         tip=WEB_EXTRA_TIP) from None
    from ..engine.compile import load_scanner

    pages = build_site(load_scanner(args.catalogue).catalogue, out)
    print(f"wrote {pages} pages to {out}; open {out / 'index.html'}")
    return 0
