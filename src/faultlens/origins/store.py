"""The origins index on disk: a SQLite file shipped gzip-compressed with the package, unpacked
once into the cache folder (like the compiled catalogue) and opened read-only.

Tables: `projects(name, repo, tag, prefix, licence, releases)` (releases: JSON list, oldest
first) and `messages(id, project, path, line, function, kind, template, releases, key1, key2)`:
one row per distinct (project, path, function, kind, template), `releases` the comma-separated
releases that print it, `line` its line at the newest of them. key1/key2 are the template's two
rarest whole words (lower-case): a line can only match a template whose key words it contains;
the `keys` table holds them apart (key1, key2, id), so that filter reads no message text.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

from .template import WILD, is_prefix, key_tokens

DATA_DIR = Path(__file__).resolve().parent / "data"
INDEX_NAME = "origins.sqlite.gz"
MANIFEST_NAME = "manifest.json"

SCHEMA = """
CREATE TABLE projects(name TEXT PRIMARY KEY, repo TEXT, tag TEXT, prefix TEXT, licence TEXT,
                      releases TEXT);
CREATE TABLE messages(id INTEGER PRIMARY KEY, project TEXT, path TEXT, line INTEGER,
                      function TEXT, kind TEXT, template TEXT, releases TEXT, key1 TEXT,
                      key2 TEXT);
"""
INDEXES = """
CREATE TABLE keys(key1 TEXT, key2 TEXT, id INTEGER, PRIMARY KEY (key1, key2, id)) WITHOUT ROWID;
INSERT INTO keys SELECT key1, key2, id FROM messages;
CREATE INDEX messages_function ON messages(project, function);
CREATE INDEX messages_path ON messages(project, path);
"""


KEY_WITHIN = 80
STRING_OWNERS = ["cuda-runtime", "nccl", "glibc", "cpython", "torch"]
"""Who a library string belongs to when several projects' libraries carry it (torch's wheels
link parts of the CUDA runtime and NCCL statically; extensions inline torch's headers)."""
_VENDORED = re.compile(r"-[0-9a-f]{8}\.so")


def _keys_of(template: str) -> list[str]:
    """The words a line must hold to be matched against `template`: those before its second
    placeholder when there are two of them (a line is often cut inside a value: vLLM's 'max seq
    len (1048576),'), else those of its first KEY_WITHIN characters, else all."""
    second = template.find(WILD, template.find(WILD) + 1)
    if second > 0:
        early = key_tokens(template, min(second, KEY_WITHIN))
        if len(set(early)) >= 2:
            return early
    return key_tokens(template, KEY_WITHIN) or key_tokens(template)


class IndexMissing(Exception):
    pass


def _version_key(v: str):
    from packaging.version import InvalidVersion, Version
    try:
        return (0, Version(v.lstrip("v")), v)
    except InvalidVersion:
        return (1, v, v)


def aggregate(releases: dict[str, dict[str, list]], left_out: set[str] | frozenset = frozenset()
              ) -> tuple[dict[str, list[str]], list[tuple]]:
    """Per-release rows -> (project -> ordered releases, merged rows). A template a compiled
    library carries that source code already names is credited to the source; one several
    projects' libraries carry, to its owner (STRING_OWNERS), not to every library that copies it;
    `left_out`: library strings never indexed (the CUDA runtime's, linked statically by NCCL)."""
    ordered = {p: sorted(r, key=_version_key) for p, r in releases.items()}
    merged: dict[tuple, dict] = {}
    for project, by_release in releases.items():
        for version in ordered[project]:
            for template, path, line, function, kind in by_release[version]:
                key = (project, path, function, kind, template)
                entry = merged.setdefault(key, {"releases": [], "line": line})
                if not entry["releases"] or entry["releases"][-1] != version:
                    entry["releases"].append(version)
                entry["line"] = line
    # libraries a wheel vendors (auditwheel names them lib-<hash>.so) are not the project's
    merged = {k: e for k, e in merged.items() if not (k[3] == "string" and (
        _VENDORED.search(k[1]) or k[4] in left_out))}
    sourced = {k[4] for k in merged if k[3] != "string"}
    owner: dict[str, int] = {}
    for k in merged:
        if k[3] == "string" and k[0] in STRING_OWNERS:
            rank = STRING_OWNERS.index(k[0])
            owner[k[4]] = min(owner.get(k[4], rank), rank)
    rows = []
    for (project, path, function, kind, template), e in merged.items():
        rank = STRING_OWNERS.index(project) if project in STRING_OWNERS else len(STRING_OWNERS)
        # a prefix label ('CUDA error: …') is printed by several projects' code and libraries,
        # each with its own release list: every one is kept
        if kind == "string" and not is_prefix(template) and (
                template in sourced or owner.get(template, rank) < rank):
            continue
        rows.append((project, path, e["line"], function, kind, template, ",".join(e["releases"])))
    return ordered, rows


def write_index(releases: dict[str, dict[str, list]], specs: dict[str, dict], out_dir: Path,
                no_binaries: dict[str, list[str]] | None = None,
                left_out: set[str] | frozenset = frozenset()) -> Path:
    """Write the index and its manifest. `no_binaries`: per project, releases whose compiled
    libraries were not read (their library strings are missing, not removed); `left_out`: library
    strings never indexed (see aggregate)."""
    ordered, rows = aggregate(releases, left_out)
    # key words come from the start of a message: a line cut short (wrapped) still has them
    tokens_of = {r[5]: _keys_of(r[5]) for r in rows}
    df = Counter(t for toks in tokens_of.values() for t in set(toks))
    tmp = out_dir / "origins.sqlite"
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    db.executescript(SCHEMA)
    for project, versions in ordered.items():
        s = specs[project]
        db.execute("INSERT INTO projects VALUES (?,?,?,?,?,?)",
                   (project, s.get("repo"), s.get("tag"), s.get("prefix", ""), s.get("licence"),
                    json.dumps(versions)))
    out_rows = []
    for project, path, line, function, kind, template, rel in rows:
        keys = sorted(set(tokens_of[template]), key=lambda t: (df[t], t))
        if not keys:
            continue
        out_rows.append((project, path, line, function, kind, template, rel, keys[0],
                         keys[1] if len(keys) > 1 else ""))
    db.executemany("INSERT INTO messages(project, path, line, function, kind, template, releases,"
                   " key1, key2) VALUES (?,?,?,?,?,?,?,?,?)", out_rows)
    db.executescript(INDEXES)
    db.commit()
    db.execute("VACUUM")
    db.close()
    import gzip
    import shutil

    with open(tmp, "rb") as src, gzip.open(out_dir / INDEX_NAME, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    tmp.unlink()
    counts = Counter(r[0] for r in out_rows)
    manifest = {
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "messages": len(out_rows),
        "projects": {p: {"repo": specs[p].get("repo"), "licence": specs[p].get("licence"),
                         "releases": ordered[p], "messages": counts.get(p, 0),
                         **({"library_strings": [r for r in ordered[p]
                                                 if r not in (no_binaries or {}).get(p, [])]}
                            if specs[p].get("binaries") else {}),
                         "source": "git tags" if "git" in specs[p] else
                         f"PyPI package {specs[p].get('pip')}"}
                     for p in ordered},
    }
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    return out_dir / INDEX_NAME


def _cache_dir() -> Path:
    from ..engine.compile import cache_dir
    return cache_dir()


def unpacked(index_gz: Path) -> Path:
    """The SQLite file for a gzip-compressed index, unpacked into the cache once."""
    if not index_gz.is_file():
        raise IndexMissing(f"{index_gz}: origins index not found")
    st = index_gz.stat()
    key = hashlib.sha256(f"{index_gz.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()
    target = _cache_dir() / f"origins-{key[:20]}.sqlite"
    if not target.is_file():
        import gzip
        import shutil

        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(f".{os.getpid()}.part")
        with gzip.open(index_gz, "rb") as src, open(part, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(part, target)
    return target


def connect(index: Path | None = None) -> sqlite3.Connection:
    """A read-only connection to the index (the shipped one by default)."""
    path = Path(index) if index else DATA_DIR / INDEX_NAME
    if path.suffix == ".gz":
        path = unpacked(path)
    elif not path.is_file():
        raise IndexMissing(f"{path}: origins index not found")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
