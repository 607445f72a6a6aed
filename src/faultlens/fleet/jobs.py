"""From command-line inputs to jobs: expand paths, folders, globs and URLs, then group the files.

The grouping rule (README, "Fleet scans"):

- by default every file is one job, named by its path;
- `job_pattern` is a regex with a named group `job`, searched in each path: files whose `job`
  groups are equal are one job, named by that group (e.g. one folder per job with one log per
  rank). An optional `host` group names the node that wrote the file. A path the pattern does not
  match stays a job of its own;
- `per_dir`: all files in the same folder are one job, named by the folder.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from ..errors import UsageError
from .remote import is_url

GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Job:
    """One job to diagnose: the files that hold its logs."""

    name: str
    files: tuple[str, ...]
    """Paths or URLs, sorted."""
    hosts: tuple[str | None, ...] = ()
    """Per file, the node named by --job-pattern's `host` group, if any."""

    def host_of(self, file: str | None) -> str | None:
        """The pattern's host for `file`, else for the first file that has one."""
        named = dict(zip(self.files, self.hosts))
        return named.get(file) or next((h for h in self.hosts if h), None)


def expand(inputs: list[str]) -> tuple[list[str], list[str]]:
    """(files, inputs that matched nothing). Folders are walked recursively (hidden files,
    FIFOs, sockets and devices are skipped); a plain path is kept as given (one that does not
    exist is reported by the scan for its job)."""
    files: list[str] = []
    unmatched: list[str] = []
    for item in inputs:
        found = _expand_url(item) if is_url(item) else _expand_local(item)
        if not found:
            unmatched.append(item)
        files.extend(found)
    return list(dict.fromkeys(files)), unmatched


def _expand_local(item: str) -> list[str]:
    if GLOB_CHARS.search(item):
        out: list[str] = []
        for path in sorted(glob.glob(item, recursive=True)):
            if os.path.isdir(path):
                out.extend(_walk(path))
            elif os.path.isfile(path):  # not a FIFO, socket or device: reading one can hang
                out.append(path)
        return out
    if os.path.isdir(item):
        return _walk(item)
    return [item]


def _walk(folder: str) -> list[str]:
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        # regular files only: a FIFO with no writer would block the scan forever
        out.extend(p for p in (os.path.join(root, n) for n in names if not n.startswith("."))
                   if os.path.isfile(p))
    return sorted(out)


def _expand_url(url: str) -> list[str]:
    from .remote import filesystem

    fs, path = filesystem(url)
    if GLOB_CHARS.search(path):
        paths = [p for p in fs.glob(path) if not fs.isdir(p)]
    elif fs.isdir(path):
        paths = fs.find(path)
    else:
        return [url]
    return sorted(fs.unstrip_protocol(p) for p in paths)


def compile_job_pattern(pattern: str) -> re.Pattern:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--job-pattern: not a valid regex ({exc})") from None
    if "job" not in regex.groupindex:
        raise UsageError("--job-pattern needs a named group (?P<job>...)",
                         tip=r"e.g. --job-pattern 'logs/(?P<job>[^/]+)/rank\d+\.log'")
    return regex


def group(files: list[str], job_pattern: str | None = None, per_dir: bool = False) -> list[Job]:
    """Jobs sorted by name, each with its files sorted (see the module docstring for the rule)."""
    if job_pattern and per_dir:
        raise UsageError("--job-pattern and --job-per-dir are two grouping rules: choose one")
    regex = compile_job_pattern(job_pattern) if job_pattern else None
    members: dict[str, dict[str, str | None]] = {}
    for path in files:
        name, host = path, None
        if regex is not None:
            m = regex.search(path)
            if m and m.group("job"):
                name, host = m.group("job"), m.groupdict().get("host")
        elif per_dir:
            name = path.rsplit("/", 1)[0] if is_url(path) else os.path.dirname(path) or "."
        members.setdefault(name, {})[path] = host
    jobs = []
    for name in sorted(members):
        paths = sorted(members[name])
        jobs.append(Job(name, tuple(paths), tuple(members[name][p] for p in paths)))
    return jobs
