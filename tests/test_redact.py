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
