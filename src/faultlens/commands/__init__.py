"""Sub-commands beyond diagnose/refs/lint/eval. Each module's `register(subparsers)` adds its
parser and sets `handler`; modules import their heavy dependencies only inside the handler."""

from __future__ import annotations

import importlib

MODULES = ("evaluate", "environment", "watch", "run", "serve", "site", "scan")


def register_all(sub) -> None:
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
