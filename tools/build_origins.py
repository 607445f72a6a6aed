"""Build the origins index: the messages upstream code prints, at several releases per project.

A development step, not run in CI. For each project and release it takes the released package
(`pip download --no-deps`) or a git tag of a repository brought by the `fetch` tool, extracts the
message templates (faultlens.origins.extract) and caches them per project-release under
--work (resumable: a cached release is not fetched again). `--merge` then writes the shipped
index (src/faultlens/origins/data/origins.sqlite.gz) and its manifest (manifest.json).

    python tools/build_origins.py --work /tmp/flo torch transformers    # extract some projects
    python tools/build_origins.py --work /tmp/flo --all                 # every project
    python tools/build_origins.py --work /tmp/flo --merge               # write the index
    python tools/build_origins.py --work /tmp/flo --refresh torch       # re-read the sources of
        # cached releases after an extractor change, keeping their library strings (only the
        # prefix labels of the libraries are read again)

No downloaded or fetched source is kept or committed: only the templates built from it.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from faultlens.origins.extract import (binary_string_message, c_messages, module_of,
                                       python_messages, string_defines)
from faultlens.origins.template import is_prefix

PIP = [sys.executable, "-m", "pip"]
LINUX = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64",
         "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64", "linux_x86_64"]
MAC = ["macosx_14_0_arm64"]
MIRROR = Path("/work/.mirror")
TMP = None  # set from --work: library strings are read from a temporary copy there
keep_wheels = False  # --keep-wheels: downloaded wheels stay in <work>/wheels
WHEEL_DIRS = [Path("/opt/wheels"), Path("/opt/pypi-more/files")]
"""Wheels already on this machine (and <work>/wheels) are used before downloading."""

# project -> how to get it. pip: the PyPI name; git: a fetched repository (owner+name under
# /work/.mirror); repo: GitHub repository for links; tag: the tag of a release; prefix: where the
# package's files sit in the repository; binaries: whether to read compiled libraries' strings
PROJECTS: dict[str, dict] = {
    "torch": {"pip": "torch", "repo": "pytorch/pytorch", "tag": "v{v}", "licence": "BSD-3-Clause",
                  "binaries": True, "max_binary_mb": 4000,
                  "versions": ["2.1.0", "2.4.0", "2.7.0", "2.10.0", "2.13.0", "2.14.1"]},
    "transformers": {"pip": "transformers", "repo": "huggingface/transformers", "tag": "v{v}",
                         "prefix": "src/", "licence": "Apache-2.0",
                         "versions": ["4.36.2", "4.40.2", "4.46.3", "4.51.3", "4.57.6", "5.0.0",
                                   "5.18.0"]},
    "vllm": {"pip": "vllm", "repo": "vllm-project/vllm", "tag": "v{v}", "licence": "Apache-2.0",
                 "versions": ["0.5.5", "0.6.6", "0.8.5", "0.10.2", "0.11.2", "0.15.1", "0.25.0",
                           "0.33.0"]},
    "nccl": {"pip": "nvidia-nccl-cu12", "repo": "NVIDIA/nccl", "licence": "BSD-3-Clause",
                 "binaries": True, "versions": ["2.18.1", "2.21.5", "2.23.4", "2.26.2", "2.27.7"]},
    # not the CUDA runtime: its libraries are closed source under NVIDIA's EULA, and the index
    # ships with an Apache-2.0 package; its messages are checked against real logs instead.
    # Its strings are read only to leave them out of the libraries that link it statically
    # (libnccl.so carries 'an illegal memory access was encountered'): see LEFT_OUT
    "cuda-runtime": {"pip": "nvidia-cuda-runtime-cu12", "licence": "NVIDIA EULA (not indexed)",
                         "binaries": True, "versions": ["12.1.105", "12.4.127", "12.6.77",
                                                     "12.8.90"]},
    # installed on this machine: CPython's standard library and libpython (pyenv), and glibc
    "cpython": {"local": "/root/.pyenv/versions/{v}", "repo": "python/cpython", "tag": "v{v}",
                    "licence": "PSF-2.0", "binaries": True, "module_root": "Lib/",
                    "versions": ["3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"]},
    "glibc": {"local": "/lib/x86_64-linux-gnu", "licence": "LGPL-2.1-or-later", "binaries": True,
                  "files": ["libc.so.6", "ld-linux-x86-64.so.2"], "min_string": 12, "versions": ["2.36"]},
    "accelerate": {"pip": "accelerate", "repo": "huggingface/accelerate", "tag": "v{v}", "prefix": "src/",
                       "licence": "Apache-2.0",
                       "versions": ["0.25.0", "0.30.1", "0.34.2", "1.2.1", "1.6.0", "1.10.1",
                                 "1.15.0"]},
    "deepspeed": {"git": "microsoft+DeepSpeed", "repo": "microsoft/DeepSpeed", "tag": "v{v}",
                      "licence": "Apache-2.0",
                      "versions": ["0.10.3", "0.12.6", "0.13.5", "0.14.5", "0.15.4", "0.16.4"]},
    "bitsandbytes": {"pip": "bitsandbytes", "repo": "bitsandbytes-foundation/bitsandbytes",
                         "tag": "{v}", "licence": "MIT", "binaries": True, "max_binary_mb": 100,
                         "versions": ["0.41.3", "0.43.3", "0.45.5", "0.47.0", "0.50.2"]},
    "triton": {"pip": "triton", "repo": "triton-lang/triton", "tag": "v{v}", "prefix": "python/",
                   "licence": "MIT", "versions": ["2.1.0", "3.0.0", "3.2.0", "3.4.0", "3.9.0"]},
    "peft": {"pip": "peft", "repo": "huggingface/peft", "tag": "v{v}", "prefix": "src/",
                 "licence": "Apache-2.0", "versions": ["0.7.1", "0.10.0", "0.13.2", "0.15.2", "0.21.2"]},
    "trl": {"pip": "trl", "repo": "huggingface/trl", "tag": "v{v}", "licence": "Apache-2.0",
                "versions": ["0.7.11", "0.9.6", "0.12.2", "0.19.1", "0.29.1", "1.16.0"]},
    "diffusers": {"pip": "diffusers", "repo": "huggingface/diffusers", "tag": "v{v}", "prefix": "src/",
                      "licence": "Apache-2.0",
                      "versions": ["0.25.1", "0.29.2", "0.32.2", "0.35.2", "0.42.1"]},
    "datasets": {"pip": "datasets", "repo": "huggingface/datasets", "tag": "{v}", "prefix": "src/",
                     "licence": "Apache-2.0", "versions": ["2.16.1", "2.21.0", "3.6.0", "4.4.2", "5.2.0"]},
    "huggingface_hub": {"pip": "huggingface_hub", "repo": "huggingface/huggingface_hub", "tag": "v{v}",
                            "prefix": "src/", "licence": "Apache-2.0",
                            "versions": ["0.20.3", "0.26.5", "0.36.0", "1.10.2", "2.4.0"]},
    "safetensors": {"pip": "safetensors", "repo": "huggingface/safetensors", "tag": "v{v}",
                        "prefix": "bindings/python/py_src/", "licence": "Apache-2.0", "binaries": True,
                        "versions": ["0.4.1", "0.4.5", "0.5.3", "0.6.2", "0.8.0"]},
    "sglang": {"pip": "sglang", "repo": "sgl-project/sglang", "tag": "v{v}", "prefix": "python/",
                   "licence": "Apache-2.0", "versions": ["0.3.6", "0.4.6", "0.5.0", "0.5.10", "0.5.23"]},
    "megatron-core": {"pip": "megatron-core", "repo": "NVIDIA/Megatron-LM", "tag": "core_v{v}",
                          "licence": "BSD-3-Clause",
                          "versions": ["0.8.0", "0.10.0", "0.12.3", "0.14.0", "0.16.1"]},
    "flash-attn": {"git": "Dao-AILab+flash-attention", "repo": "Dao-AILab/flash-attention",
                       "tag": "v{v}", "licence": "BSD-3-Clause",
                       "versions": ["2.3.6", "2.5.9.post1", "2.6.3", "2.7.4.post1", "2.8.3"]},
    "xformers": {"pip": "xformers", "repo": "facebookresearch/xformers", "tag": "v{v}",
                     "licence": "BSD-3-Clause",
                     "versions": ["0.0.23", "0.0.27", "0.0.29", "0.0.32.post2", "0.0.35"]},
    "ggml": {"git": "ggml-org+ggml", "repo": "ggml-org/ggml", "tag": "{v}", "licence": "MIT",
                 "versions": ["v0.9.4", "v0.15.1", "v0.18.0", "v0.21.0"]},
    "jax": {"pip": "jax", "repo": "jax-ml/jax", "tag": "jax-v{v}", "licence": "Apache-2.0",
                "versions": ["0.4.23", "0.4.30", "0.5.3", "0.7.2", "0.10.2"]},
    "jaxlib": {"pip": "jaxlib", "repo": "jax-ml/jax", "licence": "Apache-2.0", "binaries": True,
                   "max_binary_mb": 400, "versions": ["0.4.30", "0.6.2", "0.10.2"]},
    "onnxruntime": {"pip": "onnxruntime-gpu", "repo": "microsoft/onnxruntime", "licence": "MIT",
                        "tag": "v{v}", "binaries": True, "max_binary_mb": 500,
                        "versions": ["1.17.1", "1.20.2", "1.24.4"]},
    "ctranslate2": {"pip": "ctranslate2", "repo": "OpenNMT/CTranslate2", "tag": "v{v}",
                        "prefix": "python/", "licence": "MIT", "binaries": True,
                        "versions": ["3.24.0", "4.3.1", "4.6.3", "4.8.5"]},
    "ray": {"pip": "ray", "repo": "ray-project/ray", "tag": "ray-{v}", "prefix": "python/",
                "licence": "Apache-2.0", "versions": ["2.9.3", "2.24.0", "2.40.0", "2.60.0"]},
    "lightning": {"pip": "lightning", "repo": "Lightning-AI/pytorch-lightning", "tag": "{v}",
                      "prefix": "src/", "licence": "Apache-2.0",
                      "versions": ["2.1.4", "2.3.3", "2.5.6", "2.6.6"]},
    "unsloth": {"pip": "unsloth", "repo": "unslothai/unsloth", "licence": "Apache-2.0",
                    "versions": ["2025.1.5", "2025.6.1", "2026.1.4", "2026.10.9"]},
    "nvidia-container-toolkit": {"git": "NVIDIA+nvidia-container-toolkit",
                                     "repo": "NVIDIA/nvidia-container-toolkit", "tag": "{v}",
                                     "licence": "Apache-2.0",
                                     "versions": ["v1.14.6", "v1.16.2", "v1.17.8", "v1.20.0"]},
    "k8s-device-plugin": {"git": "NVIDIA+k8s-device-plugin", "repo": "NVIDIA/k8s-device-plugin",
                              "tag": "{v}", "licence": "Apache-2.0",
                              "versions": ["v0.12.3", "v0.14.5", "v0.17.4", "v0.20.0"]},
    "pip": {"pip": "pip", "repo": "pypa/pip", "tag": "{v}", "prefix": "src/", "licence": "MIT",
                "versions": ["20.3.4", "22.3.1", "24.0", "25.1.1"]},
    "docker-compose": {"pip": "docker-compose", "repo": "docker/compose", "tag": "{v}",
                           "licence": "Apache-2.0", "versions": ["1.25.5", "1.27.4", "1.29.2"]},
    "moby": {"git": "moby+moby", "repo": "moby/moby", "tag": "{v}", "licence": "Apache-2.0",
                 "versions": ["v20.10.24", "v24.0.9", "v27.5.1", "v28.5.2"]},
    "docker-cli": {"git": "docker+cli", "repo": "docker/cli", "tag": "{v}", "licence": "Apache-2.0",
                       "versions": ["v20.10.24", "v24.0.9", "v27.5.1", "v29.7.2"]},
    "slurm": {"git": "SchedMD+slurm", "repo": "SchedMD/slurm", "tag": "{v}",
                  "licence": "GPL-2.0-or-later",
                  "versions": ["slurm-20-11-9-1", "slurm-22-05-11-1", "slurm-23-11-10-1",
                            "slurm-24-11-7-1", "slurm-25-11-7-1"]},
    "ollama": {"git": "ollama+ollama", "repo": "ollama/ollama", "tag": "{v}", "licence": "MIT",
                   "versions": ["v0.1.48", "v0.3.14", "v0.6.8", "v0.12.6", "v0.32.15"]},
    "text-generation-inference": {"git": "huggingface+text-generation-inference",
                                      "repo": "huggingface/text-generation-inference", "tag": "{v}",
                                      "licence": "Apache-2.0",
                                      "versions": ["v1.4.5", "v2.4.1", "v3.0.2", "v3.3.7"]},
    # the kernel side of NVIDIA's driver (the NVRM: lines of dmesg), MIT/GPL-2.0 dual licence;
    # nvidia-smi and the CUDA runtime stay out (closed source)
    "open-gpu-kernel-modules": {"git": "NVIDIA+open-gpu-kernel-modules",
                                    "repo": "NVIDIA/open-gpu-kernel-modules", "tag": "{v}",
                                    "licence": "MIT OR GPL-2.0",
                                    "versions": ["515.43.04", "535.183.01", "550.127.05",
                                              "570.133.07", "595.45.04"]},
    "tensorflow": {"pip": "tensorflow", "repo": "tensorflow/tensorflow", "tag": "v{v}",
                       "licence": "Apache-2.0", "binaries": True, "max_binary_mb": 1500,
                       "versions": ["2.12.1", "2.15.1", "2.19.0"]},
    # XLA's GPU runtime (the BFC allocator, RESOURCE_EXHAUSTED out-of-memory lines) ships in
    # JAX's CUDA plugin, not in jaxlib
    "jax-cuda12-pjrt": {"pip": "jax-cuda12-pjrt", "repo": "openxla/xla", "licence": "Apache-2.0",
                            "binaries": True, "max_binary_mb": 600,
                            "versions": ["0.4.30", "0.6.2", "0.7.2"]},
    "numba": {"pip": "numba", "repo": "numba/numba", "tag": "{v}", "licence": "BSD-2-Clause",
                  "versions": ["0.57.1", "0.59.1", "0.61.2"]},
    "sympy": {"pip": "sympy", "repo": "sympy/sympy", "tag": "sympy-{v}", "licence": "BSD-3-Clause",
                  "versions": ["1.12", "1.13.3", "1.14.0"]},
    "anyio": {"pip": "anyio", "repo": "agronholm/anyio", "tag": "{v}", "prefix": "src/",
                  "licence": "MIT", "versions": ["3.7.1", "4.4.0", "4.9.0"]},
    "click": {"pip": "click", "repo": "pallets/click", "tag": "{v}", "prefix": "src/",
                  "licence": "BSD-3-Clause", "versions": ["8.0.4", "8.1.7", "8.2.1"]},
}
ORDER = ["torch", "transformers", "vllm", "nccl", "accelerate", "deepspeed", "bitsandbytes",
         "triton", "peft", "trl", "huggingface_hub", "safetensors", "datasets", "diffusers",
         "flash-attn", "xformers", "sglang", "megatron-core", "ggml", "jax", "jaxlib",
         "onnxruntime", "ctranslate2", "ray", "lightning", "unsloth", "cpython", "glibc",
         "nvidia-container-toolkit", "k8s-device-plugin", "pip", "docker-compose", "moby",
         "docker-cli", "slurm", "ollama", "text-generation-inference", "open-gpu-kernel-modules",
         "tensorflow", "numba", "sympy", "anyio", "click", "jax-cuda12-pjrt"]

LEFT_OUT = ["cuda-runtime"]
"""Projects whose library strings are never indexed, in any project's library."""
SKIP_PARTS = {"test", "tests", "testing", "_vendor", "vendor", "third_party", "benchmarks",
              "examples", "docs", "_internal_tests", "idlelib", "lib2to3", "turtledemo",
              "tkinter", "ensurepip", "pydoc_data"}
C_EXT = (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".cxx")
LIB_EXT = (".so", ".dylib")


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


def wanted(path: str) -> bool:
    parts = path.split("/")
    return not (SKIP_PARTS & set(parts[:-1])) and not parts[-1].endswith("_test.go")


def lib_name(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(LIB_EXT) or ".so." in name


def messages_of(path: str, data: bytes | str, module_root: str = "",
                defines: dict[str, str] | None = None) -> list[tuple]:
    """The messages of one source file; `module_root`: the folder Python's import path starts at
    (CPython's Lib/); `defines`: the project's string macros."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if path.endswith(".py"):
        rel = path[len(module_root):] if module_root and path.startswith(module_root) else \
            (None if module_root else path)
        found = python_messages(text, module_of(rel) if rel else None)
    elif path.endswith(C_EXT):
        found = c_messages(text, defines=defines)
    elif path.endswith(".go"):
        found = c_messages(text, go=True)
    else:
        return []
    return [(f.template, path, f.line, f.function, f.kind) for f in found]


PREFIX_MIN = 10
"""Shortest library string read as a prefix label ('CUDA error: ')."""
PREFIX_MAX_MB = 100
"""--refresh reads prefix labels from libraries up to this size only."""


def library_strings(path: str, open_member, min_len: int = 20,
                    prefixes_only: bool = False) -> list[tuple]:
    with tempfile.NamedTemporaryFile(suffix=".lib", dir=TMP) as tmp:
        with open_member() as src:
            shutil.copyfileobj(src, tmp, 2**22)
        tmp.flush()
        out = subprocess.run(["strings", "-n", str(min(min_len, PREFIX_MIN)), tmp.name],
                             capture_output=True, check=True).stdout
    seen, rows = set(), []
    for raw in out.decode("utf-8", "replace").splitlines():
        if prefixes_only and not raw.endswith(": "):
            continue
        t = binary_string_message(raw, min_len)
        if prefixes_only and t and not is_prefix(t):
            continue
        if t and t not in seen:
            seen.add(t)
            rows.append((t, path, 0, "", "string"))
    return rows


def scan_members(members, spec: dict, prefixes_only: bool = False) -> list[tuple]:
    """members: iterable of (path, size, read()) triples. C sources are read first and then
    extracted with the project's string macros (a message may name one defined elsewhere)."""
    rows: list[tuple] = []
    c_files: list[tuple[str, str]] = []
    max_bytes = spec.get("max_binary_mb", 1200) * 2**20
    if prefixes_only:  # labels sit in the small libraries (libc10_cuda.so), not in kernel blobs
        max_bytes = min(max_bytes, PREFIX_MAX_MB * 2**20)
    root = spec.get("module_root", "")
    for path, size, read in members:
        if not wanted(path):
            continue
        if path.endswith(C_EXT):
            with read() as f:
                c_files.append((path, f.read().decode("utf-8", "replace")))
        elif path.endswith((".py", ".go")):
            with read() as f:
                rows += messages_of(path, f.read(), root)
        elif spec.get("binaries") and lib_name(path) and size <= max_bytes:
            rows += library_strings(path, read, spec.get("min_string", 20), prefixes_only)
    defines: dict[str, str] = {}
    for _, text in c_files:
        if "#" in text and "define" in text:
            defines.update(string_defines(text))
    for path, text in c_files:
        rows += messages_of(path, text, defines=defines)
    return rows


def wheel_members(path: Path):
    z = zipfile.ZipFile(path)
    for info in z.infolist():
        yield info.filename, info.file_size, (lambda i=info: z.open(i))


def git_members(git_dir: Path, tag: str):
    """Source files of a tag, read blob by blob: a fetched snapshot may lack some blobs (its
    largest files), which are skipped."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", tag],
                             capture_output=True, text=True, check=True).stdout
    wanted_files = []
    for entry in listing.splitlines():
        meta, path = entry.split("\t", 1)
        _, kind, sha, size = meta.split()
        if kind == "blob" and path.endswith((".py", ".go") + C_EXT) and wanted(path):
            wanted_files.append((path, sha, int(size) if size.isdigit() else 0))
    cat = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for path, sha, size in wanted_files:
            cat.stdin.write(f"{sha}\n".encode())
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            yield path, size, (lambda d=data: io.BytesIO(d))
    finally:
        cat.stdin.close()
        cat.wait()


def pip_fetch(spec: dict, version: str, dest: Path) -> Path:
    platforms = spec.get("platform") or LINUX
    args = PIP + ["download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
                  "-d", str(dest), "-q", f"{spec['pip']}=={version}"]
    for p in platforms:
        args += ["--platform", p]
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    files = list(dest.glob("*.whl"))
    if r.returncode or not files:
        # pure-Python packages need no platform
        r = subprocess.run(PIP + ["download", "--no-deps", "--only-binary=:all:", "-d", str(dest),
                                  "-q", f"{spec['pip']}=={version}"], capture_output=True, text=True,
                           check=False)
        files = list(dest.glob("*.whl"))
        if r.returncode or not files:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "no wheel")
    return files[0]


def local_wheel(name: str, version: str, work: Path) -> Path | None:
    stem = name.replace("-", "_")
    for d in WHEEL_DIRS + [work / "wheels"]:
        for sep in ("-", "+"):
            found = sorted(d.glob(f"{stem}-{version}{sep}*.whl"))
            if found:
                return found[0]
    return None


def local_members(spec: dict, version: str):
    """Files installed on this machine: CPython's Lib/ (as the repository names it) and
    libpython, or the listed files of a folder."""
    root = Path(spec["local"].format(v=version))
    if "files" in spec:
        paths = [(root / f, f) for f in spec["files"]]
    else:
        short = ".".join(version.split(".")[:2])
        lib = root / "lib" / f"python{short}"
        paths = [(f, "Lib/" + str(f.relative_to(lib))) for f in sorted(lib.rglob("*.py"))
                 if "site-packages" not in f.parts]
        paths += [(f, f.name) for f in (root / "lib").glob(f"libpython{short}*.so.1.0")]
    for f, name in paths:
        yield name, f.stat().st_size, (lambda f=f: open(f, "rb"))  # noqa: SIM115 - opened by the reader


def extract_release(project: str, version: str, work: Path, prefixes_only: bool = False
                    ) -> list[tuple]:
    spec = PROJECTS[project]
    if "local" in spec:
        return scan_members(local_members(spec, version), spec, prefixes_only)
    if "git" in spec:
        return scan_members(git_members(MIRROR / spec["git"] / "repo",
                                        spec.get("tag", "{v}").format(v=version)), spec)
    local = local_wheel(spec.get("pip", project), version, work)
    if local:
        log(f"  {local}")
        return scan_members(wheel_members(local), spec, prefixes_only)
    dest = work / "dl" / f"{project}-{version}"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        wheel = pip_fetch(spec, version, dest)
        log(f"  {wheel.name} {wheel.stat().st_size / 2**20:.0f} MB")
        if keep_wheels:  # a later --refresh reads it again (the folder is --work's, not committed)
            (work / "wheels").mkdir(exist_ok=True)
            wheel = wheel.replace(work / "wheels" / wheel.name)
        return scan_members(wheel_members(wheel), spec, prefixes_only)
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def refresh(projects: list[str], work: Path) -> None:
    """Re-read the sources of cached releases (after an extractor change): their library
    strings are kept from the cache and only the libraries' prefix labels are read again."""
    for project in projects:
        d = work / "cache" / project
        for out in sorted(d.glob("*.json.gz")) if d.is_dir() else []:
            version = out.name[:-len(".json.gz")]
            mark = out.with_name(f"{version}.refreshed")
            if mark.exists():
                continue
            log(f"refresh {project} {version}")
            try:
                new = extract_release(project, version, work, prefixes_only=True)
            except Exception as exc:  # noqa: BLE001 - one release failing must not stop the build
                log(f"  not refreshed: {exc}")
                continue
            with gzip.open(out, "rt") as f:
                old = json.load(f)
            kept = [r for r in old if r[4] == "string"]
            have = {r[0] for r in kept}
            rows = [r for r in new if r[4] != "string" or r[0] not in have] + kept
            part = out.with_suffix(".part")
            with gzip.open(part, "wt") as f:
                json.dump(rows, f)
            part.replace(out)
            mark.touch()
            log(f"  {len(old)} -> {len(rows)} messages")


def build(projects: list[str], work: Path, only: list[str] | None = None) -> None:
    for project in projects:
        for version in only or PROJECTS[project]["versions"]:
            out = work / "cache" / project / f"{version}.json.gz"
            if out.exists():
                continue
            log(f"{project} {version}")
            try:
                rows = extract_release(project, version, work)
            except Exception as exc:  # noqa: BLE001 - one release failing must not stop the build
                log(f"  skipped: {exc}")
                (work / "cache" / project).mkdir(parents=True, exist_ok=True)
                (work / "cache" / project / f"{version}.failed").write_text(str(exc))
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            part = out.with_suffix(".part")
            with gzip.open(part, "wt") as f:
                json.dump(rows, f)
            part.replace(out)  # a killed build leaves no half-written release
            if PROJECTS[project].get("skipped_binaries"):
                out.with_name(f"{version}.nobin").touch()
            log(f"  {len(rows)} messages")


def merge(work: Path, out_dir: Path) -> None:
    releases: dict[str, dict[str, list]] = {}
    for project in ORDER:
        d = work / "cache" / project
        if not d.is_dir():
            continue
        for f in d.glob("*.json.gz"):
            with gzip.open(f, "rt") as fh:
                releases.setdefault(project, {})[f.name[:-len(".json.gz")]] = json.load(fh)
    from faultlens.origins.store import write_index

    no_binaries = {p: sorted(f.name[:-len(".nobin")] for f in (work / "cache" / p).glob("*.nobin"))
                   for p in releases}
    left_out: set[str] = set()
    for project in LEFT_OUT:
        found = sorted((work / "cache" / project).glob("*.json.gz"))
        if not found:
            raise SystemExit(f"build {project} first: its strings must be left out of the index")
        for f in found:
            with gzip.open(f, "rt") as fh:
                left_out |= {r[0] for r in json.load(fh)}
    write_index(releases, PROJECTS, out_dir, no_binaries, left_out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("projects", nargs="*")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--keep-wheels", action="store_true",
                    help="keep downloaded wheels in <work>/wheels for a later --refresh")
    ap.add_argument("--refresh", action="store_true",
                    help="re-read the sources of the projects' cached releases")
    ap.add_argument("--no-binaries", action="store_true",
                    help="skip compiled libraries' strings (recorded in the manifest)")
    ap.add_argument("--versions", help="comma-separated releases to build, in this order "
                                       "(default: the project's list)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/faultlens-origins"))
    ap.add_argument("--out", type=Path, default=ROOT / "src/faultlens/origins/data")
    a = ap.parse_args()
    global TMP, keep_wheels
    TMP = a.work
    keep_wheels = a.keep_wheels
    a.work.mkdir(parents=True, exist_ok=True)
    names = ORDER if a.all else a.projects
    unknown = [n for n in names if n not in PROJECTS]
    if unknown:
        print(f"unknown project(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    if a.no_binaries:
        for n in names:
            PROJECTS[n] = {**PROJECTS[n], "binaries": False, "skipped_binaries": True}
    if a.refresh:
        refresh(names, a.work)
    else:
        build(names, a.work, a.versions.split(",") if a.versions else None)
    if a.merge:
        merge(a.work, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
