"""Linear-time regex matching for patterns that run on input text (RE2: no backtracking).

Every catalogue regex (signals, fact extractors, probes, `matches` conditions) that runs on a log
line, a pasted query or a command's output goes through here, never through Python's `re`: a
backtracking engine can take minutes on one crafted 4 KiB line. RE2 needs time proportional to
the text's length times the pattern's compiled program size, whatever the text.

RE2 and Hyperscan read `\\d`, `\\w`, `\\s` and `\\b` as ASCII classes; lint rejects any pattern
RE2 cannot compile or whose program is over MAX_PROGRAM instructions.
"""

from __future__ import annotations

import functools

MAX_PROGRAM = 20_000
"""Upper bound on a pattern's RE2 program size: the work per byte of text is bounded by it."""


class LinearError(ValueError):
    """A pattern the linear-time engine cannot run."""


@functools.lru_cache(maxsize=8192)
def compiled(expr: str):
    """The RE2 pattern for `expr`; LinearError when RE2 cannot run it."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the caller reports it; RE2 would print to stderr
    try:
        return re2.compile(expr, options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else "RE2 cannot compile it"
        raise LinearError(why.decode(errors="replace") if isinstance(why, bytes) else str(why)) from None


def search(expr: str, text: str | bytes):
    """The first match of `expr` in `text` (a re.Match-like object with groups), or None."""
    return compiled(expr).search(text)


def problem(expr: str) -> str | None:
    """Why the linear-time engine cannot run `expr`, with how to fix it; None when it can."""
    try:
        size = compiled(expr).programsize
    except LinearError as exc:
        return (f"the linear-time engine (RE2) cannot compile it ({exc}); RE2 has no lookarounds, "
                "backreferences, atomic groups, possessive quantifiers or \\Z (write $), and "
                "counted repeats go up to 1000 (nested ones multiplied): rewrite it without them")
    if size > MAX_PROGRAM:
        return (f"its RE2 program has {size} instructions (limit {MAX_PROGRAM}); lower large "
                "counted repeats such as .{0,5000} or split the alternation into several signals")
    return None
