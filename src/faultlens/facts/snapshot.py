"""Collect an environment snapshot: OS, container, Python packages, toolchain, GPUs, env vars, limits.

Never imports torch or any ML package (versions come from package metadata and torch's
version.py read as text); every probe tolerates absence, so a machine without a GPU, torch or
compilers gets a snapshot with those parts reported absent. The flat `facts` map uses the same
names as reference `facts:` conditions, so a snapshot can stand in for what a log does not show.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ..redact import redact_env

SCHEMA = 1
PACKAGES = {  # distribution name -> fact prefix
    "torch": "torch", "vllm": "vllm", "transformers": "transformers", "accelerate": "accelerate",
    "deepspeed": "deepspeed", "flash-attn": "flash_attn", "flash_attn": "flash_attn",
    "flashinfer-python": "flashinfer", "flashinfer": "flashinfer", "bitsandbytes": "bitsandbytes",
    "triton": "triton", "tensorrt-llm": "tensorrt_llm", "tensorrt_llm": "tensorrt_llm",
    "xformers": "xformers", "numpy": "numpy", "unsloth": "unsloth", "torchvision": "torchvision",
    "safetensors": "safetensors", "huggingface-hub": "huggingface_hub", "peft": "peft",
    "nvidia-cudnn-cu12": "cudnn_wheel", "nvidia-cudnn-cu13": "cudnn_wheel",
    "nvidia-nccl-cu12": "nccl_wheel", "nvidia-nccl-cu13": "nccl_wheel",
    "nvidia-cuda-runtime-cu12": "cuda_runtime_wheel", "nvidia-cuda-runtime": "cuda_runtime_wheel",
}
ENV_PREFIXES = ("CUDA_", "NCCL_", "TORCH", "PYTORCH_", "VLLM_", "FLASHINFER_", "HF_", "HUGGING",
                "TRANSFORMERS_", "OMP_", "LD_LIBRARY_PATH", "LD_PRELOAD", "TOKENIZERS_", "NVIDIA_",
                "CUBLAS_", "CUDNN_", "TRITON_", "MASTER_", "WORLD_SIZE", "LOCAL_RANK", "RANK",
                "ACCELERATE_", "DS_", "UCX_", "FI_", "GLOO_", "MKL_", "KMP_", "SLURM_JOB_ID",
                "SINGULARITY", "APPTAINER", "ENROOT", "PYXIS")
SMI_FIELDS = "index,name,compute_cap,memory.total,driver_version,mig.mode.current,ecc.mode.current"


def _run(cmd: list[str], timeout: float = 5.0) -> str | None:
    exe = shutil.which(cmd[0])
    if not exe:
        return None
    try:
        res = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return (res.stdout or "") + (res.stderr or "") if res.returncode == 0 else None


def _packages() -> dict[str, str]:
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "").lower()
        prefix = PACKAGES.get(name) or PACKAGES.get(name.replace("_", "-"))
        if prefix and prefix not in found:
            found[prefix] = dist.version
    return found


def _torch_build() -> dict[str, str]:
    """torch's CUDA / HIP build from torch/version.py, read as text (never imported)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("torch")
    except (ImportError, ValueError):
        return {}
    if not spec or not spec.submodule_search_locations:
        return {}
    path = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    try:
        text = path.read_text()
    except OSError:
        return {}
    out = {}
    for key in ("cuda", "hip"):
        m = re.search(rf"^{key}\s*(?::\s*[\w\[\]|. ]+)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if m:
            out[f"torch.{key}"] = m.group(1)
    return out


def _gpus() -> tuple[list[dict], dict[str, str]]:
    out = _run(["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"])
    if out is None:
        return [], {}
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 7:
            continue
        gpus.append({"index": parts[0], "name": parts[1], "compute_capability": parts[2],
                     "memory_mib": parts[3], "driver_version": parts[4], "mig": parts[5],
                     "ecc": parts[6]})
    header = _run(["nvidia-smi"]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", header)
    extra = {"cuda.version": m.group(1)} if m else {}
    return gpus, extra


def _container() -> str:
    env = os.environ
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if any(k.startswith(("ENROOT_", "PYXIS_")) for k in env):
        return "enroot"
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if os.path.exists("/run/.containerenv"):
        return "podman"
    if os.path.exists("/.dockerenv"):
        return "docker"
    try:
        cgroup = Path("/proc/1/cgroup").read_text()
    except OSError:
        cgroup = ""
    for marker, kind in (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman")):
        if marker in cgroup:
            return kind
    return "none"


def _limits() -> dict[str, str]:
    try:
        import resource
    except ImportError:  # Windows
        return {}
    out = {}
    for name, res in (("nofile", resource.RLIMIT_NOFILE), ("memlock", resource.RLIMIT_MEMLOCK)):
        soft, _hard = resource.getrlimit(res)
        out[f"ulimit.{name}"] = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
    return out


def _shm() -> dict[str, str]:
    try:
        st = os.statvfs("/dev/shm")
    except (OSError, AttributeError):
        return {}
    return {"shm.size_mb": str(st.f_blocks * st.f_frsize // (1 << 20))}


def _os() -> dict[str, str]:
    system = platform.system()
    facts = {"os.family": {"Linux": "linux", "Darwin": "macos", "Windows": "windows"}.get(system, system.lower()),
             "os.kernel": platform.release(), "os.machine": platform.machine()}
    try:
        release = Path("/etc/os-release").read_text()
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)', release, re.M)
        if m:
            facts["os.release"] = m.group(1)
    except OSError:
        pass
    libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    if libc and libc.startswith("glibc "):
        facts["glibc.version"] = libc.split()[1]
    return facts


def _tools() -> dict[str, str]:
    facts = {}
    nvcc = _run(["nvcc", "--version"])
    if nvcc:
        m = re.search(r"release (\d+\.\d+)", nvcc)
        if m:
            facts["nvcc.version"] = m.group(1)
    gcc = _run(["gcc", "--version"])
    if gcc:
        m = re.search(r"(\d+\.\d+\.\d+)", gcc.splitlines()[0] if gcc else "")
        if m:
            facts["gcc.version"] = m.group(1)
    return facts


def collect() -> dict:
    """The snapshot of this machine, as a JSON-ready dict (see docs/env-snapshot.md)."""
    facts: dict[str, str] = {}
    absent: list[str] = []
    facts.update(_os())
    facts["python.version"] = platform.python_version()
    facts["python.implementation"] = platform.python_implementation()
    packages = _packages()
    for prefix, version in packages.items():
        facts[f"{prefix}.version"] = version
    for prefix in sorted(set(PACKAGES.values())):
        if prefix not in packages and not prefix.endswith("_wheel"):
            absent.append(f"package {prefix}")
    facts.update(_torch_build())
    if "torch.version" in facts and "torch.cuda" not in facts:
        m = re.search(r"\+cu(\d+)(\d)$", facts["torch.version"])
        if m:
            facts["torch.cuda"] = f"{m.group(1)}.{m.group(2)}"
    if "cudnn_wheel.version" in facts:
        facts["torch.cudnn"] = facts["cudnn_wheel.version"]
    facts.update(_tools())
    absent += [f"tool {t}" for t in ("nvcc", "gcc") if f"{t}.version" not in facts]
    gpus, extra = _gpus()
    facts.update(extra)
    if gpus:
        first = gpus[0]
        facts.update({"gpu.count": str(len(gpus)), "gpu.name": first["name"],
                      "gpu.compute_capability": first["compute_capability"],
                      "gpu.memory_mib": first["memory_mib"], "driver.version": first["driver_version"],
                      "gpu.mig": first["mig"], "gpu.ecc": first["ecc"]})
    else:
        facts["gpu.count"] = "0"
        absent.append("nvidia-smi (no NVIDIA GPU or driver visible)")
    facts["container.kind"] = _container()
    facts.update(_shm())
    facts.update(_limits())
    env = {k: redact_env(k, v) for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}
    for k, v in env.items():
        facts[f"env.{k}"] = v
    return {
        "schema": SCHEMA,
        "kind": "faultlens-env",
        "collected_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "facts": dict(sorted(facts.items())),
        "gpus": gpus,
        "absent": absent,
    }
