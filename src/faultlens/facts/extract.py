"""Environment facts: read from log lines, merged with a snapshot, compared by reference conditions."""

from __future__ import annotations

import json
import re

from ..engine import linear
from ..engine.compile import FactPattern


def normalise(fp: FactPattern, match) -> tuple[str, str] | None:
    """(fact name, value) from a verified (linear-time) match of a fact pattern; None when it
    states no fact."""
    if fp.unless and linear.search(fp.unless, match.string):
        return None
    if fp.value is not None:
        try:
            value = fp.value.format(*([match.group(0)] + list(match.groups())))
        except (IndexError, KeyError):
            value = fp.value
    else:
        value = match.group(1) if match.groups() else match.group(0)
    if value is None:
        return None
    name = fp.fact
    if fp.normalise == "cuda_tag":  # cu121 -> 12.1, cu130 -> 13.0
        value = f"{value[:-1]}.{value[-1]}"
    elif fp.normalise == "sm":  # 90 -> 9.0, 120 -> 12.0
        value = f"{value[:-1]}.{value[-1]}"
    elif fp.normalise == "env":
        name = f"env.{match.group(1)}"
        value = match.group(2).strip("'\"")
    return name, value


def compute_capability_for(gpu_name: str, table: dict[str, str]) -> str | None:
    """Look a product name up in the GPU table; the longest matching fragment wins."""
    best = None
    for fragment, cc in table.items():
        # Python re is safe here: the pattern is an escaped literal of our GPU table between
        # fixed one-character lookarounds (no repetition), on a bounded product name
        if re.search(r"(?<![A-Za-z0-9])" + re.escape(fragment) + r"(?![0-9])", gpu_name):
            if best is None or len(fragment) > len(best[0]):
                best = (fragment, cc)
    return best[1] if best else None


def arch_in_list(capability: str, arch_list: str) -> bool | None:
    """Can a build whose CUDA arch list is `arch_list` run on a GPU of `capability`? None if unreadable.

    `arch_list` is what torch.cuda.get_arch_list() holds ("sm_50 sm_86 compute_90", commas or
    spaces). SASS for sm_XY runs on the same major at minor >= Y ("a"/"f" targets only on exactly
    XY); PTX (compute_XY) is JIT-compiled for any capability >= XY.
    """
    m = re.fullmatch(r"\s*(\d{1,2})\.(\d)\s*", capability)
    entries = re.findall(r"\b(sm|compute)_(\d{1,2})(\d)([af]?)\b", arch_list)
    if not m or not entries:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    for kind, e_major, e_minor, suffix in entries:
        e_major, e_minor = int(e_major), int(e_minor)
        if kind == "compute" and not suffix and (e_major, e_minor) <= (major, minor):
            return True
        if kind == "sm" and e_major == major and (e_minor == minor if suffix else e_minor <= minor):
            return True
    return False


def derive_arch_support(facts: dict[str, str]) -> dict[str, str]:
    """torch.arch_supported (yes/no): the GPU's capability against the build's arch list."""
    if "torch.arch_supported" not in facts and "torch.arch_list" in facts \
            and "gpu.compute_capability" in facts:
        ok = arch_in_list(facts["gpu.compute_capability"], facts["torch.arch_list"])
        if ok is not None:
            facts["torch.arch_supported"] = "yes" if ok else "no"
    return facts


def derive(facts: dict[str, str], gpus: dict[str, str]) -> dict[str, str]:
    """Facts implied by others (compute capability from the GPU name, arch support)."""
    if "gpu.compute_capability" not in facts and "gpu.name" in facts:
        cc = compute_capability_for(facts["gpu.name"], gpus)
        if cc:
            facts["gpu.compute_capability"] = cc
    return derive_arch_support(facts)


def load_snapshot(path: str) -> dict[str, str]:
    """Facts from `faultlens env --json` output, or any flat JSON map of fact names to values."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object of facts")
    return snapshot_facts(data)


def snapshot_facts(data: dict) -> dict[str, str]:
    """The flat fact map of a snapshot (`{"facts": {...}}`) or of a bare map of facts."""
    if isinstance(data.get("facts"), dict):
        data = data["facts"]
    return derive_arch_support({str(k): str(v) for k, v in data.items()
                                if v is not None and not isinstance(v, (dict, list))})


def compare(actual: str | None, op: str, expected: str,
            facts: dict[str, str] | None = None) -> bool | None:
    """Evaluate `actual op expected`; None when a fact is unknown.

    `expected` may name another fact as '@name' (e.g. torch.cuda > @cuda.version).
    """
    if expected.startswith("@"):
        expected = (facts or {}).get(expected[1:])
        if expected is None:
            return None
    if actual is None:
        return None
    if op == "matches":  # a catalogue regex on a value read from input: linear time
        try:
            return linear.search(expected, actual) is not None
        except linear.LinearError:
            return None
    if op == "in":
        try:
            options = json.loads(expected)
        except ValueError:
            options = [expected]
        return actual in [str(o) for o in options]
    if op in ("==", "!="):
        equal = _as_version(actual) == _as_version(expected) \
            if _as_version(actual) is not None and _as_version(expected) is not None \
            else actual.strip().lower() == expected.strip().lower()
        return equal if op == "==" else not equal
    a, b = _as_version(actual), _as_version(expected)
    if a is None or b is None:
        return None
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _as_version(text: str):
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except InvalidVersion:
        return None
