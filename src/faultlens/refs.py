"""Browsing the catalogue: search, pattern export, and scaffolding a new reference folder."""

from __future__ import annotations

import re
from pathlib import Path

from .engine import linear
from .errors import UsageError
from .lint import PLACEHOLDER
from .model import Reference

ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def search(refs: tuple[Reference, ...], query: str, limit: int = 20) -> list[tuple[float, Reference]]:
    """Rank references by how well their id, title, summary, symptoms and signals match `query`."""
    words = [w for w in re.split(r"\W+", query.lower()) if w]
    phrase = query.lower().strip()
    scored = []
    for ref in refs:
        fields = [
            (3.0, ref.id.replace("-", " ")), (3.0, ref.title.lower()), (1.0, ref.summary.lower()),
            (1.5, " ".join(ref.symptoms).lower()),
            (2.0, " ".join(s.regex for s in ref.signals.values()).lower()),
        ]
        score = 0.0
        for weight, text in fields:
            if phrase and phrase in text:
                score += 2 * weight
            score += sum(weight for w in words if w in text) / max(1, len(words))
        for sig in ref.signals.values():  # a pasted error line should find its reference
            try:  # linear time: the query is anyone's text, the regex the catalogue's
                if len(phrase) > 12 and linear.search(sig.regex, query):
                    score += 6.0
                    break
            except linear.LinearError:
                continue
        if score > 0:
            scored.append((round(score, 2), ref))
    scored.sort(key=lambda x: (-x[0], x[1].id))
    return scored[:limit]


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
        f"note: {PLACEHOLDER} - which reference it belongs to instead, and why\n"
        f"winner: {PLACEHOLDER} - id of the reference that must rank first on this near-miss "
        "(none = the log shows no failure)\n")
    return folder
