"""faultlens: why did this GPU training or inference run fail, and what to check next."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "diagnose", "install"]


def diagnose(source, *, env=None, catalogue=None):
    """Diagnose a log: a path, several paths (one job), raw text or bytes. Returns a `Report`.

    `env` is an optional mapping of environment facts (e.g. from `faultlens env --json`).
    """
    from .api import diagnose as _diagnose

    return _diagnose(source, env=env, catalogue=catalogue)


def install(stream=None, top: int = 3) -> None:
    """Opt-in: when the script dies of an uncaught exception, print faultlens' diagnosis of it."""
    from .hook import install as _install

    _install(stream=stream, top=top)
