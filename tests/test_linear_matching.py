"""Issue 13, items 1 and 6: matching on input text is linear in its length.

Item 1: every catalogue regex that runs on input text (signals, fact extractors and their
`unless`, probes, `matches` conditions) runs in RE2, never in Python's backtracking `re`. The
work of RE2 is bounded by len(text) x program size, so the tests check (a) the engine hands
catalogue patterns to RE2 and never to `re`, (b) every pattern's program is within the bound,
and (c) RE2 agrees with Hyperscan on adversarial lines generated from each pattern (8 KiB), and
finds a real match after 1 MiB of near-misses. Item 6: the line bookkeeping after a Hyperscan
scan inspects each byte of a block a bounded number of times, counted, not timed.
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as parser

import pytest

from faultlens.engine import linear
from faultlens.engine.scan import BlockScanner, FileScan, scan_file
from faultlens.engine.structure import observe
from faultlens.logs.reader import ReadStats

KIB8 = 8 << 10
MIB1 = 1 << 20

# the four context signals the probe of issue 13 found backtracking cubically in Python's re
CUBIC = [("custom-cuda-extension-segfault", "extension_backward_native", "backward_cuda"),
         ("custom-cuda-extension-segfault", "extension_library", "x_cuda_"),
         ("deepspeed-cpu-adam-cusolver-header", "conda_toolkit_include", "-Ienvs/"),
         ("prebuilt-wheel-undefined-symbol", "torch_extension_so", "fused_x_cuda")]


# ---- adversarial lines generated from a pattern ------------------------------------------------

_CATEGORY = {C.CATEGORY_DIGIT: "7", C.CATEGORY_NOT_DIGIT: "a", C.CATEGORY_SPACE: " ",
             C.CATEGORY_NOT_SPACE: "a", C.CATEGORY_WORD: "a", C.CATEGORY_NOT_WORD: " "}


def _one_char(items) -> str:
    """A character an IN class accepts (the first member that gives one)."""
    negate = items and items[0][0] is C.NEGATE
    if negate:
        banned = {chr(v) for op, v in items if op is C.LITERAL}
        return next(c for c in "a0 _-x" if c not in banned)
    for op, av in items:
        if op is C.LITERAL:
            return chr(av)
        if op is C.RANGE:
            return chr(av[0])
        if op is C.CATEGORY:
            return _CATEGORY.get(av, "a")
    return "a"


def witness(tree, branch: int = 0) -> str:
    """A string the parsed pattern matches (short repeats, alternative number `branch` where
    there is a choice, so that several witnesses cover several wordings)."""
    out = []
    for op, av in tree:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        elif op is C.ANY:
            out.append("a")
        elif op is C.IN:
            out.append(_one_char(av))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, _hi, sub = av
            out.append(witness(sub, branch) * max(lo, 1))
        elif op is C.SUBPATTERN:
            out.append(witness(av[-1], branch))
        elif op is C.BRANCH:
            alts = av[1]
            out.append(witness(alts[branch % len(alts)], branch))
        elif op is C.ATOMIC_GROUP:
            out.append(witness(av, branch))
        # AT (anchors, \b) and flags add no characters
    return "".join(out)


def fragments(tree) -> list[str]:
    """The pattern's literal runs: the raw material of near-misses."""
    found, run = [], []
    for op, av in tree:
        if op is C.LITERAL:
            run.append(chr(av))
            continue
        if run:
            found.append("".join(run))
            run = []
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            found += fragments(av[2])
        elif op is C.SUBPATTERN:
            found += fragments(av[-1])
        elif op is C.BRANCH:
            for alt in av[1]:
                found += fragments(alt)
    if run:
        found.append("".join(run))
    return found


def _fill(piece, size: int):
    return (piece * (size // len(piece) + 1))[:size]


def near_misses(tree, size: int) -> str:
    """A line of `size` characters: the pattern's near-match (a witness short of its last
    character) repeated, the shape that makes a backtracking engine retry every start against
    every split of the repeats."""
    return _fill(witness(tree)[:-1] or "a", size)


def adversarial(expr: str, size: int) -> list[str]:
    """Lines of `size` characters built from the pattern: its near-misses repeated, and its
    literal fragments glued together and repeated."""
    tree = parser.parse(expr)
    glued = "".join(fragments(tree)) or "a"
    return [near_misses(tree, size), _fill(glued, size)]


def catalogue_patterns(scanner) -> dict[str, str]:
    """Every catalogue regex that runs on input text, by where it comes from."""
    found: dict[str, str] = {}
    for pid, expr in enumerate(scanner.expressions):
        kind, owner, name = scanner.owners[pid][0]
        found.setdefault(expr, f"{kind} {owner}/{name}")
    for fp in scanner.facts:
        if fp.unless:
            found.setdefault(fp.unless, f"fact {fp.fact} unless")
    for ref in scanner.catalogue.references:
        for probe in ref.probes:
            if probe.pattern:
                found.setdefault(probe.pattern, f"probe {ref.id}/{probe.id}")
        for cond in (*ref.facts, *ref.preflight, *ref.checks):
            if cond.op == "matches" and cond.value and not cond.value.startswith("@"):
                found.setdefault(cond.value, f"condition {ref.id}/{cond.fact}")
    return found


@pytest.fixture(scope="module")
def scanner(real_scanner):
    return real_scanner


@pytest.fixture
def no_backtracking(monkeypatch, scanner):
    """Fail the test if Python's `re` is ever handed a catalogue pattern."""
    catalogue = set(catalogue_patterns(scanner))
    handed: list[str] = []
    original = re._compile

    def guarded(pattern, flags):
        text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
        if text in catalogue:
            handed.append(text)
        return original(pattern, flags)

    monkeypatch.setattr(re, "_compile", guarded)
    return handed


# ---- item 1 ------------------------------------------------------------------------------------

def test_issue13_item1_backtracking_signals_are_linear(scanner, tmp_path, no_backtracking):
    """The probe's attack (a near-match repeated over one line, then the real message) through
    the whole engine: verification and grouping run in RE2, and the references still see their
    signals on the real line after it."""
    refs = scanner.catalogue.by_id
    real = {"extension_backward_native": "#3 0x7f in roi_align_backward_cuda(at::Tensor const&)",
            "extension_library": "#5 in /site-packages/my_ops_cuda.cpython-310-x86_64-linux-gnu.so",
            "conda_toolkit_include": "-I/opt/conda/envs/ds/include -c cpu_adam.cpp",
            "torch_extension_so": "ImportError: /x/fused_adam_cuda.cpython-310-x86_64-linux-gnu.so: "
                                  "undefined symbol: _ZN3c104cuda9SetDeviceEi"}
    lines = ["training starts"]
    for ref_id, name, attack in CUBIC:
        regex = refs[ref_id].signals[name].regex
        assert linear.search(regex, real[name]), "the real line must match the signal"
        prefix = (attack * (KIB8 // len(attack) + 1))[:KIB8]
        assert not linear.search(regex, prefix), "the attack alone is a near-miss"
        lines.append(prefix)  # a near-miss line: Hyperscan rules it out
        lines.append(prefix + " " + real[name])  # a hit line whose verification meets the attack
    log = tmp_path / "attack.log"
    log.write_text("\n".join(lines) + "\n")
    obs = observe(scanner, [scan_file(scanner, str(log))])
    for ref_id, name, _ in CUBIC:
        seen = [ln.number for ln in obs.lines_of(ref_id, name)]
        assert seen, f"{ref_id}/{name} lost its real line"
        assert all(lines[n - 1].endswith(tuple(real.values())) for n in seen), "a near-miss matched"
    assert no_backtracking == [], "catalogue patterns went to Python's backtracking re"


def test_issue13_item1_refs_search_facts_and_probes_use_the_linear_engine(scanner, no_backtracking):
    from faultlens.facts.extract import compare
    from faultlens.refs import search

    ref_id, name, attack = CUBIC[0]
    query = (attack * 400) + " roi_align_backward_cuda(at::Tensor const&)"
    found = [ref.id for _, ref in search(scanner.catalogue.references, query)]
    assert ref_id in found
    regex = scanner.catalogue.by_id[ref_id].signals[name].regex
    assert compare(attack * 500, "matches", regex) is False
    assert compare(attack * 500 + "_cuda(", "matches", regex) is True
    assert no_backtracking == []


def test_issue13_item1_every_pattern_runs_in_the_linear_engine(scanner):
    """Work per byte is bounded by the program size: every pattern compiles in RE2 within it, and
    the scanner verifies hit lines with RE2 objects."""
    import re2

    too_big = {expr: where for expr, where in catalogue_patterns(scanner).items()
               if linear.problem(expr)}
    assert too_big == {}
    assert all(isinstance(scanner.regex(pid), re2._Regexp) for pid in range(len(scanner.expressions)))


def test_issue13_item1_adversarial_8k_lines_agree_with_hyperscan(scanner):
    """Every pattern on its own 8 KiB adversarial lines: RE2's verdict is Hyperscan's verdict
    (Hyperscan finds the hit lines, RE2 verifies them: they must not disagree)."""
    import hyperscan

    db = scanner.database
    disagree = []
    for pid, expr in enumerate(scanner.expressions):
        for line in adversarial(expr, KIB8):
            hit: set[int] = set()
            db.scan(line.encode(), match_event_handler=lambda i, *_, hit=hit: hit.add(i))
            if (pid in hit) != bool(scanner.regex(pid).search(line)):
                disagree.append(expr)
    assert disagree == []
    assert hyperscan  # the module the database came from


def test_issue13_item1_adversarial_1m_lines_then_the_real_message(scanner):
    """Every catalogue pattern: 1 MiB of its near-misses, then a real match at the end of the
    line. RE2 runs through the whole megabyte (its work is linear) and finds the match there."""
    missed, witnessed = [], 0
    for expr, where in catalogue_patterns(scanner).items():
        tree = parser.parse(expr)
        real = next((w for w in (witness(tree, b) for b in range(3))
                     if linear.search(expr, w)), None)
        if real is None:
            continue  # the generator found no short witness (rare, counted below)
        near = _fill((witness(tree)[:-1] or "a").encode(), MIB1)  # near_misses, as bytes
        at_start = bool(tree.data) and tree.data[0] == (C.AT, C.AT_BEGINNING)
        at_end = bool(tree.data) and tree.data[-1] == (C.AT, C.AT_END)
        if at_start and at_end:
            continue  # a whole-value pattern (conditions): nothing can precede or follow it
        witnessed += 1
        # the real message after the megabyte, or before it when the pattern is anchored there
        text = real.encode() + b" " + near if at_start else near + b" " + real.encode()
        if linear.compiled(expr).search(text) is None:
            missed.append(where)
    assert missed == []
    assert witnessed >= 0.9 * len(catalogue_patterns(scanner))


def test_issue13_item1_lint_rejects_patterns_the_linear_engine_cannot_run():
    for expr in (r"(a)\1", r"foo(?=bar)", r"(?<!x)y", r"x\Z", r"(?:a{0,1000}x){0,1000}"):
        why = linear.problem(expr)
        assert why and ("cannot compile" in why or "instructions" in why), expr
    assert linear.problem(r"\w*backward\w*_(cuda|kernel)\w*\(") is None


def test_issue13_item1_lint_names_the_signal():
    from conftest import DATA

    from faultlens import catalogue as cat_mod
    from faultlens.lint import _check_regexes

    src = next((DATA / "catalogue").glob("*/*/reference.yaml"))
    ref = cat_mod.build_reference(cat_mod.parse_yaml(src), src.parent)
    name = next(iter(ref.signals))
    sig = ref.signals[name]
    bad = type(sig)(**{**sig.__dict__, "regex": r"CUDA error\Z"})  # Python and Hyperscan: fine
    ref = type(ref)(**{**ref.__dict__, "signals": {**ref.signals, name: bad}})
    problems = [p.message for p in _check_regexes(ref, "where")]
    assert any(m.startswith(f"signals/{name}: ") and "RE2" in m and "write $" in m
               for m in problems), problems


# ---- item 6 ------------------------------------------------------------------------------------

class CountingBuffer(bytearray):
    """A block that counts the bytes its find/rfind/count calls look at."""

    looked = 0

    def _span(self, args):
        start = args[1] if len(args) > 1 else 0
        stop = args[2] if len(args) > 2 else len(self)
        CountingBuffer.looked += max(0, stop - start)

    def find(self, *args):
        self._span(args)
        return super().find(*args)

    def rfind(self, *args):
        self._span(args)
        return super().rfind(*args)

    def count(self, *args):
        self._span(args)
        return super().count(*args)


def test_issue13_item6_long_line_of_repeated_matches_is_linear(scanner):
    """One long line holding thousands of OOM messages: the bookkeeping after the Hyperscan scan
    looks at each byte a bounded number of times (it used to search back to the line start for
    every match: quadratic in the line's length)."""
    message = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    looked = {}
    for repeats in (1000, 4000):
        block = CountingBuffer(b"start\n" + message * repeats + b"\nnext line\n")
        CountingBuffer.looked = 0
        result = FileScan(name="x", stats=ReadStats(name="x"))
        BlockScanner(scanner, result).feed(block, 0, len(block), 1)
        assert any(1 in h.first for h in result.hits.values()) is False
        assert any(2 in h.first for h in result.hits.values()), "the long line is a hit"
        assert all(h.count == 1 for h in result.hits.values() if 2 in h.first)
        looked[repeats] = CountingBuffer.looked
        assert looked[repeats] <= 4 * len(block), (repeats, looked[repeats], len(block))
    # four times the line, about four times the work (quadratic would be sixteen)
    assert looked[4000] <= 5 * looked[1000]


def test_the_shared_database_reports_every_anchored_match_python_finds(real_scanner):
    """All patterns share one Hyperscan database: a top-level alternation with a `^` branch
    (state-dict-size-mismatch's, once) made the k8s capacity lines' anchored pattern report
    nothing. Every anchored pattern Python finds on a line of a real log must be reported."""
    import re

    from conftest import ROOT

    anchored = [i for i, e in enumerate(real_scanner.expressions) if "^" in e.replace("[^", "")]
    compiled = {i: re.compile(real_scanner.expressions[i]) for i in anchored}
    files = sorted(ROOT.glob("catalogue/*/*/examples/*.log")) + sorted(ROOT.glob("corpus/*.log"))
    missed = []
    for f in files:
        data = f.read_bytes()
        hits = set()
        real_scanner.database.scan(data, match_event_handler=lambda i, *_: hits.add(i))
        lines = data.decode("utf-8", "replace").splitlines()
        missed += [(f.name, real_scanner.expressions[i]) for i in anchored
                   if i not in hits and any(compiled[i].search(ln) for ln in lines)]
    assert missed == []


def test_lint_refuses_a_top_level_alternation_with_an_anchored_branch():
    from faultlens.lint import anchored_top_level_branch

    assert anchored_top_level_branch(r"^\s*The model|WARNING.{0,80}The model")
    assert anchored_top_level_branch(r"Segmentation fault|^Segmentation fault$")
    assert not anchored_top_level_branch(r"(?:^\s*The model|WARNING.{0,80}The model)")
    assert not anchored_top_level_branch(r"[|^]x|y")
    assert not anchored_top_level_branch(r"^only one branch")
