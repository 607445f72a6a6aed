"""Remove secrets (tokens, keys, passwords in URLs) from text before it is stored or shown."""

from __future__ import annotations

import re

MASK = "<redacted>"

# (literal guards, pattern, replacement): a rule runs only when one of its guards occurs in the
# lower-cased text, which keeps redaction of a large log to a few cheap substring searches.
_RULES = [
    (("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),                        # Hugging Face
    (("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),        # AWS access key id
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"), MASK),
    (("sk-",), re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), MASK),          # OpenAI / Anthropic
    (("xox",), re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),                 # Slack
    (("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),                  # GitLab
    (("bearer", "token"), re.compile(r"(?i)\b(bearer|token)(\s+)[A-Za-z0-9._~+/-]{16,}=*"),
     rf"\1\2{MASK}"),
    (("authorization",), re.compile(r"(?i)(authorization:\s*basic\s+)[A-Za-z0-9+/=]{8,}"), rf"\1{MASK}"),
    # user:password@ in URLs
    (("://",), re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), rf"\1{MASK}@"),
    # NAME=value / NAME: value where the name ends in a secret word (HF_TOKEN, db_password,
    # AWS_SECRET_ACCESS_KEY) - not "tokenizers: The" or "max_tokens=100"
    (("password", "passwd", "secret", "credential"),
     re.compile(r"(?i)(PASSWORD|PASSWD|SECRET|CREDENTIALS?)\b(\s*[=:]\s*)(['\"]?)[^\s'\",;]+"),
     rf"\1\2\3{MASK}"),
    (("token", "key"),
     re.compile(r"(?i)(TOKEN|API_?KEY|ACCESS_?KEY|SECRET_?KEY|PRIVATE_?KEY)\b(\s*[=:]\s*)(['\"]?)"
                r"[^\s'\",;<>]{8,}"), rf"\1\2\3{MASK}"),
]

_SECRET_NAME = re.compile(r"(?i)(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY"
                          r"|CREDENTIAL|AUTH|SESSION|COOKIE)")


def redact(text: str) -> str:
    """Text with every secret-looking value replaced by <redacted>."""
    low = text.lower()
    for guards, pattern, repl in _RULES:
        if any(g in low for g in guards):
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
