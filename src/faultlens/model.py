"""The data model: references from the catalogue, evidence from a log, and the report.

Every class is a frozen dataclass so a loaded catalogue can be cached and shared safely.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("failure", "warning", "info")
ROLES = ("initiating", "consequence")
CHECK_STATUSES = ("pass", "fail", "unknown", "manual")


@dataclass(frozen=True)
class Window:
    """How close a context line must be to the reference's error line to count as its context."""

    lines: int | None = None
    """At most this many lines before or after the error line, in the same file."""
    seconds: float | None = None
    """At most this many seconds apart, when both lines carry a timestamp."""
    same_process: bool = False
    """Printed by the same process or rank (when both lines name one)."""


@dataclass(frozen=True)
class Signal:
    """A named pattern of a reference, matched against single log lines."""

    name: str
    """Key in the reference's `signals` map."""
    regex: str
    """The pattern as compiled (a `frame` signal is already expanded to a frame-line regex)."""
    kind: str = "line"
    """`line` (any log line) or `frame` (a `File "...", line N, in f` traceback frame)."""
    level: str = "context"
    """`error` (a line that reports the failure), `warning`, `info` or `context`."""
    explain: str = ""
    """What the line means, shown beside the evidence."""
    core: bool = False
    """The line identifies the failure class on its own: with it present and the fingerprint's
    other required context absent, the reference is still a `possible` candidate."""
    window: Window | None = None
    """Counts only near the reference's error line (overrides the fingerprint's window)."""
    origin: str = ""
    """'none: <reason>' when no indexed upstream code prints the message (faultlens.origins)."""


@dataclass(frozen=True)
class FactCondition:
    """An environment precondition: evidence for (weight > 0) or against (weight < 0)."""

    fact: str
    op: str
    value: str
    weight: float = 1.0
    explain: str = ""


@dataclass(frozen=True)
class Measure:
    """A check decided from figures the log prints (see engine/measure.py)."""

    signal: str
    """Whose lines to read (several names separated by spaces)."""
    regex: str
    """A regex with named groups (the figures), run with the linear-time engine (RE2)."""
    holds: str
    """The comparison that makes the check pass, e.g. `unallocated < request`."""
    show: str = ""
    """The figures in words, `{request} requested`; `{count(rank)}`, `{list(rank)}` aggregate."""


@dataclass(frozen=True)
class Check:
    """One item of the evidence checklist."""

    id: str
    text: str
    signal: str | None = None
    """Decided from the log: pass when this signal is present."""
    absent: str = "unknown"
    """Status when `signal` is absent: `fail` if the line is always printed, else `unknown`."""
    fact: str | None = None
    op: str | None = None
    value: str | None = None
    how: str | None = None
    """For manual checks: exactly how to run it."""
    measure: tuple[Measure, ...] = ()
    """Decided from the log's own figures when they are printed (else `how` applies)."""


@dataclass(frozen=True)
class Probe:
    """A read-only look at the environment; a hit means this reference's trap is present."""

    id: str
    kind: str
    """file_header | command | package | env"""
    explain: str
    glob: str | None = None
    bytes: int = 512
    pattern: str | None = None
    run: tuple[str, ...] = ()
    name: str | None = None
    spec: str | None = None


@dataclass(frozen=True)
class Fix:
    """One step of a fix: what to do, and why it works."""

    do: str
    why: str = ""


@dataclass(frozen=True)
class Sibling:
    """A look-alike reference, and what tells the two apart."""

    id: str
    distinguish: str


@dataclass(frozen=True)
class Source:
    """A public source of a reference, and what it shows."""

    url: str
    note: str = ""


@dataclass(frozen=True)
class Fingerprint:
    """Which signals a log must show (all, any), which support or rule out, and their order."""

    all: tuple[str, ...] = ()
    any: tuple[str, ...] = ()
    support: tuple[str, ...] = ()
    none: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    window: Window | None = None
    """Default window for the context signals (every signal that is not error-level)."""


@dataclass(frozen=True)
class Variant:
    """A named sub-case: chosen when its `all` signals and one of its `any` signals are present."""

    id: str
    title: str
    all: tuple[str, ...] = ()
    any: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    fix: tuple[Fix, ...] = ()


@dataclass(frozen=True)
class Reference:
    """One error reference of the catalogue: a failure class, its fingerprint, checks and fix."""

    id: str
    title: str
    category: str
    severity: str
    summary: str
    mechanism: str
    symptoms: tuple[str, ...]
    affects: tuple[str, ...]
    signals: dict[str, Signal]
    fingerprint: Fingerprint
    checks: tuple[Check, ...]
    fix: tuple[Fix, ...]
    sources: tuple[Source, ...]
    role: str = "initiating"
    """`consequence`: usually the result of another failure (a watchdog timeout, a launcher's
    summary); ranked below any initiating failure found in the same job."""
    status: str = "stable"
    facts: tuple[FactCondition, ...] = ()
    siblings: tuple[Sibling, ...] = ()
    downstream_of: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = ()
    preflight: tuple[FactCondition, ...] = ()
    """Conditions that together predict this failure from the environment alone."""
    preflight_explain: str = ""
    preflight_severity: str = ""
    """Severity of a preflight finding, when it differs from `severity`."""
    probes: tuple[Probe, ...] = ()
    path: str = ""
    """Folder of the reference, for lint messages and examples."""


@dataclass(frozen=True)
class Prefix:
    """What a line's prefixes say about who printed it and when."""

    rank: int | None = None
    pid: int | None = None
    process: str | None = None
    timestamp: float | None = None
    """Seconds; formats without a year assume one, so compare within one log."""
    level: str | None = None

    @property
    def key(self) -> str:
        """A stable name for the process stream the line belongs to."""
        if self.rank is not None:
            return f"rank{self.rank}"
        if self.process or self.pid is not None:
            return f"{self.process or 'process'} pid={self.pid}" if self.pid is not None else self.process
        return ""


@dataclass(frozen=True)
class Line:
    """One log line: file, 1-based number, text, and the prefix the reader parsed."""

    file: str
    number: int
    text: str
    """The line with prefixes, ANSI codes and progress-bar carriage returns removed."""
    prefix: Prefix = field(default_factory=Prefix)


@dataclass(frozen=True)
class Frame:
    """One frame of a Python traceback."""

    path: str
    line: int
    function: str


@dataclass(frozen=True)
class Traceback:
    """A Python traceback found in a log: its frames and the exception line that ends it."""

    file: str
    start: int
    """Line number of the `Traceback (most recent call last):` header."""
    process: str
    frames: tuple[Frame, ...]
    exception: str
    """The final exception line, e.g. `RuntimeError: CUDA out of memory...`."""
    exception_line: int
    chained_from: tuple[str, ...] = ()
    """Exception lines of the earlier tracebacks in the same chain."""

    @property
    def final_exception(self) -> str:
        return self.exception


@dataclass(frozen=True)
class Evidence:
    """A log line that supports a diagnosis, with the signal it matched."""

    file: str
    line: int
    text: str
    signal: str
    process: str = ""
    explain: str = ""
    origin: Origin | None = None
    """The upstream code that prints this line (faultlens.origins), when the index knows it."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check of a reference against the log."""

    id: str
    text: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class Rejection:
    """Why a look-alike reference ranks below a diagnosis."""

    id: str
    reason: str


@dataclass(frozen=True)
class Diagnosis:
    """One candidate of the differential diagnosis, ranked, with its evidence, checks and fix."""

    id: str
    title: str
    category: str
    severity: str
    confidence: float
    evidence: tuple[Evidence, ...]
    checks: tuple[CheckResult, ...]
    fix: tuple[Fix, ...]
    rejected_siblings: tuple[Rejection, ...]
    sources: tuple[Source, ...]
    summary: str = ""
    variant: str | None = None
    variant_title: str | None = None
    consequence_of: str | None = None
    """Id of the diagnosis this one is most likely a consequence of."""
    first: Evidence | None = None
    """The earliest error line of this diagnosis: where the failure started."""
    score: float = 0.0
    status: str = "confirmed"
    """`confirmed` (the fingerprint matched) or `possible` (only the core message is present:
    the open checks say what would decide it)."""


@dataclass(frozen=True)
class Nearest:
    """A reference whose messages resemble an unexplained line, with the similarity."""

    id: str
    score: float
    """Similarity of the line to the reference's own messages, 0..1."""


@dataclass(frozen=True)
class Unexplained:
    """A failure line that no reference explains: the failure is still named."""

    file: str
    line: int
    text: str
    kind: str
    """The exception type (`KeyError`) or the error class (`CUDA error`, `NCCL WARN`, `killed`...)."""
    component: str = ""
    """The package whose frame raised it (from the traceback), or the process that printed it."""
    user_frame: str = ""
    """The last traceback frame outside installed packages: `path:line in function`."""
    nearest: tuple[Nearest, ...] = ()
    """References whose text is closest: similar, not matched."""
    process: str = ""
    origin: Origin | None = None
    """The upstream code that prints this line (faultlens.origins), when the index knows it."""


@dataclass(frozen=True)
class InputFile:
    """One input of a diagnosis: path, size, lines, compression, reader warnings."""

    path: str
    bytes: int
    lines: int
    compression: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """The result of diagnosing one job: inputs, ranked diagnoses, facts, unexplained lines."""

    inputs: tuple[InputFile, ...]
    diagnoses: tuple[Diagnosis, ...]
    facts: dict[str, str]
    tracebacks: tuple[Traceback, ...]
    catalogue_digest: str
    reference_count: int
    unexplained: tuple[Unexplained, ...] = ()
    """Failure lines no diagnosis explains (the failing line named when nothing matched)."""
    environment_facts: tuple[str, ...] = ()
    """Names in `facts` that came from the environment (`--env`, a node snapshot), not the log."""

    @property
    def failures(self) -> tuple[Diagnosis, ...]:
        return tuple(d for d in self.diagnoses if d.severity == "failure")

    @property
    def top(self) -> Diagnosis | None:
        return self.failures[0] if self.failures else None

    @property
    def confirmed(self) -> tuple[Diagnosis, ...]:
        return tuple(d for d in self.failures if d.status == "confirmed")


@dataclass(frozen=True)
class Origin:
    """Where upstream code prints a message (faultlens.origins)."""
    project: str
    """The upstream project: torch, transformers, vllm, nccl, ..."""
    path: str
    """The file that prints it (a compiled library's path for a string of its string table)."""
    line: int
    """Its line at the newest release that prints it; 0 for a library's string."""
    function: str
    """The enclosing function (Class.method for Python); empty when unknown."""
    kind: str
    """How it is printed: 'raise ValueError', 'log.warning', 'warning', 'TORCH_CHECK', 'string'..."""
    releases: tuple[str, ...]
    """The indexed releases in which this exact wording exists, oldest first."""
    url: str | None = None
    """A link to the line at the newest of those releases, where the repository is known."""
    message: str = ""
    """The message as upstream writes it, with … where it prints a value."""
    skew: str = ""
    """Set on a report's lines when the log's facts name a release outside `releases`."""
    span: str = ""
    """Set on a report's lines: `releases` as ranges in the project's order ('4.40.0–4.46.3')."""

    def describe(self) -> str:
        """One short line: 'transformers modeling_utils.py (PreTrainedModel.from_pretrained), 4.40.0–4.46.3'."""
        where = self.path.rsplit("/", 1)[-1]
        func = f" ({self.function})" if self.function else ""
        return f"{self.project} {where}{func}, {self.span or ', '.join(self.releases)}"

    def to_json(self) -> dict:
        return {"project": self.project, "path": self.path, "line": self.line,
                "function": self.function, "kind": self.kind, "releases": list(self.releases),
                "url": self.url, "span": self.span or None, "skew": self.skew or None}
