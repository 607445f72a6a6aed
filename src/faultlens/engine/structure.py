"""From raw hits to structure: verified signal lines, facts, tracebacks, per-process streams."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..facts.extract import derive, normalise
from ..logs import prefix as prefix_mod
from ..logs.tracebacks import parse_traceback
from ..model import Line, Traceback
from .compile import Scanner
from .scan import FileScan


@dataclass
class Observations:
    """Everything the scorer needs from a job's logs."""

    signals: dict[tuple[str, str], list[Line]] = field(default_factory=lambda: defaultdict(list))
    """(reference id, signal name) -> verified lines, in log order."""
    facts: dict[str, str] = field(default_factory=dict)
    tracebacks: list[Traceback] = field(default_factory=list)
    file_order: dict[str, int] = field(default_factory=dict)
    invalid_utf8: int = 0
    failure_lines: list[tuple[Line, str]] = field(default_factory=list)
    """(line, structural failure pattern name): lines that say the run failed, in scan order."""

    def lines_of(self, ref_id: str, name: str) -> list[Line]:
        return self.signals.get((ref_id, name), [])


def _decode(raw: bytes, obs: Observations) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        obs.invalid_utf8 += 1
        return raw.decode("utf-8", "replace")


def to_line(file: str, number: int, raw_text: str) -> Line:
    pre, message = prefix_mod.parse(raw_text)
    return Line(file=file, number=number, text=message, prefix=pre)


def _paste_lines(lines: list[int], norm) -> list[int]:
    """Verified hit lines of one pattern; a hit on a line rebuilt from a paste (joined wrapped
    lines, an exception out of its repr) counts only if the pattern hit none of the lines it came
    from.
    Shorter joins are considered first, so a message is reported at the line where it starts."""
    if norm is None:
        return lines
    limit = norm.original_lines
    own = {n for n in lines if n <= limit}
    out = [n for n in lines if n <= limit]
    rebuilt = sorted((n for n in lines if n > limit),
                     key=lambda n: (norm.origin(n)[1] - norm.origin(n)[0], norm.origin(n)[0]))
    for n in rebuilt:
        first, last = norm.origin(n)
        if any(k in own for k in range(first, last + 1)):
            continue
        own.update(range(first, last + 1))
        out.append(n)
    return out


def observe(scanner: Scanner, scans: list[FileScan]) -> Observations:
    obs = Observations()
    for index, fs in enumerate(scans):
        obs.file_order[fs.name] = index
        decoded: dict[int, str] = {}
        parsed: dict[int, Line] = {}

        norm = fs.paste

        def line_at(n: int, fs=fs, decoded=decoded, parsed=parsed, norm=norm) -> Line:
            if n not in parsed:
                parsed[n] = to_line(fs.name, norm.origin(n)[0] if norm else n, decoded[n])
            return parsed[n]

        for pid in sorted(fs.hits):
            hits = fs.hits[pid]
            regex = scanner.regex(pid)
            verified = {}
            for n in hits.lines:
                raw = fs.lines.get(n)
                if raw is None:
                    continue
                if n not in decoded:
                    decoded[n] = _decode(raw, obs)
                match = regex.search(decoded[n])
                if match:  # else a Hyperscan match that spanned lines
                    verified[n] = match
            for n in _paste_lines(list(verified), norm):
                match = verified[n]
                for kind, owner, name in scanner.owners[pid]:
                    if kind == "signal":
                        obs.signals[(owner, name)].append(line_at(n))
                    elif kind == "fact":
                        fact = normalise(scanner.facts[int(owner)], match)
                        if fact and fact[0] not in obs.facts:
                            obs.facts[fact[0]] = fact[1]
                    elif kind == "structure" and name != "traceback":
                        obs.failure_lines.append((line_at(n), name))
        for header_no, header_raw, window in fs.windows:
            if norm and header_no > norm.original_lines:
                continue
            head = to_line(fs.name, header_no, _decode(header_raw, obs))
            body = [to_line(fs.name, n, _decode(raw, obs)) for n, raw in window
                    if not norm or n <= norm.original_lines]
            same = [ln for ln in body if ln.prefix.key == head.prefix.key]
            tb = parse_traceback([head] + same)
            if tb:
                obs.tracebacks.append(tb)
    for key in obs.signals:
        obs.signals[key].sort(key=lambda ln: (obs.file_order[ln.file], ln.number))
    derive(obs.facts, scanner.gpus)
    return obs
