"""The catalogue against the origins index: which upstream code prints each error-level signal's
lines, and which wordings of the same message (other releases) a signal's regex misses.

A signal's lines are the lines of its reference's match examples that its regex matches: real
log lines, so the look-up says where upstream prints what users saw. A signal that no indexed
project prints carries `origin: 'none: <reason>'` (a closed-source driver's message, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Origin
from .lookup import OriginIndex
from .template import WILD, gaps, render, span

MAX_LINES = 20
MAX_LINE_CHARS = 4000


@dataclass(frozen=True)
class Miss:
    """A wording of the signal's message, printed by other releases, that its regex misses."""
    releases: tuple[str, ...]
    wording: str
    rendered: str
    """The wording filled with the example line's values: what that release would print."""


@dataclass(frozen=True)
class SignalOrigins:
    reference: str
    signal: str
    regex: str
    declared: str
    """The signal's `origin:` field ('' when absent)."""
    lines: tuple[str, ...]
    origins: tuple[Origin, ...]
    misses: tuple[Miss, ...] = field(default=())


def example_lines(ref_path: str, regex: str, limit: int = MAX_LINES) -> list[str]:
    """Distinct lines of the reference's match examples that `regex` matches."""
    try:
        rx = re.compile(regex)
    except re.error:
        return []
    out: list[str] = []
    for log in sorted((Path(ref_path) / "examples").glob("match-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            line = line[:MAX_LINE_CHARS]
            if line.strip() and line not in out and rx.search(line):
                out.append(line)
                if len(out) >= limit:
                    return out
    return out


_REGEX_WORD = re.compile(r"(?<![\\\w])[A-Za-z_][A-Za-z0-9_]{2,}")
FILLERS = ("0", "1", "x", "cuda:0", "1.00 GiB")


MIN_RUN = 12
"""A literal run of the regex this long, found verbatim in a template, names that template."""
RUN_SHARE = 0.7
"""...when it is at least this share of the literal text of its alternative of the regex."""
_META_RUN = re.compile(r"\\[dDsSwWbB]|[\\^$.|?*+()\[\]{}]")


def _branches(regex: str) -> list[str]:
    """The regex's top-level alternatives (one outer group around all of it is looked through)."""
    from ..lint import top_level_branches  # lint imports this module

    body = regex
    while body.startswith(("(?:", "(")) and _closes_at_end(body):
        body = body[3:-1] if body.startswith("(?:") else body[1:-1]
    return top_level_branches(body)


def _closes_at_end(body: str) -> bool:
    """Whether the group opened at body[0] closes at its last character."""
    depth, cls, i = 0, False, 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if cls:
            cls = c != "]"
        elif c == "[":
            cls = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i == len(body) - 1
        i += 1
    return False


def literal_runs(regex: str, min_len: int = MIN_RUN) -> list[str]:
    """Runs of literal text that carry most of one alternative of the regex (at least RUN_SHARE of
    its literal characters, at least `min_len` characters and three words or 20 characters), so
    that a template holding the run prints that alternative's message. Longest first."""
    found = set()
    for branch in _branches(regex):
        plain = re.sub(r"\[[^\]]*\]|\{\d+(,\d*)?\}", "|", branch)
        runs = [r.strip() for r in _META_RUN.split(plain)]
        total = sum(len(r) for r in runs)
        for r in runs:
            if len(r) >= min_len and (len(r.split()) >= 3 or len(r) >= 20) \
                    and len(r) >= RUN_SHARE * total:
                found.add(r)
    return sorted(found, key=len, reverse=True)


def regex_origins(regex: str, index: OriginIndex, limit: int = 3) -> list[tuple[Origin, str]]:
    """Templates the regex matches once their placeholders are filled with a plausible value, or
    that hold one of its long literal runs verbatim (a regex that matches only the head of a
    message, or adds a log prefix): for signals no example line shows, or whose example lines
    are in a wording the indexed releases do not print."""
    rx = re.compile(regex)
    words = sorted({w.lower() for w in _REGEX_WORD.findall(regex)})
    if not words:
        return []
    runs = literal_runs(regex)
    out = []
    for origin, template in index.by_key_words(words):
        if any(rx.search(render(template, [f] * template.count(WILD))) for f in FILLERS) \
                or any(r in template for r in runs):
            out.append((origin, template))
            if len(out) >= limit:
                return out
    if runs:  # the template's rarest words may lie outside what the regex spells out
        for origin, template in index.by_key_words(words, limit=4000, both=False):
            if any(r in template for r in runs):
                out.append((origin, template))
                if len(out) >= limit:
                    break
    return out


def signal_origins(ref, index: OriginIndex, with_misses: bool = False) -> list[SignalOrigins]:
    """Every error-level line signal of `ref`, with the origins of its example lines."""
    out = []
    for sig in ref.signals.values():
        if sig.level != "error" or sig.kind != "line":
            continue
        declared = getattr(sig, "origin", "") or ""
        lines = example_lines(ref.path, sig.regex)
        found: dict[tuple, tuple[Origin, str, str]] = {}
        for line in lines:
            for score, origin, template in index.candidates(line, limit=3):
                found.setdefault((origin.project, origin.path, origin.function, template),
                                 (origin, template, line))
        if not found:  # no example line, or one in a wording no indexed release prints
            for origin, template in regex_origins(sig.regex, index):
                found.setdefault((origin.project, origin.path, origin.function, template),
                                 (origin, template, ""))
        misses: list[Miss] = []
        if with_misses:
            rx = re.compile(sig.regex)
            seen = set()
            for origin, template, line in found.values():
                values = gaps(template, line.strip()) or []
                where = span(template, line) if line else None
                for w in index.other_wordings(origin):
                    other = w.message.replace("…", WILD)
                    rendered = render(other, values)
                    if where:  # the same log line, with the other release's wording in place
                        rendered = line[:where[0]] + rendered + line[where[1]:]
                    if w.message in seen or rx.search(rendered):
                        continue
                    seen.add(w.message)
                    misses.append(Miss(w.releases, w.message, rendered))
        out.append(SignalOrigins(ref.id, sig.name, sig.regex, declared, tuple(lines),
                                 tuple(v[0] for v in found.values()), tuple(misses)))
    return out


def check_origins(refs, index: OriginIndex | None = None) -> list:
    """Lint: every error-level signal matches an upstream template or says `origin: none: ...`.
    Warning-level while the index does not cover every project the catalogue names."""
    from ..lint import Problem
    from .store import IndexMissing

    if index is None:
        try:
            from .lookup import default_index
            index = default_index()
        except (IndexMissing, OSError) as exc:
            return [Problem("warning", "origins", f"origins index unavailable ({exc}); "
                                                  "signals not checked against upstream")]
    problems = []
    for ref in refs:
        for so in signal_origins(ref, index):
            where = f"{ref.category}/{ref.id}"
            if so.declared.startswith("none"):
                continue
            if not so.origins:
                problems.append(Problem("warning", where, f"signals/{so.signal}: no upstream "
                                        "template in the origins index prints its example lines "
                                        "or matches its regex; "
                                        "widen the index or add origin: 'none: <why>' (e.g. a "
                                        "closed-source driver message)"))
    return problems
