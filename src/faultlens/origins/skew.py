"""Version skew: the log says it ran a release of a project that does not print the line.

An origin knows the indexed releases that print its exact wording; the log's facts (`torch.version`,
`vllm.version`, `transformers.version`, ...) say which release ran. When the release that ran lies
between indexed releases that all lack the wording, the line came from another installation
than the one the log reports (a second site-packages, a stale build, a mismatched wheel) or the
version banner is wrong: often the diagnosis itself.
"""

from __future__ import annotations

from ..model import Origin
from .template import WILD, is_prefix

FACT_OF_PROJECT = {"huggingface_hub": "huggingface_hub.version"}
"""Fact names that are not `<project>.version`."""


def _parse(v: str):
    """A packaging Version, or None (imported here: only a log that names a version needs it)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(v.split("+")[0].lstrip("v"))
    except InvalidVersion:
        return None


def skew(origin: Origin, facts: dict[str, str], all_releases: list[str] | None = None) -> str | None:
    """A sentence when the log's version of the origin's project is outside the releases that
    print the line; None when it is inside, unknown, or between an indexed release that prints
    it and one that does not (the change could be on either side)."""
    if origin.kind == "string":
        return None  # a library's strings are read from whichever build was at hand (CPU or CUDA)
    if origin.message and is_prefix(origin.message.replace("…", WILD)):
        return None  # a bare label ('CUDA error: …') several places print: no release evidence
    fact = FACT_OF_PROJECT.get(origin.project, f"{origin.project}.version")
    ran = facts.get(fact)
    version = _parse(ran) if ran else None
    if version is None:
        return None
    if all_releases is None:
        from .lookup import default_index
        all_releases = default_index().projects.get(origin.project, {}).get("releases", [])
    indexed = [(v, r) for r in all_releases if (v := _parse(r)) is not None]
    if not indexed:
        return None
    printing = set(origin.releases)
    # the same release, else the same major.minor line (patch releases rarely reword)
    same = [r for v, r in indexed if v.release[:3] == version.release[:3]] or \
        [r for v, r in indexed if v.release[:2] == version.release[:2]]
    if same:
        inside = any(r in printing for r in same)
    else:
        below = [r for v, r in indexed if v < version]
        above = [r for v, r in indexed if v > version]
        lo = below[-1] if below else None
        hi = above[0] if above else None
        flags = [r in printing for r in (lo, hi) if r is not None]
        if any(flags) and not all(flags):
            return None  # reworded between the neighbouring indexed releases: can't tell
        if len(flags) == 1 and not flags[0] and lo is None:
            return None  # older than anything indexed: the wording may have existed then
        inside = all(flags)
    if inside:
        return None
    from .lookup import release_range
    return (f"the log reports {origin.project} {ran}, but this wording is printed by "
            f"{origin.project} {release_range(origin.releases, [r for _, r in indexed])} "
            "(indexed releases): the line may come from another installation than the one "
            "the log reports")
