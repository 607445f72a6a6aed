"""Message origins: where upstream code prints a log line, and in which releases.

    from faultlens.origins import lookup, other_wordings, skew
    lookup(["ValueError: Cannot set a prompt learning adapter ..."])  # -> [[Origin, ...]]

The index is built by tools/build_origins.py and ships under data/.
"""

from __future__ import annotations

from ..model import Origin
from .lookup import OriginIndex, Wording, default_index, release_range
from .skew import skew
from .store import IndexMissing

__all__ = [
    "IndexMissing",
    "Origin",
    "OriginIndex",
    "Wording",
    "default_index",
    "lookup",
    "other_wordings",
    "release_range",
    "skew",
]


def lookup(texts: list[str], limit: int = 5) -> list[list[Origin]]:
    """For each line, its origin candidates, best first (at most `limit`)."""
    return default_index().lookup(texts, limit)


def other_wordings(origin: Origin) -> list[Wording]:
    """Indexed releases that print a different wording of the same message."""
    return default_index().other_wordings(origin)
