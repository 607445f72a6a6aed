"""Browsing the catalogue: search, pattern export, and scaffolding a new reference folder."""

from __future__ import annotations

import math
import re
from pathlib import Path

from .engine import linear
from .errors import UsageError
from .lint import PLACEHOLDER
from .model import Reference

ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


_TOKEN = re.compile(r"[a-z0-9]+")
# field weights (BM25F): the id and title name the failure, messages are what users paste
FIELDS = (("id", 3.0), ("title", 2.5), ("messages", 2.0), ("symptoms", 1.5), ("summary", 1.0),
          ("explain", 0.8))
K1, B = 1.2, 0.6
MIN_RELATIVE = 0.6
"""Results scoring below this fraction of the best one are cut off."""


def _tokens(text: str) -> list[str]:
    out = []
    for tok in _TOKEN.findall(text.lower()):
        out.append(tok)
        if len(tok) > 4 and tok.endswith("s") and not tok.endswith("ss"):
            out.append(tok[:-1])  # timeouts -> timeout
    return out


def _literal(regex: str) -> str:
    """The words of a regex (escapes and operators removed): the message it matches."""
    text = re.sub(r"\\[dDsSwWbB]|\[[^\]]*\]|\{\d+(,\d*)?\}|\(\?[:P<>=!a-z]*", " ", regex)
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)  # WorkNCCL -> Work NCCL
    return re.sub(r"\\(.)", r"\1", text)


def _fields(ref: Reference) -> dict[str, str]:
    return {"id": ref.id.replace("-", " "), "title": ref.title,
            "messages": " ".join(_literal(s.regex) for s in ref.signals.values()
                                 if s.level == "error" or s.core),
            "symptoms": " ".join(ref.symptoms), "summary": ref.summary,
            "explain": " ".join(s.explain for s in ref.signals.values())}


class _Index:
    def __init__(self, refs: tuple[Reference, ...]):
        self.refs = refs
        self.docs = [{f: _tokens(t) for f, t in _fields(r).items()} for r in refs]
        self.avg = {f: max(1.0, sum(len(d[f]) for d in self.docs) / max(1, len(self.docs)))
                    for f, _ in FIELDS}
        df: dict[str, int] = {}
        for d in self.docs:
            for tok in {t for toks in d.values() for t in toks}:
                df[tok] = df.get(tok, 0) + 1
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        # how many references name this one as a sibling or upstream cause: the canonical entry
        # for a family of messages is the one the others point to
        indeg: dict[str, int] = {}
        for r in refs:
            for other in {s.id for s in r.siblings} | set(r.downstream_of):
                indeg[other] = indeg.get(other, 0) + 1
        self.prior = {r.id: 0.15 * math.log1p(indeg.get(r.id, 0)) for r in refs}

    def score(self, i: int, terms: list[str]) -> tuple[float, int]:
        doc = self.docs[i]
        total, hit = 0.0, 0
        for t in dict.fromkeys(terms):
            tf = 0.0
            for f, w in FIELDS:
                toks = doc[f]
                c = toks.count(t)
                if c:
                    tf += w * c / (1 - B + B * len(toks) / self.avg[f])
            if tf:
                hit += 1
                total += self.idf.get(t, 0.0) * tf * (K1 + 1) / (tf + K1)
        return total, hit


_INDEX: dict[int, _Index] = {}


def _index(refs: tuple[Reference, ...]) -> _Index:
    key = id(refs)
    if key not in _INDEX or _INDEX[key].refs is not refs:
        _INDEX.clear()
        _INDEX[key] = _Index(refs)
    return _INDEX[key]


def snippet(ref: Reference, query: str, width: int = 110) -> str:
    """The sentence of the reference that shares most words with the query."""
    terms = set(_tokens(query))
    best, best_hits = re.split(r"(?<=[.;])\s+", " ".join(ref.summary.split()))[0], 0
    texts = [*ref.symptoms, ref.summary, *(s.explain for s in ref.signals.values())]
    for text in texts:
        for sentence in re.split(r"(?<=[.;])\s+", " ".join(text.split())):
            hits = len(terms & set(_tokens(sentence)))
            if hits > best_hits:
                best, best_hits = sentence, hits
    if len(best) > width:
        words = _tokens(query)
        low = best.lower()
        at = min((low.find(w) for w in words if low.find(w) >= 0), default=0)
        start = 0 if at < width * 0.6 else at - width // 3
        piece = best[start:start + width - 2].rstrip()
        best = ("…" if start else "") + piece + ("…" if start + width - 2 < len(best) else "")
    return best


PASTED_LINE = 40
"""A query this long is a pasted log line: context patterns that match it count too."""


def search(refs: tuple[Reference, ...], query: str, limit: int = 10) -> list[tuple[float, Reference]]:
    """Rank references for `query` (BM25 over id, title, messages, symptoms, summary and signal
    explanations); a pasted log line that a reference's pattern matches ranks that reference first.
    Results far below the best one are cut off."""
    terms = _tokens(query)
    if not terms:
        return []
    idx = _index(refs)
    scored = []
    for i, ref in enumerate(refs):
        score, hit = idx.score(i, terms)
        if not score:
            continue
        score *= (hit / len(set(terms))) ** 0.5  # all the words matter, not one repeated word
        score += idx.prior[ref.id] * (1 if hit else 0)
        if len(query.strip()) > 12:
            for sig in ref.signals.values():  # a pasted error line finds its reference
                own = sig.level == "error" or sig.core
                if not own and len(query.strip()) < PASTED_LINE:
                    continue  # a few search words matching a context pattern say little
                try:  # linear time: the query is anyone's text, the regex the catalogue's
                    if linear.search(sig.regex, query):
                        score += 10.0 if own else 3.0
                        break
                except linear.LinearError:
                    continue
        scored.append((round(score, 2), ref))
    if not scored:
        return []
    scored.sort(key=lambda x: (-x[0], x[1].id))
    cut = scored[0][0] * MIN_RELATIVE
    return [x for x in scored if x[0] >= cut][:limit]


def patterns(refs: tuple[Reference, ...]) -> list[str]:
    """Every catalogue regex, one per line, deduplicated: usable as `rg -f`."""
    seen: dict[str, None] = {}
    for ref in refs:
        for sig in ref.signals.values():
            seen.setdefault(sig.regex, None)
    return list(seen)


TEMPLATE = """\
id: {id}
title: {PH} - name the failing component, the trigger and the consequence
category: {category}
severity: failure
status: experimental
summary: >-
  {PH} - two to four sentences in your own words: what fails, when, and what the user sees.
mechanism: >-
  {PH} - the causal chain: what the code assumed, what broke the assumption, and why the message
  names something else.
symptoms:
  - {PH} - what the user sees in the log or in behaviour
affects:
  - {PH} - versions, hardware, configurations where it happens, and where it does not
signals:
  message:
    regex: '{PH} the exact error text'
    level: error
    explain: {PH} - what this line means
fingerprint:
  all: [message]
  support: []
checks:
  - id: decisive-check
    text: {PH} - a check that separates this failure from a named sibling
    how: {PH} - the exact command, log line or setting to look at
fix:
  - do: {PH} - the best fix first
    why: {PH} - why it is better than the workarounds
siblings: []
sources:
  - url: https://github.com/OWNER/REPO/issues/NUMBER
    note: {PH} - the specific issue, pull request or doc section
"""


def scaffold(root: Path, ref_id: str, category: str) -> Path:
    if not ID_RE.match(ref_id):
        raise UsageError(f"'{ref_id}' is not a valid id: use lowercase kebab-case, e.g. nccl-ib-timeout")
    if not ID_RE.match(category):
        raise UsageError(f"'{category}' is not a valid category: use lowercase kebab-case")
    existing = list(root.glob(f"*/{ref_id}/reference.yaml"))
    if existing:
        raise UsageError(f"{existing[0]}: a reference with id '{ref_id}' already exists",
                         tip="ids are permanent; pick a new one, or edit the existing reference")
    folder = root / category / ref_id
    (folder / "examples").mkdir(parents=True)
    (folder / "reference.yaml").write_text(TEMPLATE.format(id=ref_id, category=category,
                                                           PH=PLACEHOLDER))
    (folder / "examples" / "match-REPLACE.yaml").write_text(
        f"source: {PLACEHOLDER} - URL of the public log this excerpt comes from, or 'synthetic'\n"
        f"note: {PLACEHOLDER} - what the excerpt shows\n")
    (folder / "examples" / "nomatch-REPLACE.yaml").write_text(
        f"source: {PLACEHOLDER} - URL of a near-miss log (same message, other cause)\n"
        f"note: {PLACEHOLDER} - which reference it belongs to instead\n")
    return folder
