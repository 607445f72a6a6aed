"""Lines that say a run failed, whatever the cause: what the report names when no reference does.

These are structural patterns, scanned in the same Hyperscan pass as the catalogue. Each maps to
a kind of failure line; a line that is only a warning is never a failure line.
"""

from __future__ import annotations

import re

# name -> (Hyperscan/Python regex, kind shown to the user, priority: lower is more telling)
PATTERNS: dict[str, tuple[str, str, int]] = {
    "exception_line": (r"(?:^|[\s\]>|:(])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt"
                       r"|Fault)(?::\s|:?\s*$)", "exception", 1),
    "cuda_error": (r"CUDA (?:error|Error|ERROR)\b|cuda(?:Error|ErrorCode)\w*|CUBLAS_STATUS_\w+|"
                   r"CUDNN_STATUS_\w+|CUDA_ERROR_\w+", "CUDA error", 2),
    "assertion": (r"Assertion [`'\"(]?.{1,400}[`'\")]? failed|Assertion failed|"
                  r"AssertionError|failed assertion", "assertion", 2),
    "xid": (r"NVRM: Xid \(|NVRM: GPU at PCI\S* has fallen off the bus|"
            r"NVRM: .*(?:fatal|error|[Ff]ailed)",
            "NVIDIA driver error", 2),
    "nccl_warn": (r"NCCL WARN |ncclInternalError|ncclSystemError|ncclUnhandledCudaError|"
                  r"ncclRemoteError|ncclInvalidUsage", "NCCL error", 3),
    "fatal": (r"\b(?:FATAL|CRITICAL|Fatal error|fatal error|F\d{4} \d\d:\d\d:\d\d|panic:|"
              r"terminate called after throwing)|!!! Exception during processing|"
              r"Error occurred when executing \w", "fatal", 3),
    "killed": (r"(?:^|\s)Killed\s*$|killed by signal|Signals\.SIG(?:KILL|SEGV|ABRT|BUS)|"
               r"Segmentation fault|core dumped|exit code 13[479]\b|signal (?:9|11|6) \(|"
               r"\*\*\* SIG[A-Z]+ received at time=",
               "killed process", 3),
    "os_error": (r"exec format error|[Ii]llegal instruction|Bus error|cannot open shared object file|"
                 r"command not found|[Pp]ermission denied|No space left on device|"
                 r"Too many open files|Address already in use|Connection refused",
                 "operating-system error", 3),
    # one group around the alternation: a top-level alternation with a `^` branch made Hyperscan
    # drop another pattern's matches in the same database (found on the k8s capacity lines)
    "build_failed": (r"(?:Failed to build \S|ninja: build stopped: subcommand failed|"
                     r"^[ \t]*(?:Running setup\.py install for|Building wheel for) \S+.* \.\.\. "
                     r"error[ \t]*$|^(?:CMake|make(?:\[\d+\])?): \*\*\* .*Error \d)",
                     "build failure", 4),
    "nan_loss": (r"(?:^|[^A-Za-z])[Ll]oss(?:es)?\b[\w ]{0,20}[:=]\s*-?nan\b|"
                 r"\b[Ll]oss (?:is|became|=) -?nan\b",
                 "NaN loss", 4),
    "exit_status": (r"exitcode\s*:\s*-?[1-9]\d*|returned non-zero exit status [1-9]|"
                    r"exited with (?:exit )?(?:code|status) [1-9]|exit code:? [1-9]\d*\b|"
                    r"error: subprocess-exited-with-error|ChildFailedError",
                    "non-zero exit", 5),
    "error_line": (r"(?:^|[\s\[|:])(?:ERROR|Error|error)(?:\]|:)\s+\S|\[(?:E|ERR|ERROR)\]|"
                   r"\bError Code \d+|\bEP Error |\bFAIL(?:ED)?\b|\b[Ff]ailed!|:\s[EF] [\w/.-]+\.(?:cc|cpp|cu|h):\d+\]",
                   "error line", 4),
    "failure_message": (r"(?:^|[\s:])(?:Cannot|Could not|Unable to|Failed to|cannot|could not|"
                        r"unable to|failed to) [a-z]\w*|has failed\b|is not available\b|"
                        r"not found\b|No such file or directory|[Nn]o CUDA GPUs are available|"
                        r"out of memory|\bOOM\b|\bKilled\b|\bstuck\b|\bhangs?\b|timed out|"
                        r"has no attribute|had an illegal value|[Rr]esource exhausted|"
                        r"is required (?:for|to)\b|died unexpectedly|crashed\b|"
                        r"unexpectedly (?:died|exited|terminated)|"
                        r"(?:not enough|too many) values to unpack|"
                        r"\bError (?:during|while|when|in) [\w.]+[^\n]{0,120}: \S",
                        "failure message", 6),
    "native_backtrace": (r"^#\d+\s+0x[0-9a-fA-F]+ in \S", "native backtrace", 6),
}

# a Python warning category, an upper-case level word, a compiler's "warning:"; a bare "Warning"
# is not enough (Kubernetes prints failed scheduling as a "Warning" event)
_WARNING = re.compile(r"\b\w+Warning\b|\bWARN(?:ING)?\b(?!.*\bERROR\b)|\b[Ww]arn(?:ing)?: |^\s*warning:")
_NCCL_WARN = re.compile(r"NCCL WARN ")
_WARN_TAG = re.compile(r"\s*\[W[\s\d]")  # torch's C++ warnings: [W socket.cpp:663] ...


def is_warning(text: str) -> bool:
    """A line that only warns: the run may well go on after it."""
    if _NCCL_WARN.search(text):
        return False
    return bool(_WARNING.search(text) or _WARN_TAG.match(text))


def kind_of(name: str) -> str:
    return PATTERNS[name][1]


def priority_of(name: str) -> int:
    return PATTERNS[name][2]
