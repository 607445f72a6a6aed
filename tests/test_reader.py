import bz2
import gzip
import lzma
import subprocess
import sys
import zlib

import pytest
import zstandard
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from faultlens.errors import InputError
from faultlens.logs import reader
from faultlens.logs.reader import ReadStats, ZstdFrames, iter_blocks, iter_chunks


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


# --- issue 13 ------------------------------------------------------------------------------------


def test_issue13_item2_multi_member_gzip_is_linear(monkeypatch):
    """gzip.compress(b'x\\n')*400000 took 88 s: every member's end copied the rest of the input.
    Now what zlib is handed (and so can copy) is bounded by a constant times the input."""
    handed = []
    make = zlib.decompressobj

    class Counting:
        def __init__(self, **kw):
            self._d = make(**kw)

        def decompress(self, data, max_length=0):
            handed.append(len(data))
            return self._d.decompress(data, max_length)

        def __getattr__(self, name):
            return getattr(self._d, name)

    monkeypatch.setattr(reader.zlib, "decompressobj", lambda **kw: Counting(**kw))
    for members in (1000, 20000):
        handed.clear()
        data = gzip.compress(b"x\n") * members
        stats = ReadStats(name="x")
        out = b"".join(bytes(b[s:e]) for b, s, e, _n in iter_blocks(data, stats))
        assert out == b"x\n" * members and stats.lines == members
        assert sum(handed) <= 4 * len(data)


def test_issue13_item2_multi_member_gzip_with_padding_and_large_members():
    big = b"".join(b"line %d\n" % i for i in range(300000))
    data = gzip.compress(big) + b"\0\0\0" + gzip.compress(b"tail\n")
    chunks, stats = read_all(data)
    assert b"".join(c for c, _ in chunks) == big + b"tail\n"


# the probe's inputs: `printf '\x1f\x8b\x08garbage\n'` and the same idea for xz, bzip2, zstd and a
# zstd frame header asking for a 2 GiB window (zstd --long=31)
CORRUPT_HEADERS = {p.stem: p.read_bytes() for p in (DATA / "issue13" / "corrupt-headers").glob("*.bin")}


def test_issue13_item9_every_probe_input_is_here():
    assert sorted(CORRUPT_HEADERS) == ["bzip2", "gzip", "xz", "zstd", "zstd-long31"]


@pytest.mark.parametrize("kind", sorted(CORRUPT_HEADERS))
def test_issue13_item9_corrupt_compressed_headers_are_input_errors(tmp_path, kind):
    path = tmp_path / "x.log"
    path.write_bytes(CORRUPT_HEADERS[kind])
    with pytest.raises(InputError):
        read_all(path)


@pytest.mark.parametrize("kind", sorted(CORRUPT_HEADERS))
def test_issue13_item9_cli_prints_one_line_and_exits_3(tmp_path, kind):
    path = tmp_path / "x.log"
    path.write_bytes(CORRUPT_HEADERS[kind])
    proc = subprocess.run([sys.executable, "-m", "faultlens", "diagnose", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[0].startswith(f"faultlens: error: {path}: ")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.99])
def test_issue13_item9_truncated_zstd_is_reported(tmp_path, cut):
    data = zstandard.ZstdCompressor(write_checksum=True).compress(
        b"".join(b"line %d of the log\n" % i for i in range(50000)))
    path = tmp_path / "x.log.zst"
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(InputError, match="truncated"):
        read_all(path)


def test_issue13_item9_complete_zstd_streams_still_read():
    one = zstandard.ZstdCompressor(write_checksum=True).compress(LOG + b"\n")
    two = zstandard.ZstdCompressor(level=19).compress(b"more\n")
    skippable = b"\x50\x2a\x4d\x18" + (5).to_bytes(4, "little") + b"12345"
    chunks, _ = read_all(one + skippable + two)
    assert b"".join(c for c, _ in chunks) == LOG + b"\nmore\n"


def test_issue13_zstd_frames_follow_the_headers():
    data = zstandard.ZstdCompressor().compress(b"abc\n" * 100000)
    frames = ZstdFrames()
    for i in range(0, len(data), 7):
        frames.feed(data[i:i + 7])
    frames.check_complete()
    assert frames.frames == 1
    cut = ZstdFrames()
    cut.feed(data[:-1])
    with pytest.raises(EOFError):
        cut.check_complete()


def test_issue13_item6_a_long_line_that_ends_inside_a_block_is_split():
    """A 4 MiB line ending inside one 8 MiB block was handed over whole; the README promises
    lines over 1 MiB are split."""
    data = b"head\n" + b"a" * (4 << 20) + b"\nb\n" + b"c" * ((1 << 20) + 1) + b"\nend\n"
    stats = ReadStats(name="x")
    longest, numbers = 0, []
    for buf, start, end, line_no in iter_blocks(data, stats):
        piece = bytes(buf[start:end])
        longest = max(longest, *(len(x) for x in piece.split(b"\n")))
        numbers.append(line_no)
    assert longest <= 1 << 20
    assert stats.lines == 5 and stats.split_lines == 4  # three cuts in the 4 MiB line, one in the other
    assert "split" in stats.warnings[-1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=30))
def test_issue13_item6_split_keeps_every_byte_and_line_number(lengths):
    _assert_lossless_split(lengths, chunk_size=1024)


def _assert_lossless_split(lengths, chunk_size: int, max_line: int = 700) -> None:
    """Blocks of lines of these lengths give back every byte, no line over `max_line`, and each
    block's first line number."""
    data = b"".join(b"x" * n + b"\n" for n in lengths)
    out, first_numbers = [], []
    stats = ReadStats(name="x")
    for buf, start, end, line_no in iter_blocks(data, stats, chunk_size=chunk_size, max_line=max_line):
        out.append(bytes(buf[start:end]))
        first_numbers.append(line_no)
    assert b"".join(out) == data and stats.lines == len(lengths)
    assert all(len(x) <= max_line for piece in out for x in piece.split(b"\n"))
    line = 1
    for piece, number in zip(out, first_numbers):
        assert number == line
        line += piece.count(b"\n")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=30), st.integers(1, 64))
def test_reads_that_start_small_and_grow_keep_every_byte_and_line_number(lengths, first):
    """Reads start at FIRST_CHUNK bytes and double up to chunk_size (a paste does not zero a
    buffer of megabytes): while the buffer grows, carried-over bytes and line numbers survive."""
    from faultlens.logs import reader

    old = reader.FIRST_CHUNK
    reader.FIRST_CHUNK = first
    try:
        _assert_lossless_split(lengths, chunk_size=4096)
    finally:
        reader.FIRST_CHUNK = old
