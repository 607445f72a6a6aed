"""Name the failure no reference explains: the failing line, its kind, component and user frame.

A log that failed gets an answer even when nothing in the catalogue matches: the final exception
of each traceback and the structural failure lines (CUDA errors, NCCL WARN, assertions, fatal
lines, killed processes, non-zero exits, ERROR lines) that no diagnosis accounts for, most telling
first, with the references whose own messages are closest ("similar, not matched").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from ..model import Line, Nearest, Reference, Traceback, Unexplained
from ..redact import redact
from .failures import is_warning, kind_of, priority_of
from .score import literal_text
from .structure import Observations

MAX_ITEMS = 5
MAX_NEAREST = 3
MIN_SIMILARITY = 0.2
# with a confirmed diagnosis, launcher summaries and bare ERROR lines are noise, not news
NOISE_WHEN_DIAGNOSED = 4

_PACKAGE_DIRS = re.compile(r"(?:site|dist)-packages[/\\]([A-Za-z_][\w]*)")
_STDLIB = re.compile(r"[/\\]lib[/\\]python\d\.\d+[/\\](?!site-packages|dist-packages)")
_EXC_NAME = re.compile(r"(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault))\b")
_INFO_LEVEL = re.compile(r"\b(?:INFO|DEBUG|TRACE)\b|\[I\]|\[(?:info|debug)\]")
_TEMPLATE = re.compile(r"0x[0-9a-fA-F]+|\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]{2,}")
_STOP = frozenset("the and for with that this from not are was were has have but can cannot "
                  "error errors failed failure line file none true false".split())


def template(text: str) -> str:
    """A line with its numbers and addresses blanked: the same message, another occurrence."""
    return _TEMPLATE.sub("#", text.strip())[:200]


def component_of(tb: Traceback | None, line: Line) -> str:
    if tb and tb.frames:
        m = _PACKAGE_DIRS.search(tb.frames[-1].path)
        if m:
            return m.group(1)
        if _STDLIB.search(tb.frames[-1].path):
            return "python"
        return "user code"
    text = line.text
    if "NCCL" in text or "nccl" in text:
        return "nccl"
    if "CUDA" in text or "cuda" in text:
        return "cuda"
    return line.prefix.process or ""


def user_frame_of(tb: Traceback | None) -> str:
    if not tb:
        return ""
    for fr in reversed(tb.frames):
        path = fr.path
        if _PACKAGE_DIRS.search(path) or _STDLIB.search(path) or path.startswith("<"):
            continue
        return f"{path}:{fr.line} in {fr.function}" if fr.function else f"{path}:{fr.line}"
    return ""


def kind_of_line(text: str, pattern: str) -> str:
    if pattern in ("exception_line", "traceback"):
        m = _EXC_NAME.search(text)
        return m.group(1) if m else "exception"
    return kind_of(pattern)


class Similarity:
    """TF-IDF over each reference's title and the literal text of its error messages."""

    def __init__(self, refs: tuple[Reference, ...]):
        docs = {}
        for ref in refs:
            if ref.severity == "info":
                continue
            words = _words(ref.title)
            for sig in ref.signals.values():
                if sig.level == "error":
                    words += _words(literal_text(sig.regex, " "))
            docs[ref.id] = Counter(words)
        df = Counter(w for c in docs.values() for w in c)
        n = max(1, len(docs))
        self.idf = {w: math.log(1 + n / k) for w, k in df.items()}
        self.vectors = {rid: self._vector(c) for rid, c in docs.items()}

    def _vector(self, counts: Counter) -> dict[str, float]:
        vec = {w: (1 + math.log(k)) * self.idf.get(w, 0.0) for w, k in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {w: v / norm for w, v in vec.items()}

    def nearest(self, text: str, exclude: set[str]) -> tuple[Nearest, ...]:
        q = self._vector(Counter(_words(text)))
        scores = []
        for rid, vec in self.vectors.items():
            if rid in exclude:
                continue
            s = sum(v * vec.get(w, 0.0) for w, v in q.items())
            if s >= MIN_SIMILARITY:
                scores.append((s, rid))
        scores.sort(key=lambda x: (-x[0], x[1]))
        return tuple(Nearest(rid, round(s, 2)) for s, rid in scores[:MAX_NEAREST])


def _nearest(similarity: Similarity, text: str, exclude: set[str],
             partial: list[str]) -> tuple[Nearest, ...]:
    own = tuple(Nearest(rid, 1.0) for rid in dict.fromkeys(partial) if rid not in exclude)
    rest = similarity.nearest(text, exclude | set(partial))
    return (own + rest)[:MAX_NEAREST]


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP]


_SIMILARITY: dict[str, Similarity] = {}


def similarity_for(digest: str, refs: tuple[Reference, ...]) -> Similarity:
    sim = _SIMILARITY.get(digest)
    if sim is None:
        _SIMILARITY.clear()
        sim = _SIMILARITY[digest] = Similarity(refs)
    return sim


def find(obs: Observations, explained: set[tuple[str, int]], explained_templates: set[str],
         diagnosed_ids: set[str], confirmed: bool, similarity: Callable[[], Similarity],
         partial: dict[tuple[str, int], list[str]] | None = None) -> tuple[Unexplained, ...]:
    """Failure lines that no diagnosis explains, most telling first.

    `similarity` makes the `Similarity` index (called only when a line is named). `partial` maps a line to the references whose error pattern it matches although
    their fingerprint did not: they come first among the similar references."""
    partial = partial or {}
    tb_at = {(tb.file, tb.exception_line): tb for tb in obs.tracebacks}
    found: dict[tuple[str, int], tuple[int, Line, str]] = {}
    for tb in obs.tracebacks:
        line = Line(tb.file, tb.exception_line, tb.exception)
        found[(tb.file, tb.exception_line)] = (priority_of("exception_line"), line, "traceback")
    for line, name in obs.failure_lines:
        key = (line.file, line.number)
        prio = priority_of(name)
        if key in found and found[key][0] <= prio:
            continue
        found[key] = (prio, line, found[key][2] if key in found else name)
    index = None
    items = []
    seen_templates: set[str] = set()
    order = sorted(found.items(), key=lambda kv: (kv[1][0], obs.file_order.get(kv[0][0], 0), kv[0][1]))
    for key, (prio, line, name) in order:
        if key in explained or line.prefix.level == "WARNING" or is_warning(line.text):
            continue
        if prio > 1 and (line.prefix.level in ("INFO", "DEBUG") or _INFO_LEVEL.search(line.text)):
            continue  # an informational line that mentions a failure it recovered from
        if confirmed and prio >= NOISE_WHEN_DIAGNOSED:
            continue
        tmpl = template(line.text)
        if tmpl in seen_templates or tmpl in explained_templates:
            continue
        seen_templates.add(tmpl)
        tb = tb_at.get(key)
        if index is None:
            index = similarity()
        items.append(Unexplained(
            file=line.file, line=line.number, text=redact(line.text.strip()),
            kind=kind_of_line(line.text, name), component=component_of(tb, line),
            user_frame=user_frame_of(tb),
            nearest=_nearest(index, line.text, diagnosed_ids, partial.get(key, [])),
            process=tb.process if tb else line.prefix.key))
        if len(items) >= MAX_ITEMS:
            break
    return tuple(items)
