import pytest

from faultlens.redact import MASK, redact, redact_env


@pytest.mark.parametrize("text,secret", [
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456", "hf_abcdefghijklmnopqrstuvwxyz123456"),
    ("login with hf_AbCdEfGhIjKlMnOpQrStUvWx", "hf_AbCdEfGhIjKlMnOpQrStUvWx"),
    ("aws AKIAIOSFODNN7EXAMPLE key", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9"),
    ("git clone https://user:s3cr3tpass@github.com/org/repo.git", "s3cr3tpass"),
    ("postgresql://fl:hunter2@db:5432/x", "hunter2"),
    ("password: hunter2", "hunter2"),
    ("WANDB_API_KEY=0123456789abcdef0123", "0123456789abcdef0123"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ0123456789", "ghp_0123456789abcdefghij"),
])
def test_secrets_are_redacted(text, secret):
    out = redact(text)
    assert secret not in out and MASK in out


@pytest.mark.parametrize("text", [
    "huggingface/tokenizers: The current process just got forked",
    "max_tokens=100 temperature=0.7",
    "num_tokens: 4096",
    "Avg prompt throughput: 12.3 tokens/s",
    "pad_token: <pad>",
])
def test_ordinary_lines_are_left_alone(text):
    assert redact(text) == text


def test_env_values_by_name():
    assert redact_env("HF_TOKEN", "anything") == MASK
    assert redact_env("NCCL_DEBUG", "INFO") == "INFO"


# --- issue 13 ------------------------------------------------------------------------------------

import base64
import json
import string

import re2
from conftest import DATA
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from faultlens import redact as redact_mod

PROBE = DATA / "issue13"


def _survivors(secret: str, out: str, window: int = 12) -> list[str]:
    """Pieces of `secret` (every `window`-character slice, or the whole when shorter) in `out`."""
    if len(secret) <= window:
        return [secret] if secret in out else []
    return [secret[i:i + window] for i in range(len(secret) - window + 1) if secret[i:i + window] in out]


def test_issue13_item3_probe_secrets_are_redacted():
    """The seven kinds that leaked (Azure AccountKey, Slack webhook, bare JWT, PEM body, JSON
    SecretAccessKey, HTTPS:// in upper case, '/' in a URL password) and the values with no
    name beside them (a bare AWS secret key, the W&B key after 'API key is configured.')."""
    out = redact((PROBE / "leaking-secrets.log").read_text())
    for secret in (PROBE / "leaking-secrets.secrets").read_text().split():
        assert not _survivors(secret, out), (secret, out)
    assert "-----BEGIN" not in out  # the whole PEM block goes, markers included
    assert "AccountName=flprobe" in out and "git.example.com/org/repo.git" in out


@pytest.mark.parametrize("text,secret", [
    ("AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=x", "Zm9vYmFyYmF6cXV4Zm9vYmFy"),
    ('"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', "wJalrXUtnFEMI"),
    ("HTTPS://user:pw1234@example.com", "pw1234"),
    ("https://user:pa/ss@example.com", "pa/ss"),
    ("aws_secret_access_key = 'my secret with spaces'", "with spaces"),
    ("https://x.blob.core.windows.net/c/b?sv=2022-11-02&sig=o8Kx3zJ9%2BqR4tY7uW1vB5nM2cL6pA0sD8fG3hJ4kL9%3D&se=2026", "o8Kx3zJ9%2BqR4"),
])
def test_issue13_item3_named_forms(text, secret):
    assert secret not in redact(text)


def test_issue13_item3_whole_pem_block_in_a_json_string():
    """A GCP service-account key file: private_key is one JSON string with \\n escapes."""
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 2
    text = json.dumps({"type": "service_account", "private_key_id": "0123456789abcdef0123456789abcdef01234567",
                       "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
                       "client_email": "x@p.iam.gserviceaccount.com"})
    out = redact(text)
    assert not _survivors(body, out) and "0123456789abcdef01234567" not in out
    assert "x@p.iam.gserviceaccount.com" in out


def test_issue13_item3_pem_body_line_cut_from_its_block():
    line = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8Q2M6Kcw0Z9yWmNwGdjmQ3hvq"
    assert redact(f"{line}\n-----END RSA PRIVATE KEY-----\n").count(line[:20]) == 0


@pytest.mark.parametrize("text", [
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled",
    "Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)`",
    "  Downloading torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl (670.2 MB)",
    "  --hash=sha256:4ac0d1d5c5b84b6d44ab01ce2a0ab0abdbe1f3c0f09faa2a6e1bf2dc4a7e5a6b",
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-8f6c3a2e-1b7d-4c1e-9a3f-2b5d6e7f8a9b)",
    "HEAD is now at 7f3a9c2b1d4e5f60718293a4b5c6d7e8f9012345 fix",
    "Token is valid (permission: write). Your token has been saved to /root/.cache/huggingface/token",
    "Unexpected key(s) in state_dict: \"model.layers.31.self_attn.rotary_emb.inv_freq\"",
    "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    "segfault at 7f3a2b1c4d5e ip 00007f3a2b1c4d5e sp 00007ffd1234abcd error 4",
    "num_key_value_heads: 8, max_position_embeddings: 4096, eos_token_id: 2",
])
def test_issue13_item3_ordinary_log_text_is_not_mangled(text):
    assert redact(text) == text


def test_issue13_item3_baseline_and_corpus_logs_come_through_unchanged():
    """False positives: the real logs of baseline/ and corpus/ contain no secrets, so
    redaction must leave every line of them as it is."""
    changed = []
    for folder in ("baseline", "corpus"):
        for path in sorted((DATA.parent.parent / folder).glob("*.log")):
            for line in path.read_text(errors="replace").splitlines():
                if redact(line) != line:
                    changed.append((path.name, line))
    assert not changed


# generated secrets, in every form they are printed in ------------------------------------------

B64 = string.ascii_letters + string.digits + "+/"
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


def _text(alphabet, n, m=None):
    return st.text(alphabet=alphabet, min_size=n, max_size=m or n)


def _keylike(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def _b64url(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


@st.composite
def jwt(draw):
    sub = draw(_text(ALNUM, 8, 20))
    sig = draw(_text(URLSAFE, 43))
    return f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': sub, 'iat': 1700000000})}.{sig}"


@st.composite
def pem(draw):
    kind = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]))
    lines = draw(st.lists(_text(B64, 64), min_size=1, max_size=4))
    sep = draw(st.sampled_from(["\n", "\\n"]))
    return sep.join([f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"]), lines


TOKENS = {
    "aws_secret": _text(B64, 40).filter(lambda s: _keylike(s) and s.lower() != s and s.upper() != s),
    "azure_key": _text(B64, 86).map(lambda s: s + "=="),
    "slack_bot": st.builds(lambda a, b, c: f"xoxb-{a}-{b}-{c}", _text(string.digits, 11),
                           _text(string.digits, 12), _text(ALNUM, 24)),
    "github": st.one_of(_text(ALNUM, 36).map(lambda s: "ghp_" + s),
                        st.builds(lambda a, b: f"github_pat_{a}_{b}", _text(ALNUM, 22), _text(ALNUM, 59))),
    "huggingface": _text(ALNUM, 34).map(lambda s: "hf_" + s),
    "openai": st.one_of(_text(ALNUM, 48).map(lambda s: "sk-" + s),
                        _text(URLSAFE, 100).map(lambda s: "sk-proj-" + s)),
    "anthropic": _text(URLSAFE, 93).map(lambda s: "sk-ant-api03-" + s),
    "jwt": jwt(),
    "generic": _text(URLSAFE, 20, 64).filter(_keylike),
}
NAMES = ["api_key", "HF_TOKEN", "db_password", "client_secret", "AccountKey", "SecretAccessKey",
         "access_token", "WANDB_API_KEY", "private_key_id", "auth_token", "OPENAI_API_KEY",
         "aws_secret_access_key", "SharedAccessKey", "password"]
FORMS = ["{n}={v}", "{n}: {v}", '"{n}": "{v}"', "{n} = '{v}'", "  {n}: \"{v}\"", "--{n}={v}",
         "export {n}={v};"]
PROSE = ["W&B API key is configured. {v}", "using token {v}", "secret: {v}", "the password is {v}",
         "Your API key: {v}", "token={v}&user=x", "key {v} loaded"]
NOISE = st.sampled_from(["", "2026-01-31 12:00:01 INFO ", "[rank0]: ", "  File \"train.py\", line 3\n",
                         "Epoch 3/10 loss=0.213 lr=3e-4 | ", "[W socket.cpp:464] "])
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(kind=st.sampled_from(sorted(TOKENS)), data=st.data(), before=NOISE, after=NOISE)
def test_issue13_item3_property_named_and_prose_forms(kind, data, before, after):
    value = data.draw(TOKENS[kind])
    form = data.draw(st.sampled_from([f.replace("{n}", data.draw(st.sampled_from(NAMES))) for f in FORMS]
                                     + PROSE))
    text = before + form.format(v=value) + "\n" + after + "done\n"
    out = redact(text)
    assert not _survivors(value, out), (text, out)


@FAST
@given(kind=st.sampled_from(sorted(set(TOKENS) - {"generic", "aws_secret", "azure_key"})),
       data=st.data(), before=NOISE)
def test_issue13_item3_property_known_formats_bare(kind, data, before):
    """Formats that say what they are are masked with no name beside them."""
    value = data.draw(TOKENS[kind])
    out = redact(f"{before}{value} ok\n")
    assert not _survivors(value, out), out


@FAST
@given(key_id=_text(string.ascii_uppercase + string.digits, 16), secret=TOKENS["aws_secret"],
       sep=st.sampled_from([" ", "\t", ",", " / "]))
def test_issue13_item3_property_bare_aws_secret_after_its_key_id(key_id, secret, sep):
    out = redact(f"creds AKIA{key_id}{sep}{secret}\n")
    assert key_id not in out and not _survivors(secret, out)


@FAST
@given(block=pem(), before=NOISE, name=st.sampled_from(["", '"private_key": "', "key: "]))
def test_issue13_item3_property_pem_blocks(block, before, name):
    text, lines = block
    out = redact(f"{before}{name}{text}\nnext line\n")
    assert not any(_survivors(line, out) for line in lines), out


@FAST
@given(scheme=st.sampled_from(["http", "https", "postgresql", "redis", "ftp", "git+https", "s3"]),
       upper=st.lists(st.booleans(), min_size=10, max_size=10),
       user=_text(ALNUM + "._-", 1, 12),
       password=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=6,
                        max_size=40),
       path=st.sampled_from(["", "/", "/org/repo.git", ":5432/db", "/x?y=1"]))
def test_issue13_item3_property_url_credentials_any_case_any_characters(scheme, upper, user,
                                                                          password, path):
    scheme = "".join(c.upper() if u else c for c, u in zip(scheme, upper * 2))
    host = "db.example.com"
    assume(password not in f"{scheme}://{user}:@{host}{path}")
    out = redact(f"connecting to {scheme}://{user}:{password}@{host}{path} now\n")
    assert password not in out, out
    assert "db.example.com" in out


@FAST
@given(key=_text(B64, 86))
def test_issue13_item3_property_azure_connection_string(key):
    out = redact(f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={key}==;"
                 f"EndpointSuffix=core.windows.net\n")
    assert not _survivors(key, out) and "AccountName=acct" in out


# linear time: structure and operation counts, not the clock -----------------------------------

def test_issue13_item5_every_redaction_pattern_is_re2():
    """RE2 runs in time linear in the input (it has no backtracking); Python's re does not."""
    patterns = [p for _g, p, _r in redact_mod._RULES] + [redact_mod._KEYWORD, redact_mod._CANDIDATE]
    assert patterns and all(isinstance(p, re2._Regexp) for p in patterns)


class _Counting:
    def __init__(self, pattern, calls):
        self.pattern, self.calls = pattern, calls

    def __getattr__(self, name):
        attr = getattr(self.pattern, name)

        def counted(*args, **kw):
            self.calls.append(name)
            return attr(*args, **kw)
        return counted


@pytest.mark.parametrize("unit", ["a.", "key ", "x=1 ", "https://u:p", "AKIA" + "A" * 16 + " "])
def test_issue13_item5_regex_calls_do_not_grow_with_the_input(monkeypatch, unit):
    """The probe's 'a.'*128000 + ' x://' (and other repetitive inputs): a fixed number of
    passes of the linear engine whatever the length, so the total work is linear."""
    counts = []
    for n in (1000, 128000):
        calls: list[str] = []
        monkeypatch.setattr(redact_mod, "_RULES",
                            [(g, _Counting(p, calls), r) for g, p, r in redact_mod._RULES.copy()])
        monkeypatch.setattr(redact_mod, "_KEYWORD", _Counting(redact_mod._KEYWORD, calls))
        monkeypatch.setattr(redact_mod, "_CANDIDATE", _Counting(redact_mod._CANDIDATE, calls))
        redact(unit * n + " x://")
        counts.append(len(calls))
        monkeypatch.undo()
    assert counts[0] == counts[1] and counts[1] <= len(redact_mod._RULES) + 2


def test_issue13_item3_diagnose_json_is_redacted(tmp_path, capsys, monkeypatch):
    """The CLI's JSON contract: evidence lines, facts and everything else from the log."""
    from faultlens.cli import main

    monkeypatch.setenv("FAULTLENS_CATALOGUE", str(DATA / "catalogue"))
    probe = (PROBE / "leaking-secrets.log").read_text()
    log = tmp_path / "x.log"
    log.write_text(probe + "".join(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB {line}\n"
                                   for line in probe.splitlines()))
    main(["diagnose", "--json", str(log)])
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["diagnoses"] and report["diagnoses"][0]["evidence"]
    for secret in (PROBE / "leaking-secrets.secrets").read_text().split():
        assert not _survivors(secret, out), secret


def test_issue13_item1_search_and_highlight_never_run_backtracking_re(monkeypatch, real_scanner):
    """The web search matched catalogue regexes with Python's re against the query
    ('backward_cuda'*153 held the server for 30 s); it and the evidence highlight use RE2."""
    import re

    from faultlens.refs import search
    from faultlens.web.evidence import highlight

    def refuse(*_a, **_k):
        raise AssertionError("backtracking re used on request input")

    monkeypatch.setattr(re, "search", refuse)
    monkeypatch.setattr(re, "match", refuse)
    refs = real_scanner.catalogue.references
    assert search(refs, "backward_cuda" * 153) is not None
    assert search(refs, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert highlight("x" * 5000, r"(x+x+)+y") == (("x" * 5000, True),)  # no match: whole line
    assert highlight("pre OOM post", "OOM") == (("pre ", False), ("OOM", True), (" post", False))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["key", "Key", "api key", "api_key", "APIKEY", "token", "tokens",
                                 "secret", "password", "passwd", "auth", "credentials", "monkey",
                                 "KeyError", "_key", "key_", "-key-", "x", " ", "\n", ".", ":", "=",
                                 "İ", "ß"]), max_size=15))
def test_issue13_item5_keyword_scan_agrees_with_the_re2_pattern(words):
    text = "".join(words)
    assert redact_mod._keyword_ends(text) == [m.end() for m in redact_mod._KEYWORD.finditer(text)]
