"""Message origins: template extraction from real-shaped source snippets, the index built from
them, look-up, other wordings, version skew, `faultlens origin`, and a few checks on the shipped
index."""

import importlib.util
import json

import pytest
from conftest import ROOT

from faultlens.cli import main
from faultlens.model import Origin
from faultlens.origins import OriginIndex, skew
from faultlens.origins.extract import binary_string_message, c_messages, python_messages
from faultlens.origins.store import DATA_DIR, INDEX_NAME, MANIFEST_NAME, write_index
from faultlens.origins.template import WILD, match

FIXTURES = ROOT / "tests" / "data" / "origins"


def load_builder():
    spec = importlib.util.spec_from_file_location("build_origins", ROOT / "tools" / "build_origins.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    builder = load_builder()
    releases = {}
    for folder in sorted(FIXTURES.iterdir()):
        version = folder.name.split("-")[1]
        rows = []
        for f in sorted(folder.iterdir()):
            rows += builder.messages_of(f"fakepkg/{f.name}", f.read_bytes())
        releases[version] = rows
    out = tmp_path_factory.mktemp("index")
    specs = {"fakepkg": {"repo": "example/fakepkg", "tag": "v{v}", "prefix": "src/",
                         "licence": "MIT", "pip": "fakepkg"}}
    path = write_index({"fakepkg": releases}, specs, out)
    return OriginIndex(path)


def templates(found):
    return {f.template for f in found}


# ---- extraction -------------------------------------------------------------------------------

def test_python_raise_fstring_logger_percent_warn_and_check():
    found = python_messages((FIXTURES / "fakepkg-1.0" / "loader.py").read_text())
    by_template = {f.template: f for f in found}
    raise_ = by_template[f"Checkpoint path {WILD} does not exist or is not a directory"]
    assert (raise_.kind, raise_.function, raise_.line) == ("raise ValueError",
                                                           "ModelLoader.load_state", 10)
    assert (f"Some weights of the model checkpoint at {WILD} were not used when initializing "
            f"{WILD}: {WILD}") in by_template
    assert by_template["`load_in_8bit` is deprecated and will be removed, pass a "
                       "quantization_config instead"].kind == "warning"
    check = by_template[f"shape mismatch: expected {WILD} but got {WILD} for the fused weight"]
    assert (check.kind, check.function) == ("check", "check_shape")
    assert by_template[f"number of attention heads must be a positive integer, got {WILD}"].kind \
        == "assert"


def test_python_str_format_and_unparsable_source():
    found = python_messages((FIXTURES / "fakepkg-2.0" / "loader.py").read_text())
    assert f"Some weights of {WILD} were not used when initializing the model: {WILD}" in \
        templates(found)
    assert python_messages("def broken(:\n") == []


def test_c_torch_check_at_error_ggml_assert_and_fprintf():
    found = c_messages((FIXTURES / "fakepkg-2.0" / "kernels.cu").read_text())
    by_template = {f.template: f for f in found}
    check = by_template[f"Unsupported head size: {WILD}. Supported sizes are 64 and 128."]
    assert (check.kind, check.function, check.line) == ("TORCH_CHECK", "paged_attention_launcher", 4)
    assert by_template[f"paged attention got an empty output tensor of dtype {WILD}"].kind == "AT_ERROR"
    assert "GGML_ASSERT(cgraph->n_nodes < cgraph->size) failed" in by_template
    printf = by_template[f"{WILD}: failed to allocate buffer of size {WILD} for the compute graph"]
    assert printf.function == "ggml_graph_check"


def test_go_errorf_and_klog():
    found = c_messages((FIXTURES / "fakepkg-2.0" / "plugin.go").read_text(), go=True)
    by_template = {f.template: f for f in found}
    err = by_template[f"invalid allocation request for '{WILD}': unknown device: {WILD}"]
    assert (err.kind, err.function) == ("error", "Allocate")
    assert by_template[f"Failed to initialize NVML: {WILD}. Please see the troubleshooting guide"] \
        .kind == "log.warning"


@pytest.mark.parametrize("raw, expected", [
    ("NCCL WARN Cuda failure '%s'", f"NCCL WARN Cuda failure '{WILD}'"),
    ("0x%08x 0x%08x 0x%08x 0x%08x at %p", None),  # numbers, not words
    ("Failed to open libibverbs.so[.1] : %s (errno %d)", f"Failed to open libibverbs.so[.1] : {WILD} (errno {WILD})"),
    ("Expected all tensors to be on the same device, but found at least two devices, ",
     "Expected all tensors to be on the same device, but found at least two devices,"),
    ("_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", None),
    ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", None),
])
def test_binary_strings(raw, expected):
    assert binary_string_message(raw) == expected


def test_matcher_bounds_and_order():
    t = f"Unsupported head size: {WILD}. Supported sizes are 64 and 128."
    assert match(t, "RuntimeError: Unsupported head size: 96. Supported sizes are 64 and 128.") > 0.7
    assert match(t, "Supported sizes are 64 and 128. Unsupported head size: 96.") == 0.0
    assert match(t, "Unsupported head size: " + "9" * 1000 + ". Supported sizes are 64 and 128.") == 0.0


# ---- look-up on the fixture index -------------------------------------------------------------

def test_lookup_finds_source_line_function_releases_and_url(index):
    [[best, *_]] = index.lookup([("[rank3]: ValueError: Checkpoint path '/ckpt/step-100' does not "
                                 "exist or is not a directory")])
    assert (best.project, best.path, best.function, best.kind) == (
        "fakepkg", "fakepkg/loader.py", "ModelLoader.load_state", "raise ValueError")
    assert best.releases == ("1.0", "2.0")
    assert best.url == "https://github.com/example/fakepkg/blob/v2.0/src/fakepkg/loader.py#L10"


def test_lookup_only_answers_for_matching_lines(index):
    assert index.lookup(["step 100 loss 2.31", "Unsupported head size"]) == [[], []]


def test_other_wordings_names_the_releases_of_the_old_wording(index):
    [[new]] = index.lookup([("Some weights of /ckpt were not used when initializing the model: "
                            "['lm_head.bias']")], limit=1)
    assert new.releases == ("2.0",)
    [old] = index.other_wordings(new)
    assert old.releases == ("1.0",)
    assert old.message.startswith("Some weights of the model checkpoint at …")


def test_skew_when_the_logs_release_does_not_print_the_line(index):
    [[new]] = index.lookup(["Some weights of /ckpt were not used when initializing the model: []"],
                           limit=1)
    releases = index.projects["fakepkg"]["releases"]
    assert skew(new, {"fakepkg.version": "1.0"}, releases) is not None
    assert skew(new, {"fakepkg.version": "2.0.1"}, releases) is None
    assert skew(new, {}, releases) is None
    # between a release that prints it and one that doesn't: the change may be on either side
    assert skew(new, {"fakepkg.version": "1.5"}, releases) is None


def test_skew_outside_a_window_on_both_sides():
    o = Origin("torch", "torch/x.py", 1, "f", "raise ValueError", ("2.4.0", "2.7.0"))
    releases = ["2.1.0", "2.4.0", "2.7.0", "2.10.0"]
    assert "2.4.0–2.7.0" in skew(o, {"torch.version": "2.11.0+cu128"}, releases)
    assert skew(o, {"torch.version": "2.5.1+cu124"}, releases) is None
    assert skew(o, {"torch.version": "2.1.2"}, releases) is not None


# ---- the command ------------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_origin_text_and_json(index, capsys):
    path = str(index._db.execute("PRAGMA database_list").fetchone()[2])
    line = "RuntimeError: Unsupported head size: 80. Supported sizes are 64 and 128."
    code, out, _ = run(capsys, "origin", "--index", path, line)
    assert code == 0 and "fakepkg fakepkg/kernels.cu:4 in paged_attention_launcher (TORCH_CHECK)" in out
    code, out, _ = run(capsys, "origin", "--index", path, "--json", line, "nothing to see")
    data = json.loads(out)
    assert code == 1  # the second line has no origin
    first = data["lines"][0]["candidates"][0]
    assert first["releases"] == ["2.0"] and first["function"] == "paged_attention_launcher"
    assert data["lines"][1]["candidates"] == []


def test_cli_origin_stdin_and_bad_input(index, capsys, monkeypatch):
    import io
    import sys
    path = str(index._db.execute("PRAGMA database_list").fetchone()[2])
    stdin = io.TextIOWrapper(io.BytesIO(b"\n\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, _, err = run(capsys, "origin", "--index", path, "-")
    assert code == 3 and err.count("\n") == 1 and "no lines" in err
    code, _, err = run(capsys, "origin", "--index", path, "  ")
    assert code == 2 and "give a log line" in err
    code, _, err = run(capsys, "origin", "--index", str(ROOT / "no-such-index.sqlite"), "x y z")
    assert code == 4 and "origins index" in err


# ---- the shipped index ------------------------------------------------------------------------

def test_shipped_manifest_lists_projects_releases_and_licences():
    manifest = json.loads((DATA_DIR / MANIFEST_NAME).read_text())
    assert (DATA_DIR / INDEX_NAME).stat().st_size < 30 * 2**20
    for name, p in manifest["projects"].items():
        assert p["licence"] and p["releases"] and p["messages"] > 0, name


def test_shipped_index_knows_torch_cuda_lazy_init():
    [[best, *_]] = OriginIndex().lookup(["AssertionError: Torch not compiled with CUDA enabled"])
    assert best.project == "torch" and best.path == "torch/cuda/__init__.py"
    assert best.function == "_lazy_init" and len(best.releases) >= 3


# ---- catalogue hardening ----------------------------------------------------------------------

def fake_ref(tmp_path, regex, line, origin=""):
    from types import SimpleNamespace

    from faultlens.model import Signal
    (tmp_path / "examples").mkdir(exist_ok=True)
    (tmp_path / "examples" / "match-1.log").write_text(f"step 3\n{line}\n")
    sig = Signal("msg", regex, "line", "error", "", origin=origin)
    return SimpleNamespace(id="fake-ref", category="demo", path=str(tmp_path), signals={"msg": sig})


def test_signal_origins_lists_the_wording_its_regex_misses(index, tmp_path):
    from faultlens.origins.coverage import signal_origins
    ref = fake_ref(tmp_path, r"Some weights of \S+ were not used when initializing the model",
                   "Some weights of /ckpt were not used when initializing the model: ['a.bias']")
    [so] = signal_origins(ref, index, with_misses=True)
    assert so.origins[0].function == "ModelLoader.load_state"
    [miss] = so.misses
    assert miss.releases == ("1.0",)
    assert miss.rendered.startswith("Some weights of the model checkpoint at /ckpt were not used")


def test_signal_origins_no_miss_when_the_regex_covers_both_wordings(index, tmp_path):
    from faultlens.origins.coverage import signal_origins
    ref = fake_ref(tmp_path, r"Some weights of .{1,200} were not used when initializing",
                   "Some weights of /ckpt were not used when initializing the model: ['a.bias']")
    [so] = signal_origins(ref, index, with_misses=True)
    assert so.origins and so.misses == ()


def test_lint_warns_on_error_signal_without_origin_unless_declared(index, tmp_path):
    from faultlens.origins.coverage import check_origins
    line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
    ref = fake_ref(tmp_path, r"GPU has fallen off the bus", line)
    [problem] = check_origins([ref], index)
    assert problem.level == "warning" and "signals/msg" in problem.message
    declared = fake_ref(tmp_path, r"GPU has fallen off the bus", line,
                        origin="none: printed by the closed-source NVIDIA kernel driver")
    assert check_origins([declared], index) == []
    found = fake_ref(tmp_path, r"Unsupported head size", "Unsupported head size: 80. Supported "
                                                        "sizes are 64 and 128.")
    assert check_origins([found], index) == []


def test_signal_without_example_lines_is_checked_against_filled_templates(index, tmp_path):
    from faultlens.origins.coverage import check_origins, signal_origins
    ref = fake_ref(tmp_path, r"Unsupported head size: \d+\. Supported sizes are", "step 4 done")
    [so] = signal_origins(ref, index)
    assert so.lines == () and so.origins[0].path == "fakepkg/kernels.cu"
    assert check_origins([ref], index) == []


def test_matcher_accepts_a_message_cut_at_the_end_of_the_line():
    t = (f"Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
         f"installed a driver from {WILD}")
    assert match(t, "RuntimeError: Found no NVIDIA driver on your system. Please check that you") > 0.5
    assert match(t, "Found no NVIDIA driver on your system. Please check that you have a TPU") == 0.0


def test_cpython_error_format_conversions_are_placeholders():
    assert binary_string_message("cannot import name %R from %R (%S)") == \
        f"cannot import name {WILD} from {WILD} ({WILD})"


def test_shipped_index_knows_the_device_plugins_lower_case_nvml_wording():
    [[best, *_]] = OriginIndex().lookup([("E1120 factory.go:99] nvml init failed: "
                                         "ERROR_LIBRARY_NOT_FOUND")])
    assert best.project == "k8s-device-plugin" and best.function == "getResourceManagers"
    assert "v0.20.0" in best.releases and "v0.12.3" not in best.releases


# ---- messages named, built or classed elsewhere, and prefix labels -----------------------------

def test_python_constant_message_exception_class_and_message_builder():
    from faultlens.origins.extract import module_of
    src = (FIXTURES / "fakepkg-2.0" / "errors.py").read_text()
    by_template = {f.template: f for f in python_messages(src, module_of("fakepkg/errors.py"))}
    first = by_template[f"The detected CUDA version ({WILD}) mismatches the version that was used "
                        "to compile"]
    assert (first.kind, first.function) == ("raise RuntimeError", "check_cuda_version")
    cls = by_template["fakepkg.errors.ChildFailedError"]
    assert (cls.kind, cls.line) == ("exception class", 7)
    # without a module name no class is indexed (a script's classes have none)
    assert not any(f.kind == "exception class" for f in python_messages(src))
    built = {f.template: f for f in python_messages(
        (FIXTURES / "fakepkg-2.0" / "nvfp4.py").read_text())}
    msg = built[f"Using '{WILD}' NvFp4 MoE backend out of potential backends: {WILD}."]
    assert (msg.kind, msg.function) == ("message", "select_nvfp4_moe_backend._make_log_backend")
    assert module_of("torch/distributed/elastic/multiprocessing/errors/__init__.py") == \
        "torch.distributed.elastic.multiprocessing.errors"
    assert module_of("fakepkg/kernels.cu") is None


def test_c_string_macro_from_another_file_message_table_and_strerror():
    builder = load_builder()
    folder = FIXTURES / "fakepkg-2.0"
    members = [(f"src/{f.name}", f.stat().st_size, (lambda f=f: open(f, "rb")))
               for f in sorted(folder.iterdir()) if f.suffix in (".c", ".h")]
    rows = {r[0]: r for r in builder.scan_members(members, {})}
    assert rows[f"CUDA error: {WILD}"][4] == "log.error"  # the #else branch, the default build
    assert rows["Invalid generic resource (gres) specification"][4] == "message table"
    assert f"Unable to create step for job {WILD}: {WILD}" in rows
    # without the macros the label is unknown and nothing is indexed for that call
    assert not any("error: " in t for t in templates(c_messages(
        (folder / "errtab.c").read_text())))


@pytest.mark.parametrize("raw, expected", [
    ("CUDA error: ", f"CUDA error: {WILD}"),
    ("Expected: ", None),            # one word: too generic to be a label
    ("std::string error: ", None),   # a signature, not a label
    ("CUDA error", None),            # no value follows
])
def test_binary_prefix_labels(raw, expected):
    assert binary_string_message(raw) == expected


def test_prefix_label_counts_only_where_it_starts_the_message(tmp_path):
    releases = {"1.0": [(f"CUDA error: {WILD}", "lib/libfake_cuda.so", 0, "", "string")]}
    specs = {"fakepkg": {"repo": "example/fakepkg", "licence": "MIT", "pip": "fakepkg"}}
    index = OriginIndex(write_index({"fakepkg": releases}, specs, tmp_path))
    hits = index.lookup([
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "CUDA error: no kernel image is available for execution on the device",
        "this looks like a CUDA error: maybe the driver",
        "CUDA error: ",
    ])
    assert [bool(h) for h in hits] == [True, True, False, False]


def test_the_template_from_the_file_the_logger_names_and_with_more_literal_text_wins(index):
    # a real vLLM line (corpus/nvfp4 examples): rocm.py's generic "Using … backend out of
    # potential backends: …." also matches it, with fewer literal characters
    line = ("(EngineCore pid=214) INFO 06-11 14:20:41 [nvfp4.py:285] Using 'FLASHINFER_CUTLASS' "
            "NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', "
            "'FLASHINFER_CUTEDSL', 'FLASHINFER_CUTEDSL_BATCHED', 'FLASHINFER_CUTLASS', "
            "'VLLM_CUTLASS', 'MARLIN'].")
    found = index.candidates(line)
    assert [o.path for _, o, _ in found][:2] == ["fakepkg/nvfp4.py", "fakepkg/rocm.py"]
    # without the logger's file name, literal text alone still ranks the specific one first
    bare = line.split("] ", 1)[1]
    assert index.candidates(bare)[0][1].path == "fakepkg/nvfp4.py"
    # and a line the generic one prints still finds it
    generic = "INFO [rocm.py:903] Using TRITON_ATTN backend out of potential backends: ['A', 'B']."
    assert index.candidates(generic)[0][1].path == "fakepkg/rocm.py"


def test_matcher_accepts_a_line_that_ends_inside_a_value():
    t = f"cannot import name {WILD} from {WILD} ({WILD})"
    line = "ImportError: cannot import name 'get_all_providers' from 'onnxruntime.capi._pybind_state'"
    assert match(t, line) > 0.2
    # too little of the message matched to tell
    assert match(f"Expected {WILD} got {WILD} for the fused weight", "Expected 3 got") == 0.0


def test_prefix_label_after_a_cpp_exception_header(tmp_path):
    releases = {"1.0": [(f"CUDA error: {WILD}", "lib/libfake_cuda.so", 0, "", "string")]}
    specs = {"fakepkg": {"repo": "example/fakepkg", "licence": "MIT", "pip": "fakepkg"}}
    index = OriginIndex(write_index({"fakepkg": releases}, specs, tmp_path))
    assert index.lookup(["  what():  CUDA error: an illegal memory access was encountered"])[0]


def test_after_a_python_exception_header_a_raise_beats_a_c_logger(tmp_path):
    # two projects print the label: a Python package's library (raised as an exception) and a
    # C library's logger
    releases = {"fakepkg": {"1.0": [(f"CUDA error: {WILD}", "lib/libfake_cuda.so", 0, "",
                                     "string")]},
                "fakecpp": {"1.0": [(f"CUDA error: {WILD}", "src/fake-cuda.cu", 84,
                                     "fake_cuda_error", "log.error")]}}
    specs = {p: {"repo": f"example/{p}", "licence": "MIT", "pip": p} for p in releases}
    index = OriginIndex(write_index(releases, specs, tmp_path))
    [[raised, *_], [logged, *_]] = index.lookup([
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "CUDA error: an illegal memory access was encountered"])
    assert raised.path == "lib/libfake_cuda.so" and logged.path == "src/fake-cuda.cu"


def test_left_out_strings_are_not_indexed_in_any_library(tmp_path):
    # NCCL links the CUDA runtime statically: its error strings are the runtime's, never indexed
    rows = [("an illegal memory access was encountered", "nvidia/nccl/lib/libnccl.so.2", 0, "",
             "string"),
            (f"NCCL WARN Cuda failure '{WILD}'", "nvidia/nccl/lib/libnccl.so.2", 0, "", "string")]
    specs = {"nccl": {"repo": "NVIDIA/nccl", "licence": "BSD-3-Clause", "pip": "nccl"}}
    index = OriginIndex(write_index({"nccl": {"2.21.5": rows}}, specs, tmp_path,
                                    left_out={"an illegal memory access was encountered"}))
    assert index.lookup(["CUDA error: an illegal memory access was encountered",
                         "NCCL WARN Cuda failure 'out of memory'"])[0] == []
    assert index.lookup(["NCCL WARN Cuda failure 'out of memory'"])[0]


def test_a_prefix_label_gives_no_version_skew():
    o = Origin("torch", "torch/cuda/_utils.py", 40, "_check_cuda", "raise RuntimeError",
               ("2.10.0", "2.13.0"), message="CUDA error: …")
    releases = ["2.1.0", "2.4.0", "2.7.0", "2.10.0", "2.13.0"]
    assert skew(o, {"torch.version": "2.4.1"}, releases) is None
    full = Origin("torch", "torch/x.py", 1, "f", "raise RuntimeError", ("2.10.0", "2.13.0"),
                  message="Unsupported head size: …. Supported sizes are 64 and 128.")
    assert skew(full, {"torch.version": "2.4.1"}, releases) is not None


def test_a_line_cut_inside_its_first_value_still_finds_the_template(tmp_path):
    t = (f"To serve at least one request with the model's max seq len ({WILD}), ({WILD} GiB KV "
         f"cache is needed, which is larger than the available KV cache memory ({WILD} GiB).")
    specs = {"fakepkg": {"repo": "example/fakepkg", "licence": "MIT", "pip": "fakepkg"}}
    index = OriginIndex(write_index(
        {"fakepkg": {"1.0": [(t, "fakepkg/kv.py", 7, "check", "raise ValueError")]}}, specs,
        tmp_path))
    # the real corpus line (kaito-mistral-small-kv-cache-too-small), wrapped after the value
    assert index.lookup(["ValueError: To serve at least one request with the model's max seq "
                         "len (1048576),"])[0]
