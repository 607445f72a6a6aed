"""Typed errors raised by the core; only the CLI turns them into messages and exit codes."""

from __future__ import annotations


class FaultlensError(Exception):
    """Base class. `tip` is an optional next step shown to the user."""

    def __init__(self, message: str, tip: str | None = None):
        super().__init__(message)
        self.tip = tip


class InputError(FaultlensError):
    """A log could not be read: missing, unreadable, empty, binary, corrupt compression."""


class CatalogueError(FaultlensError):
    """The catalogue is invalid (bad YAML, schema violation, regex that does not compile)."""


class UsageError(FaultlensError):
    """The command line asks for something that cannot be done."""
