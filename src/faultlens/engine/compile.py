"""Compile every pattern (catalogue signals, fact extractors, structure) into one Hyperscan database.

Identical regexes are compiled once. The compiled database and the loaded catalogue are cached on
disk, keyed by the catalogue digest, so a warm run skips YAML, JSON Schema and compilation.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import catalogue as catalogue_mod
from ..errors import CatalogueError
from . import linear
from .failures import PATTERNS as FAILURE_PATTERNS

ENGINE_VERSION = 9
FACTS_DIR = Path(__file__).resolve().parent.parent / "facts"

STRUCTURE = {
    "traceback": r"Traceback \(most recent call last\):",
}


@dataclass(frozen=True)
class FactPattern:
    fact: str
    regex: str
    value: str | None = None
    normalise: str | None = None
    unless: str | None = None
    """A regex: a hit line that also matches it states no fact (e.g. advice text)."""


@dataclass
class Scanner:
    """Everything a scan needs, picklable except for the live Hyperscan database."""

    catalogue: catalogue_mod.Catalogue
    expressions: list[str]
    owners: list[list[tuple[str, str, str]]]
    """For each pattern id: (kind, owner, name) with kind signal|fact|structure."""
    every_hit: list[bool]
    """Per pattern id: report every matching line (error signals, structure), or only the
    first per chunk (facts, context signals: their presence and first line is what counts)."""
    facts: list[FactPattern]
    gpus: dict[str, str]
    db_bytes: bytes = b""
    single_db_bytes: bytes = b""
    """The same patterns, every one with single-match flags: big blocks are scanned with it in
    small parts first, and only the parts that hold needed hits again with `database`."""
    similarity: object = None
    """The TF-IDF index that names the references nearest an unexplained line (built with the
    scanner and cached with it, so naming a line does not unpickle the whole catalogue)."""
    _db: object = field(default=None, repr=False, compare=False)
    _single_db: object = field(default=None, repr=False, compare=False)
    _re: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def database(self):
        if self._db is None:
            import hyperscan

            self._db = hyperscan.loadb(self.db_bytes, hyperscan.HS_MODE_BLOCK)
            try:
                self._db.scratch = hyperscan.Scratch(self._db)
            except Exception:
                pass
        return self._db

    @property
    def single_database(self):
        if self._single_db is None:
            import hyperscan

            self._single_db = hyperscan.loadb(self.single_db_bytes, hyperscan.HS_MODE_BLOCK)
        return self._single_db

    def regex(self, pattern_id: int):
        """The linear-time (RE2) pattern that verifies a hit line and yields its groups."""
        compiled = self._re.get(pattern_id)
        if compiled is None:
            compiled = self._re[pattern_id] = linear.compiled(self.expressions[pattern_id])
        return compiled

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_db"] = None
        state["_single_db"] = None
        state["_re"] = {}
        return state


def _load_yaml(path: Path):
    import yaml

    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def hs_compile(expressions: list[str], every_hit: list[bool] | None = None):
    """Compile with Hyperscan; raise CatalogueError naming the first pattern that fails."""
    import hyperscan

    every_hit = every_hit or [True] * len(expressions)
    flags = [hyperscan.HS_FLAG_MULTILINE | (0 if every else hyperscan.HS_FLAG_SINGLEMATCH)
             for every in every_hit]
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(expressions=[e.encode() for e in expressions], ids=list(range(len(expressions))),
                   elements=len(expressions), flags=flags)
    except hyperscan.error as exc:
        bad = _first_failing(expressions)
        where = f": {bad}" if bad else ""
        raise CatalogueError(f"Hyperscan cannot compile the catalogue{where} ({exc})",
                             tip="lookarounds, backreferences and atomic groups are not supported") from None
    return db


def _first_failing(expressions: list[str]) -> str | None:
    import hyperscan

    for expr in expressions:
        try:
            hyperscan.Database().compile(expressions=[expr.encode()], ids=[0], elements=1,
                                         flags=[hyperscan.HS_FLAG_MULTILINE])
        except hyperscan.error:
            return expr
    return None


def build(cat: catalogue_mod.Catalogue) -> Scanner:
    facts = [FactPattern(f["fact"], f["regex"], f.get("value"), f.get("normalise"), f.get("unless"))
             for f in _load_yaml(FACTS_DIR / "patterns.yaml")]
    gpus = {str(k): str(v) for k, v in _load_yaml(FACTS_DIR / "gpus.yaml").items()}
    index: dict[str, int] = {}
    expressions: list[str] = []
    owners: list[list[tuple[str, str, str]]] = []

    def add(expr: str, owner: tuple[str, str, str]) -> None:
        pid = index.get(expr)
        if pid is None:
            pid = index[expr] = len(expressions)
            expressions.append(expr)
            owners.append([])
        owners[pid].append(owner)

    for ref in cat.references:
        for sig in ref.signals.values():
            add(sig.regex, ("signal", ref.id, sig.name))
    for i, fp in enumerate(facts):
        add(fp.regex, ("fact", str(i), fp.fact))
    for name, expr in STRUCTURE.items():
        add(expr, ("structure", "", name))
    for name, (expr, _kind, _priority) in FAILURE_PATTERNS.items():
        add(expr, ("structure", "", name))
    for expr in expressions:
        try:
            re.compile(expr)
        except re.error as exc:
            raise CatalogueError(f"Python cannot compile the pattern {expr!r}: {exc}") from None
        why = linear.problem(expr)
        if why:
            raise CatalogueError(f"the pattern {expr!r} cannot be matched in linear time: {why}")
    for fp in facts:
        why = fp.unless and linear.problem(fp.unless)
        if why:
            raise CatalogueError(f"the fact pattern's unless {fp.unless!r}: {why}")
    import hyperscan

    levels = {(ref.id, sig.name): sig.level for ref in cat.references for sig in ref.signals.values()}
    # facts that name many things (env vars) or may be rejected line by line need every hit too
    many = {str(i) for i, fp in enumerate(facts) if fp.normalise == "env" or fp.unless}
    every_hit = [any(kind == "structure" or (kind == "signal" and levels[(o, n)] == "error")
                     or (kind == "fact" and o in many) for kind, o, n in own) for own in owners]
    db_bytes = hyperscan.dumpb(hs_compile(expressions, every_hit))
    single_db_bytes = hyperscan.dumpb(hs_compile(expressions, [False] * len(expressions)))
    from .unexplained import Similarity

    return Scanner(catalogue=cat, expressions=expressions, owners=owners, every_hit=every_hit,
                   facts=facts, gpus=gpus, db_bytes=db_bytes, single_db_bytes=single_db_bytes,
                   similarity=Similarity(cat.references))


def cache_dir() -> Path:
    base = os.environ.get("FAULTLENS_CACHE") or os.environ.get("XDG_CACHE_HOME") or \
        os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "faultlens" if not os.environ.get("FAULTLENS_CACHE") else Path(base)


def _cache_key(root: Path) -> str:
    h = hashlib.sha256()
    h.update(catalogue_mod.stat_signature(root).encode())
    h.update(f"engine{ENGINE_VERSION}".encode())
    for name in ("patterns.yaml", "gpus.yaml"):
        h.update((FACTS_DIR / name).read_bytes())
    # the pickled catalogue holds model objects built by the loader: a change to either stales it
    pkg = Path(__file__).resolve().parent.parent
    for name in ("model.py", "catalogue.py", "engine/failures.py"):
        h.update((pkg / name).read_bytes())
    return h.hexdigest()[:24]


def load_scanner(root: str | Path | None = None, *, use_cache: bool = True) -> Scanner:
    """The compiled scanner for the catalogue at `root`, from the disk cache when it is current."""
    root = Path(root) if root else catalogue_mod.default_root()
    key = _cache_key(root)
    path = cache_dir() / f"scanner-{key}.pkl"
    if use_cache:
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
            pass
    scanner = build(catalogue_mod.load(root))
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(scanner, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home still works, only slower
    return scanner
