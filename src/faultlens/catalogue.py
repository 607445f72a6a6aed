"""Load the catalogue of references: YAML files -> validated, frozen `Reference` objects.

The YAML is parsed and validated only when the catalogue changes; the result is cached on disk
(pickled, keyed by the catalogue digest) together with the compiled scanner, so a warm
`faultlens diagnose` never imports yaml or jsonschema.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from functools import cached_property
from pathlib import Path

from .errors import CatalogueError
from .model import (
    Check,
    FactCondition,
    Measure,
    Fingerprint,
    Fix,
    Probe,
    Reference,
    Sibling,
    Signal,
    Source,
    Variant,
    Window,
)

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "schema" / "reference-v1.json"


class Catalogue:
    """The validated references, immutable.

    Pickled (in the scanner cache) as one blob per reference: a warm `faultlens diagnose`
    unpickles only the references its log matched (`get`), not the whole catalogue, so the cost of
    loading it does not grow with the catalogue. `references` and `by_id` give every reference.
    """

    def __init__(self, root: str, digest: str, references: tuple[Reference, ...]):
        self.root = root
        self.digest = digest
        self._refs: dict[str, Reference] = {ref.id: ref for ref in references}
        self._ids = tuple(self._refs)
        self._blobs: dict[str, bytes] = {}
        self.unconditional = tuple(ref.id for ref in references
                                   if not ref.fingerprint.all and not ref.fingerprint.any)
        """References whose fingerprint requires no line: evaluated on every log."""

    @property
    def ids(self) -> tuple[str, ...]:
        """Every reference id, in catalogue order (no reference is unpickled)."""
        return self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def get(self, ref_id: str) -> Reference | None:
        """One reference by id, unpickled on first use; None when there is no such reference."""
        ref = self._refs.get(ref_id)
        if ref is None and ref_id in self._blobs:
            ref = self._refs[ref_id] = pickle.loads(self._blobs.pop(ref_id))
        return ref

    @cached_property
    def references(self) -> tuple[Reference, ...]:
        """Every reference, in catalogue order (unpickled once; the catalogue is immutable)."""
        return tuple(self.get(rid) for rid in self._ids)

    @cached_property
    def by_id(self) -> dict[str, Reference]:
        """References by id (computed once; the catalogue is immutable)."""
        return dict(zip(self._ids, self.references))

    def __getstate__(self) -> dict:
        blobs = dict(self._blobs)
        for rid, ref in self._refs.items():
            blobs[rid] = pickle.dumps(ref, protocol=pickle.HIGHEST_PROTOCOL)
        return {"root": self.root, "digest": self.digest, "ids": self._ids, "blobs": blobs,
                "unconditional": self.unconditional}

    def __setstate__(self, state: dict) -> None:
        self.root, self.digest = state["root"], state["digest"]
        self._ids, self._blobs, self._refs = state["ids"], state["blobs"], {}
        self.unconditional = state["unconditional"]


def default_root() -> Path:
    """The catalogue to use: $FAULTLENS_CATALOGUE, the source checkout's, or the packaged copy."""
    env = os.environ.get("FAULTLENS_CATALOGUE")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    checkout = here.parent.parent / "catalogue"
    if checkout.is_dir():
        return checkout
    return here / "catalogue"


def reference_files(root: Path) -> list[Path]:
    if not root.is_dir():
        raise CatalogueError(f"{root}: catalogue folder not found",
                             tip="set FAULTLENS_CATALOGUE to the folder that holds <category>/<id>/reference.yaml")
    return sorted(root.glob("*/*/reference.yaml"))


def digest_of(root: Path, files: list[Path] | None = None) -> str:
    """sha256 over every reference file's relative path and content, and the schema version."""
    files = reference_files(root) if files is None else files
    h = hashlib.sha256(f"schema{SCHEMA_VERSION}".encode())
    for path in files:
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:20]


def stat_signature(root: Path) -> str:
    """sha256 over every reference file's relative path, size and modification time: what the
    scanner cache is keyed on, so a warm run stats the catalogue instead of reading it."""
    if not root.is_dir():
        reference_files(root)  # raises the clear error
    h = hashlib.sha256(f"schema{SCHEMA_VERSION}".encode())
    for cat in sorted(os.scandir(root), key=lambda e: e.name):
        if not cat.is_dir():
            continue
        for ref in sorted(os.scandir(cat.path), key=lambda e: e.name):
            try:
                st = os.stat(os.path.join(ref.path, "reference.yaml"))
            except (FileNotFoundError, NotADirectoryError):
                continue
            h.update(f"{cat.name}/{ref.name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:20]


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def parse_yaml(path: Path) -> dict:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except yaml.YAMLError as exc:
        raise CatalogueError(f"{path}: not valid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise CatalogueError(f"{path}: expected a mapping of fields at the top level")
    return data


def schema_problems(data: dict, schema: dict) -> list[str]:
    """Schema violations as messages that say how to fix them."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        if err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else err.message
            problems.append(f"{where}: add a field called '{missing}'"
                            + _field_hint(missing))
        elif err.validator == "additionalProperties":
            problems.append(f"{where}: {err.message}; remove it or check its spelling against "
                            f"src/faultlens/schema/reference-v1.json")
        elif err.validator == "oneOf" and where.startswith("signals"):
            problems.append(f"{where}: a signal needs exactly one of 'regex' or 'frame'")
        elif err.validator == "oneOf" and "checks" in where:
            problems.append(f"{where}: a check needs 'signal', or 'fact' + 'op' + 'value', "
                            "or 'how' (a manual check)")
        elif err.validator == "minLength":
            problems.append(f"{where}: too short ({err.message}); write it out specifically")
        elif err.validator == "pattern" and where.endswith("url"):
            problems.append(f"{where}: sources must be https:// URLs of a specific issue, PR or doc")
        else:
            problems.append(f"{where}: {err.message}")
    return problems


def _field_hint(field: str) -> str:
    hints = {
        "sources": " with at least one https:// URL of a specific issue, pull request or doc section",
        "checks": " with at least one check that separates this failure from a sibling",
        "fix": " with the best fix first and why it is better",
        "signals": " with at least one named regex",
    }
    return hints.get(field, "")


def _frame_regex(path_regex: str) -> str:
    # never across a line end: a context pattern reports only its first match, and a match that
    # spans lines is no match at all when its line is verified
    return r'File "[^"\n]*' + path_regex + r'[^"\n]*", line \d+'


def _window(raw: dict | None) -> Window | None:
    if not raw:
        return None
    return Window(lines=raw.get("lines"), seconds=raw.get("seconds"),
                  same_process=bool(raw.get("same_process", False)))


def _check(raw: dict) -> Check:
    value = raw.get("value")
    return Check(
        id=raw["id"], text=raw["text"], signal=raw.get("signal"), absent=raw.get("absent", "unknown"),
        fact=raw.get("fact"), op=raw.get("op"),
        value=None if value is None else _value_str(value), how=raw.get("how"),
        measure=tuple(Measure(m["signal"], m["regex"], m["holds"], m.get("show", ""))
                      for m in raw.get("measure", ())),
    )


def _value_str(value) -> str:
    if isinstance(value, list):
        return json.dumps([str(v) for v in value])
    return str(value)


def _fix(raw: dict) -> Fix:
    return Fix(do=raw["do"].strip(), why=(raw.get("why") or "").strip())


def build_reference(data: dict, folder: Path) -> Reference:
    """Turn validated YAML data into a `Reference`."""
    fp = data["fingerprint"]
    required = set(fp.get("all", ())) | set(fp.get("any", ()))
    signals = {}
    for name, raw in data["signals"].items():
        level = raw.get("level", "context")
        # by default an error line the fingerprint requires identifies the class on its own
        core = raw.get("core", level == "error" and name in required)
        regex, kind = (_frame_regex(raw["frame"]), "frame") if "frame" in raw else (raw["regex"], "line")
        signals[name] = Signal(name, regex, kind, level, raw.get("explain", ""), core=bool(core),
                               window=_window(raw.get("window")), origin=raw.get("origin", ""))
    return Reference(
        id=data["id"], title=data["title"].strip(), category=data["category"],
        severity=data["severity"], summary=data["summary"].strip(),
        mechanism=data["mechanism"].strip(),
        symptoms=tuple(data["symptoms"]), affects=tuple(data["affects"]),
        signals=signals,
        fingerprint=Fingerprint(**{k: tuple(fp.get(k, ())) for k in
                                   ("all", "any", "support", "none", "order")},
                                window=_window(fp.get("window"))),
        checks=tuple(_check(c) for c in data["checks"]),
        fix=tuple(_fix(f) for f in data["fix"]),
        sources=tuple(Source(s["url"], s.get("note", "")) for s in data["sources"]),
        role=data.get("role", "initiating"), status=data.get("status", "stable"),
        facts=tuple(FactCondition(f["fact"], f["op"], _value_str(f["value"]),
                                  float(f.get("weight", 1)), f.get("explain", ""))
                    for f in data.get("facts", ())),
        siblings=tuple(Sibling(s["id"], s["distinguish"]) for s in data.get("siblings", ())),
        downstream_of=tuple(data.get("downstream_of", ())),
        preflight=tuple(FactCondition(c["fact"], c["op"], _value_str(c["value"]))
                        for c in (data.get("preflight") or {}).get("all", ())),
        preflight_explain=((data.get("preflight") or {}).get("explain") or "").strip(),
        preflight_severity=(data.get("preflight") or {}).get("severity", ""),
        probes=tuple(Probe(id=p["id"], kind=p["kind"], explain=p["explain"].strip(),
                           glob=p.get("glob"), bytes=int(p.get("bytes", 512)),
                           pattern=p.get("pattern"), run=tuple(p.get("run", ())),
                           name=p.get("name"), spec=p.get("spec"))
                     for p in data.get("probes", ())),
        variants=tuple(
            Variant(id=v["id"], title=v["title"], all=tuple(v.get("all", ())),
                    any=tuple(v.get("any", ())),
                    checks=tuple(_check(c) for c in v.get("checks", ())),
                    fix=tuple(_fix(f) for f in v.get("fix", ())))
            for v in data.get("variants", ())),
        path=str(folder),
    )


def semantic_problems(ref: Reference) -> list[str]:
    """Problems the schema cannot see: names that refer to nothing."""
    problems = []
    names = set(ref.signals)
    fp = ref.fingerprint
    for part in ("all", "any", "support", "none", "order"):
        for name in getattr(fp, part):
            if name not in names:
                problems.append(f"fingerprint/{part}: '{name}' is not a signal of this reference; "
                                f"define it under 'signals' or remove it")
    checks = list(ref.checks) + [c for v in ref.variants for c in v.checks]
    for check in checks:
        if check.signal and check.signal not in names:
            problems.append(f"checks/{check.id}: signal '{check.signal}' is not defined under 'signals'")
    for variant in ref.variants:
        for name in variant.all + variant.any:
            if name not in names:
                problems.append(f"variants/{variant.id}: '{name}' is not a signal of this reference")
    ids = [c.id for c in ref.checks]
    if len(ids) != len(set(ids)):
        problems.append("checks: two checks share an id; give each a distinct id")
    if ref.severity == "info" and ref.role == "consequence":
        problems.append("role: an info reference cannot be a consequence; drop 'role'")
    return problems


def load(root: Path | str | None = None, *, validate: bool = True) -> Catalogue:
    """Load and validate every reference under `root`. Raises CatalogueError on the first bad file."""
    root = Path(root) if root else default_root()
    files = reference_files(root)
    schema = load_schema() if validate else None
    refs = []
    seen: dict[str, Path] = {}
    for path in files:
        data = parse_yaml(path)
        if validate:
            problems = schema_problems(data, schema)
            if problems:
                raise CatalogueError(f"{path}: {problems[0]}",
                                     tip="run 'faultlens lint' to see every problem")
        ref = build_reference(data, path.parent)
        if validate:
            problems = semantic_problems(ref)
            if problems:
                raise CatalogueError(f"{path}: {problems[0]}",
                                     tip="run 'faultlens lint' to see every problem")
        if ref.id in seen:
            raise CatalogueError(f"{path}: id '{ref.id}' is already used by {seen[ref.id]}")
        seen[ref.id] = path
        refs.append(ref)
    return Catalogue(root=str(root), digest=digest_of(root, files), references=tuple(refs))
