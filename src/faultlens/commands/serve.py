"""`faultlens serve`: the web UI and HTTP API.

FastAPI, uvicorn, SQLAlchemy and Jinja2 are imported inside the handler, so `faultlens diagnose`
starts without them; they come with the `web` extra.
"""

from __future__ import annotations

import ipaddress
import os
import sys

from ..errors import UsageError

WEB_EXTRA_TIP = "install the web extra: pip install 'faultlens[web]'"


SWITCH_INTERVAL_S = 0.001


def register(sub) -> None:
    s = sub.add_parser("serve", help="web UI and HTTP API: browse, search, diagnose, incidents",
                       description="Serve the catalogue, a diagnose page (paste or upload a log) "
                                   "and the incident store in a browser, and the same as a JSON "
                                   "API (OpenAPI at /docs). Listening beyond loopback needs a "
                                   "token, which every write must then carry.")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1; any other needs a token)")
    s.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    s.add_argument("--db", metavar="URL",
                   help="incident store: a SQLite file or a URL such as postgresql://user:pw@host/db "
                        "(default: $FAULTLENS_DB or ~/.local/share/faultlens/incidents.db)")
    s.add_argument("--token", help="bearer token that writes need (default: $FAULTLENS_TOKEN)")
    s.add_argument("--max-upload-mb", type=float, default=32, metavar="N",
                   help="largest log accepted, after decompression (default: 32)")
    s.add_argument("--no-access-log", action="store_true",
                   help="do not print one line per request (client, method, path, status, bytes, "
                        "time) to standard error")
    s.set_defaults(handler=cmd_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name may resolve to anything


def cmd_serve(args) -> int:
    token = args.token or os.environ.get("FAULTLENS_TOKEN") or None
    if not is_loopback(args.host) and not token:
        raise UsageError(f"refusing to listen on {args.host} without a token: anyone who can reach "
                         "it could store incidents",
                         tip="pass --token T or set FAULTLENS_TOKEN; clients then send "
                             "'Authorization: Bearer T'")
    if args.max_upload_mb <= 0:
        raise UsageError("--max-upload-mb must be more than 0")
    try:
        import uvicorn

        from ..web.app import create_app
    except ImportError as exc:
        raise UsageError(f"faultlens serve needs {exc.name}, which is not installed",
                         tip=WEB_EXTRA_TIP) from None
    app = create_app(args.db, token, int(args.max_upload_mb * 2**20), catalogue=args.catalogue)
    ctx = app.state.faultlens
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"faultlens: {len(ctx.catalogue.references)} references on http://{shown}:{args.port}/ "
          f"(API docs at /docs); incidents in {ctx.store.engine.url.render_as_string()}",
          file=sys.stderr)
    if not args.no_access_log:
        import logging

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%S"))
        access = logging.getLogger("faultlens.access")
        access.addHandler(handler)
        access.setLevel(logging.INFO)
        access.propagate = False
    # diagnoses run in worker threads; a shorter GIL switch interval (default 5 ms) lets the
    # event loop answer light requests between their Python steps (bench/soak.py)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
