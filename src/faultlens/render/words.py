"""Small wording helpers shared by the renderers: plurals, first sentences, repeated fixes."""

from __future__ import annotations

import re

from ..model import Fix


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 line`, `2 lines`, `1 traceback`."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


_SENTENCE_END = re.compile(r"(?<=[A-Za-z0-9)\"'`])[.;:] +(?=[A-Z(\"'`])|; ")


def first_sentence(text: str) -> str:
    """The first sentence (or clause before a semicolon) of a check or fix."""
    text = " ".join(text.split())
    for m in _SENTENCE_END.finditer(text):
        if m.start() > 20:
            return text[: m.start()]
    return text.rstrip(".")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]{3,}", text.lower()))


def dedupe_fixes(fixes: tuple[Fix, ...] | list[Fix] | list[dict]) -> list:
    """The fixes without those that repeat an earlier one (the same text, or nearly all of its
    words: a variant's fix and the reference's general fix often say the same thing)."""
    kept: list[Fix] = []
    seen: list[set[str]] = []
    for f in fixes:
        words = _words(f["do"] if isinstance(f, dict) else f.do)
        if any(words and s and len(words & s) / min(len(words), len(s)) >= 0.8 for s in seen):
            continue
        kept.append(f)
        seen.append(words)
    return kept
