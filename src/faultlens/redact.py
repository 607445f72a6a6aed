"""Remove secrets (tokens, keys, passwords in URLs) from text before it is stored or shown."""

from __future__ import annotations

import re

MASK = "<redacted>"

_PATTERNS = [
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),                                   # Hugging Face
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),                           # AWS access key id
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"), MASK),
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), MASK),                   # OpenAI / Anthropic
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),                          # Slack
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),                              # GitLab
    (re.compile(r"(?i)\b(bearer|token)(\s+)[A-Za-z0-9._~+/-]{16,}=*"), rf"\1\2{MASK}"),
    (re.compile(r"(?i)(authorization:\s*basic\s+)[A-Za-z0-9+/=]{8,}"), rf"\1{MASK}"),
    # user:password@ in URLs
    (re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), rf"\1{MASK}@"),
    # NAME=value / NAME: value where the name ends in a secret word (HF_TOKEN, db_password,
    # AWS_SECRET_ACCESS_KEY) - not "tokenizers: The" or "max_tokens=100"
    (re.compile(r"(?i)\b([A-Z0-9_.-]*(?:PASSWORD|PASSWD|SECRET|CREDENTIALS?))\b(\s*[=:]\s*)(['\"]?)"
                r"[^\s'\",;]+"), rf"\1\2\3{MASK}"),
    (re.compile(r"(?i)\b([A-Z0-9_.-]*(?:TOKEN|API_?KEY|ACCESS_?KEY|SECRET_?KEY|PRIVATE_?KEY))\b"
                r"(\s*[=:]\s*)(['\"]?)[^\s'\",;<>]{8,}"), rf"\1\2\3{MASK}"),
]

_SECRET_NAME = re.compile(r"(?i)(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY"
                          r"|CREDENTIAL|AUTH|SESSION|COOKIE)")


def redact(text: str) -> str:
    """Text with every secret-looking value replaced by <redacted>."""
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret."""
    return bool(_SECRET_NAME.search(name))


def redact_env(name: str, value: str) -> str:
    if is_secret_name(name):
        return MASK
    return redact(value)


def redact_json(value):
    """A JSON-like value with every string redacted, and the string values of secret-named keys
    (e.g. the fact `env.HF_TOKEN`) masked whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: MASK if isinstance(v, str) and is_secret_name(str(k)) else redact_json(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value
