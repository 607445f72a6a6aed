"""Look lines up in the origins index: which upstream code prints them, in which releases.

Only the lines asked are looked up. Each line's words select the candidate templates whose two
rarest words it contains (an indexed query); each candidate is then verified with the
linear-time matcher of template.py and ranked by how much of the line its literal text covers.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..model import Origin
from . import store
from .template import WILD, is_prefix, key_tokens, line_tokens, match

MAX_LINE = 4000
"""Longer lines are cut before matching: a message is never longer."""
MIN_COVERED = 16
"""Literal characters a template must cover in the line, unless it covers 40 % of it."""
_NAMED_FILE = re.compile(r"([A-Za-z_][\w.-]*\.(?:py|pyx|cc|cpp|cu|cuh|c|h|hpp|go|rs)):\d+")
"""A source file a logger names in its prefix ('[nvfp4.py:285]', 'ggml-cuda.cu:75')."""
_SPACES = re.compile(r"[ \t]+")
_PY_EXCEPTION = re.compile(r"(?:^|[\s.(])[A-Z]\w*(?:Error|Exception): ")
"""A Python exception header: the message after it was raised, not printed by a C logger."""
_PRINTS = ("log.", "printf", "fprintf", "printk")
_PREFIX_AFTER = ":]>'\"`|-"
"""What may come right before a prefix label (spaces aside): the end of an exception name or a
logger's prefix ('RuntimeError: ', 'what():  ', '] ', ' - '), a quote, or nothing."""


def _prefix_at_start(template: str, line: str) -> bool:
    """A prefix label ('CUDA error: …') counts only where it starts the message: at the start of
    the line or after a separator (an exception name, a logger's bracket), with a value after."""
    label = template[:-1]
    j = line.find(label)
    while j >= 0:
        before = line[:j].rstrip()
        if (not before or before[-1] in _PREFIX_AFTER) and line[j + len(label):].strip():
            return True
        j = line.find(label, j + 1)
    return False


@dataclass(frozen=True)
class Wording:
    """Another wording of the same message: its text and the releases that print it."""
    message: str
    """The template, with … where the message has a value."""
    releases: tuple[str, ...]


class OriginIndex:
    """An opened origins index. Thread-safe for reads."""

    def __init__(self, path: Path | None = None) -> None:
        self._db = store.connect(path)
        self._lock = threading.Lock()
        self.projects: dict[str, dict] = {}
        for name, repo, tag, prefix, licence, releases in self._db.execute(
                "SELECT name, repo, tag, prefix, licence, releases FROM projects"):
            self.projects[name] = {"repo": repo, "tag": tag, "prefix": prefix or "",
                                   "licence": licence, "releases": json.loads(releases)}

    def _rows(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def url(self, project: str, path: str, line: int, releases: tuple[str, ...]) -> str | None:
        """A GitHub link to the line at the newest release that prints it."""
        p = self.projects.get(project) or {}
        if not (p.get("repo") and p.get("tag") and line and releases):
            return None
        tag = p["tag"].format(v=releases[-1])
        return f"https://github.com/{p['repo']}/blob/{tag}/{p['prefix']}{path}#L{line}"

    def _origin(self, row: tuple) -> Origin:
        project, path, line, function, kind, releases, template = row[:7]
        rel = tuple(releases.split(","))
        return Origin(project=project, path=path, line=line, function=function, kind=kind,
                      releases=rel, url=self.url(project, path, line, rel),
                      message=template.replace(WILD, "…"))

    def candidates(self, text: str, limit: int = 5) -> list[tuple[float, Origin, str]]:
        # runs of spaces count as one, as in the templates ('above.  Note:' in a raise)
        line = _SPACES.sub(" ", text.strip()[:MAX_LINE])
        tokens = line_tokens(line)
        if not tokens:
            return []
        marks = ",".join("?" * len(tokens))
        words = tuple(tokens)
        ids = [r[0] for r in self._rows(
            f"SELECT id FROM keys WHERE key1 IN ({marks}) AND (key2 = '' OR key2 IN ({marks}))",
            words + words)]
        rows = self._rows(
            "SELECT project, path, line, function, kind, releases, template, key2 FROM messages "
            f"WHERE id IN ({','.join('?' * len(ids))})", tuple(ids)) if ids else []
        scored = []
        named = {m.lower() for m in _NAMED_FILE.findall(line)}
        raised = bool(_PY_EXCEPTION.search(line))
        for row in rows:
            template = row[6]
            score = match(template, line)
            if not score:
                continue
            covered = len(template.replace(WILD, ""))
            if covered < MIN_COVERED and score < 0.4 and not (
                    is_prefix(template) and _prefix_at_start(template, line)):
                continue
            # rank: a template from the file the line's logger names, then how many of the
            # line's characters its literal text matches (a specific template over a generic
            # one), then source over a library's bare string, then more releases (the
            # long-lived wording), then the newest line
            in_named = bool(named) and row[1].rsplit("/", 1)[-1].lower() in named
            # after 'RuntimeError: ' a C/C++/Go logger's line is a worse fit than a raise or a
            # library's string (torch's 'CUDA error: …' over ggml's logged one)
            fits = not (raised and row[4].startswith(_PRINTS) and not row[1].endswith(".py"))
            rank = (in_named, round(score, 3), fits, row[4] != "string", len(row[5].split(",")))
            scored.append((rank, row))
        scored.sort(key=lambda x: x[0], reverse=True)
        out, seen = [], set()
        for rank, row in scored:
            key = (row[0], row[1], row[3], row[6])
            if key in seen:
                continue
            seen.add(key)
            out.append((rank[1], self._origin(row), row[6]))
            if len(out) >= limit:
                break
        return out

    def by_key_words(self, words: list[str], limit: int = 2000,
                     both: bool = True) -> list[tuple[Origin, str]]:
        """Templates whose two rarest words are among `words` (with `both=False`: whose rarest
        word is, whatever the second), at most `limit`."""
        marks = ",".join("?" * len(words))
        second = f" AND (key2 = '' OR key2 IN ({marks}))" if both else ""
        ids = [r[0] for r in self._rows(
            f"SELECT id FROM keys WHERE key1 IN ({marks}){second} LIMIT ?",
            (*words, *(words if both else ()), limit))]
        rows = self._rows("SELECT project, path, line, function, kind, releases, template "
                          f"FROM messages WHERE id IN ({','.join('?' * len(ids))})",
                          tuple(ids)) if ids else []
        return [(self._origin(r), r[6]) for r in rows]

    def lookup(self, texts: list[str], limit: int = 5) -> list[list[Origin]]:
        return [[o for _, o, _ in self.candidates(t, limit)] for t in texts]

    def template_of(self, origin: Origin) -> str | None:
        if origin.message:
            return origin.message.replace("…", WILD)
        rows = self._rows("SELECT template, releases FROM messages WHERE project=? AND path=? AND "
                          "function=? AND kind=? AND line=?",
                          (origin.project, origin.path, origin.function, origin.kind, origin.line))
        for template, releases in rows:
            if tuple(releases.split(",")) == origin.releases:
                return template
        return rows[0][0] if rows else None

    def other_wordings(self, origin: Origin, similarity: float = 0.75) -> list[Wording]:
        """Releases that print a different wording of the same message: templates of the same
        project in the same function (or, for a library's strings, the same file) that read
        alike and that none of the origin's releases prints (a rewording replaces the old text)."""
        own = self.template_of(origin)
        if own is None:
            return []
        if origin.function:
            rows = self._rows("SELECT template, releases FROM messages WHERE project=? AND "
                              "function=?", (origin.project, origin.function))
        else:
            # a library's strings have no function: the same library, sharing a key word
            words = sorted(set(key_tokens(own)))
            rows = self._rows("SELECT template, releases FROM messages WHERE project=? AND "
                              f"path=? AND key1 IN ({','.join('?' * len(words))})",
                              (origin.project, origin.path, *words)) if words else []
        out: dict[str, list[str]] = {}
        own_text = own.replace(WILD, "…")
        for template, releases in rows:
            if template == own:
                continue
            text = template.replace(WILD, "…")
            sm = difflib.SequenceMatcher(None, own_text, text)
            if sm.real_quick_ratio() < similarity or sm.quick_ratio() < similarity or \
                    sm.ratio() < similarity:
                continue
            rel = releases.split(",")
            if not set(rel) & set(origin.releases):
                out.setdefault(text, [])
                out[text] += [r for r in rel if r not in out[text]]
        order = {r: i for i, r in enumerate(self.projects.get(origin.project, {}).get("releases", []))}
        return [Wording(t, tuple(sorted(r, key=lambda v: order.get(v, -1))))
                for t, r in out.items()]


_DEFAULT: OriginIndex | None = None
_DEFAULT_LOCK = threading.Lock()


def default_index() -> OriginIndex:
    """The shipped index, opened once per process."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = OriginIndex()
        return _DEFAULT


def release_range(releases: tuple[str, ...], all_releases: list[str]) -> str:
    """'2.1.0–2.7.0, 2.13.0' from the releases that print a line, in the project's order."""
    pos = {r: i for i, r in enumerate(all_releases)}
    idx = sorted(pos[r] for r in releases if r in pos)
    if not idx:
        return ", ".join(releases)
    runs, start, prev = [], idx[0], idx[0]
    for i in idx[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        runs.append(all_releases[start] if start == prev else
                    f"{all_releases[start]}–{all_releases[prev]}")
        if i is not None:
            start = prev = i
    return ", ".join(runs)
