import bz2
import gzip
import lzma

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from faultlens.errors import InputError
from faultlens.logs.reader import ReadStats, iter_chunks


def read_all(path, **kw):
    stats = ReadStats(name=str(path))
    chunks = list(iter_chunks(str(path) if not isinstance(path, bytes) else path, stats, **kw))
    return chunks, stats


LOG = b"line one\nline two\r\nline three without newline"


@pytest.mark.parametrize("kind,compress", [
    ("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress),
    ("zstd", lambda b: zstandard.ZstdCompressor().compress(b)),
])
def test_compression_detected_by_magic_not_name(tmp_path, kind, compress):
    path = tmp_path / "job.txt"  # no telling extension
    path.write_bytes(compress(LOG))
    chunks, stats = read_all(path)
    assert b"".join(c for c, _ in chunks) == LOG
    assert stats.compression == kind
    assert stats.lines == 3


def test_plain_file_line_count(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"a\nb\nc\n")
    chunks, stats = read_all(path)
    assert stats.lines == 3 and stats.compression is None


def test_truncated_gzip_is_an_input_error(tmp_path):
    data = gzip.compress(LOG * 1000)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="corrupt or truncated"):
        read_all(path)


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "binary"),
])
def test_bad_content(tmp_path, content, message):
    path = tmp_path / "x.log"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_all(path)


def test_missing_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_all(tmp_path / "nope.log")
    with pytest.raises(InputError, match="is a directory"):
        read_all(tmp_path)


def test_unreadable_file(tmp_path, monkeypatch):
    import builtins
    path = tmp_path / "secret.log"
    path.write_text("x\n")
    real_open = builtins.open

    def deny(file, *a, **kw):  # root ignores mode bits, so simulate what a user sees
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *a, **kw)

    monkeypatch.setattr(builtins, "open", deny)
    with pytest.raises(InputError, match="permission denied"):
        read_all(path)


def test_utf16_log_is_transcoded(tmp_path):
    path = tmp_path / "win.log"
    path.write_bytes("RuntimeError: boom\r\nok\r\n".encode("utf-16"))
    chunks, stats = read_all(path)
    assert b"".join(c for c, _ in chunks).startswith(b"RuntimeError: boom")


def test_long_line_is_split_and_keeps_line_numbers():
    data = b"first\n" + b"x" * 5000 + b"\nlast\n"
    chunks, stats = read_all(data, chunk_size=256, max_line=1000)
    assert b"".join(c for c, _ in chunks) == data
    assert stats.split_lines > 0
    assert stats.lines == 3
    last_chunk_first_line = [n for c, n in chunks if b"last" in c][0]
    assert last_chunk_first_line + chunks[[b"last" in c for c, _ in chunks].index(True)][0][
        :chunks[[b"last" in c for c, _ in chunks].index(True)][0].index(b"last")].count(b"\n") == 3


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.binary(min_size=0, max_size=120).map(lambda b: b.replace(b"\n", b"").replace(b"\x00", b"")),
                      min_size=1, max_size=60),
       trailing=st.booleans(), chunk=st.integers(min_value=1, max_value=300))
def test_chunks_are_line_aligned_and_lossless(lines, trailing, chunk):
    data = b"\n".join(lines) + (b"\n" if trailing else b"")
    if not data or data.startswith((b"\x1f\x8b\x08", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")):
        return  # empty, or a compressed stream's magic: not plain text
    chunks, stats = read_all(data, chunk_size=chunk, max_line=10_000)
    assert b"".join(c for c, _ in chunks) == data
    for c, _ in chunks[:-1]:
        assert c.endswith(b"\n")
    expected_line = 1
    for c, first in chunks:
        assert first == expected_line
        expected_line += c.count(b"\n")
    assert stats.lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
