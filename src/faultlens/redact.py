"""Remove secrets (tokens, keys, passwords in URLs, private keys) from text before it is stored
or shown.

It fails closed: besides the formats it knows (AWS, Azure, GCP, Slack, GitHub, GitLab, Hugging
Face, OpenAI/Anthropic keys, JWTs, PEM private keys, URL credentials), it masks the value of any
`name=value` / `name: value` / JSON / YAML pair whose name ends in a secret word, and any long
token with both letters and digits that follows a word like key/token/secret/password.

Linear time on any input: every pattern runs on RE2 (google-re2), which never backtracks, and
the prose rule looks at a bounded window after each keyword. Rules run only when one of their
literal guards occurs in the lower-cased text.
"""

from __future__ import annotations

import re2

MASK = "<redacted>"

_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20
_OPTIONS.log_errors = False


def _rx(pattern: str):
    return re2.compile(pattern, _OPTIONS)


def _mask_group(n: int, min_len: int = 1):
    """Replace group `n` of the match with MASK (keep the rest) when it is at least `min_len`
    characters long."""
    def repl(m) -> str:
        value = m.group(n)
        if value is None or len(value) < min_len:
            return m.group(0)
        start, end = m.start(n) - m.start(0), m.end(n) - m.start(0)
        whole = m.group(0)
        return whole[:start] + MASK + whole[end:]
    return repl


def _mixed(token: str) -> bool:
    """Letters and digits both: what a generated key looks like, unlike a word or a number."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _mask_body_line(m) -> str:
    """A line that is nothing but a long base64 run: a PEM body line cut from its block."""
    t = m.group(2)
    if _mixed(t) and any(c.isupper() for c in t) and any(c.islower() for c in t):
        return m.group(1) + MASK
    return m.group(0)


_STRONG_NAME = _rx(r"(?i)(?:password|passwd|passphrase|secret|credentials?)(?:[_-]?id)?$")
_BARE_NAME = _rx(r"(?i)^[\"']?(?:token|key|sig|auth|cookie|session)(?:[_-]?id)?$")
_PLACEHOLDERS = {"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "*", "***",
                 "****", "<redacted>", "redacted", "xxx", "''", '""', "[]", "{}"}


def _pair(m) -> str:
    name, sep, value = m.group(1), m.group(2), m.group(3)
    quoted = value[:1] in "\"'" and len(value) >= 2 and value[-1] == value[0]
    inner = value[1:-1] if quoted else value
    strong = _STRONG_NAME.search(name) is not None
    if inner.lower() in _PLACEHOLDERS or inner.startswith(("$", "<", "%(", "{", "[", "(")) \
            or MASK in inner:
        return m.group(0)
    if len(inner) < (1 if strong else 8):
        return m.group(0)
    if not strong and _BARE_NAME.search(name) is not None and not _is_token(inner):
        return m.group(0)  # "Timeout waiting for key: default_pg/0/0"
    if not strong and not _mixed(inner) and ("." in inner or "/" in inner or len(inner) < 16):
        return m.group(0)  # tokenizer.pad_token = tokenizer.eos_token
    masked = value[0] + MASK + value[-1] if quoted else MASK
    return name + sep + masked


def _base64_secret(m) -> str:
    """A base64 word of exactly 40 characters with upper case, lower case and digits (an AWS
    secret key) - not a git sha (lower-case hex) nor a file path. Longer runs are left to the
    rules with context: in logs they are paths, URLs and mangled C++ symbols."""
    token = m.group(0)
    after = m.string[m.end():m.end() + 1]
    if len(token) != 40 or "/" in token and after in (".", ":"):
        return token  # /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825
    if any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token):
        return MASK
    return token


_SECRET_WORDS = ("password|passwd|passphrase|secret|token|key|credentials?|signature|sig|auth"
                 "|cookie|session")

# (literal guards, pattern, replacement); the first that applies runs first
_RULES = [
    # PEM private keys, the whole block: across lines, or one JSON string with \n escapes
    # (a GCP service-account file's "private_key"); a block cut before its END is masked to
    # the end of its base64 body
    (("private key",),
     _rx(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s:,]|\\[nr]|-[A-Za-z0-9])*"
         r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)?"),
     MASK),
    # user:password@ in URLs, any scheme case, any characters in the password (up to the last
    # @ before white space)
    (("://",), _rx(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:@/]*:)(\S*)@"), _mask_group(2)),
    # Slack incoming webhooks
    (("hooks.slack.com",), _rx(r"(?i)(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/-]+"),
     lambda m: m.group(1) + MASK),
    (("hf_",), _rx(r"\bhf_[A-Za-z0-9]{20,}"), MASK),                                  # Hugging Face
    (("akia", "asia"), _rx(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),                   # AWS key id
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     _rx(r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"), MASK),
    (("sk-",), _rx(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), MASK),                  # OpenAI, Anthropic
    (("sk_", "rk_"), _rx(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"), MASK),            # Stripe
    (("xox", "xapp-"), _rx(r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}"), MASK),  # Slack
    (("glpat-",), _rx(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),                           # GitLab
    (("aiza",), _rx(r"\bAIza[0-9A-Za-z_-]{30,}"), MASK),                               # Google API key
    (("ya29.",), _rx(r"\bya29\.[0-9A-Za-z_-]{20,}"), MASK),                            # Google OAuth
    (("eyj",), _rx(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?"), MASK),  # JWT
    (("bearer", "token"), _rx(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/-]{16,}=*)"),
     lambda m: m.group(0) if not _mixed(m.group(1)) else _mask_group(1)(m)),
    (("authorization",), _rx(r"(?i)authorization:\s*(?:basic|bearer|token)\s+([A-Za-z0-9+/=._~-]{8,})"),
     _mask_group(1)),
    # NAME=value / NAME: value / "NAME": "value" / NAME='va lue' where the name ends in a secret
    # word (HF_TOKEN, db_password, AWS_SECRET_ACCESS_KEY, AccountKey, SecretAccessKey,
    # private_key_id, sig) - not "max_tokens=100", "pad_token: <pad>" or "KeyError: 'x'"
    (("password", "passwd", "passphrase", "secret", "token", "key", "credential", "sig", "auth",
      "cookie", "session"),
     _rx(r"(?i)([A-Za-z0-9_.-]*(?:" + _SECRET_WORDS + r")(?:[_-]?id)?)([\"']?[ \t]*[=:][ \t]*)"
         r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s'\",;&<>]+)"),
     _pair),
    # a 40-character base64 word standing alone: an AWS secret key after its key id (a run is
    # matched whole, as the leftmost start of a run is its start)
    (None, _rx(r"[A-Za-z0-9/+]{40,}"), _base64_secret),
    # a PEM body line on its own (the block was cut, e.g. a stored log's tail)
    (None, _rx(r"(?m)^(\s*)([A-Za-z0-9+/]{40,}={0,2})\s*$"), _mask_body_line),
]

# values with no name beside them: a long token with letters and digits within a short window
# after one of these words ("W&B API key is configured. <key>", "token was 3f9a...")
_KEYWORD = _rx(r"(?i)\b(?:api[ _-]?key|apikey|key|token|secret|password|passwd|passphrase"
               r"|credentials?|auth)s?\b")
_KEYWORD_GUARDS = ("key", "token", "secret", "passw", "passphrase", "credential", "auth")
_CANDIDATE = _rx(r"[A-Za-z0-9_+/.-]{20,}=*")
WINDOW = 80
"""Characters after a keyword in which a token counts as the keyword's value."""
MIN_TOKEN = 20


def _is_token(word: str) -> bool:
    """A generated secret, not a word, a number, a dotted module name or a file path."""
    core = word.strip("=.")
    if len(core) < MIN_TOKEN or not _mixed(core) or MASK in core:
        return False
    if "." in core and not all(len(p) >= 8 for p in core.split(".")):
        return False  # model.layers.31.self_attn.weight, torch-2.1.0
    if core.count("/") > 1 and not any(c.isupper() for c in core):
        return False  # a path, not base64
    # words-joined-by-dashes (models--meta-llama--Llama-2-7b-hf) are not generated
    return not (core.count("-") >= 3 and not any(c.isdigit() for c in core.replace("-", "")[:8]))


_KEYWORD_WORDS = ("key", "keys", "apikey", "apikeys", "api_key", "api_keys", "token", "tokens",
                  "secret", "secrets", "password", "passwords", "passwd", "passphrase",
                  "credential", "credentials", "auth")


def _is_word_char(c: str) -> bool:
    """A character of a word as RE2's \\b sees it (ASCII)."""
    return c.isascii() and (c.isalnum() or c == "_")


def _keyword_ends(text: str) -> list[int]:
    """Where each keyword (a whole word, any case) ends, ascending: what _KEYWORD finds, by
    str.find on the lower-cased text (a match object per hit costs 30 times more)."""
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: positions would shift
        return [m.end() for m in _KEYWORD.finditer(text)]
    ends = []
    for word in _KEYWORD_WORDS:
        i = low.find(word)
        while i >= 0:
            end = i + len(word)
            if (i == 0 or not _is_word_char(low[i - 1])) and (end == len(low) or not _is_word_char(low[end])):
                ends.append(end)
            i = low.find(word, i + 1)
    return sorted(set(ends))


def _after_keywords(text: str) -> str:
    """Mask generated-looking tokens that start within WINDOW characters after a keyword, on
    the keyword's line: one pass for the keywords, one for the candidates, merged."""
    ends = _keyword_ends(text)
    if not ends:
        return text
    out = []
    pos = 0  # text[:pos] is in `out`
    k = -1  # ends[k] is the last keyword end at or before the candidate
    for c in _CANDIDATE.finditer(text):
        while k + 1 < len(ends) and ends[k + 1] <= c.start():
            k += 1
        if k < 0 or c.start() - ends[k] > WINDOW or not _is_token(c.group(0)):
            continue
        if text.find("\n", ends[k], c.start()) >= 0:
            continue
        out += (text[pos:c.start()], MASK)
        pos = c.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact(text: str) -> str:
    """Text with every secret-looking value replaced by <redacted>."""
    if not text:
        return text
    low = text.lower()
    for guards, pattern, repl in _RULES:
        if guards is None or any(g in low for g in guards):
            text = pattern.sub(repl, text)
    if any(g in low for g in _KEYWORD_GUARDS):
        text = _after_keywords(text)
    return text


_SECRET_NAME = _rx(r"(?i)(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|ACCOUNT_?KEY"
                   r"|CREDENTIAL|AUTH|SESSION|COOKIE|SIGNATURE)")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's (or JSON key's) name says its value is a secret."""
    return _SECRET_NAME.search(name) is not None


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
        return {k: MASK if isinstance(v, str) and v and is_secret_name(str(k)) else redact_json(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value
