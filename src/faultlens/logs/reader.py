"""Read a log as line-aligned byte chunks, with memory flat in the log size.

Compression (gzip, bzip2, xz, zstd) is detected by magic bytes, not by file name. UTF-16 logs
(PowerShell's `>` redirect) are transcoded to UTF-8. Lines longer than MAX_LINE are split so a
single 200 MB line cannot exhaust memory.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import InputError

CHUNK_SIZE = 8 << 20
MAX_LINE = 1 << 20
BINARY_PROBE = 64 << 10
BZ2_BLOCK = b"\x31\x41\x59\x26\x53\x59"  # a bzip2 block header follows "BZh<level>"

MAGIC = (
    (b"\x1f\x8b\x08", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


@dataclass
class ReadStats:
    """Filled in while a source is read."""

    name: str
    compression: str | None = None
    bytes: int = 0
    lines: int = 0
    split_lines: int = 0
    warnings: list[str] = field(default_factory=list)


class _Transcoder(io.RawIOBase):
    """Wrap a UTF-16 byte stream as a UTF-8 byte stream."""

    def __init__(self, raw, encoding: str):
        self._reader = codecs.getreader(encoding)(raw, errors="replace")
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        while len(self._pending) < len(buf):
            text = self._reader.read(1 << 20)
            if not text:
                break
            self._pending += text.encode("utf-8")
        n = min(len(buf), len(self._pending))
        buf[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


def _open_path(path):
    if isinstance(path, (bytes, bytearray, memoryview)):
        return io.BufferedReader(io.BytesIO(bytes(path)))
    if path == "-":
        return sys.stdin.buffer
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file", tip="check the path; use '-' to read standard input")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory",
                         tip=f"pass the log files inside it, e.g. {path.rstrip('/')}/*.log")
    try:
        return open(path, "rb")
    except PermissionError:
        raise InputError(f"{path}: permission denied", tip="check the file's permissions") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc.strerror}") from None


def _peek(stream, n: int) -> bytes:
    if hasattr(stream, "peek"):
        return stream.peek(n)[:n]
    return b""


def open_log(path: str, stats: ReadStats):
    """Open `path` ('-' for stdin) and return a binary stream of the decompressed, UTF-8 log."""
    raw = _open_path(path)
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    head = _peek(raw, 10)
    stream = raw
    for magic, kind in MAGIC:
        if head.startswith(magic) and (kind != "bzip2" or head[3:4].isdigit() and head[4:10] == BZ2_BLOCK):
            stats.compression = kind
            stream = _decompressor(kind, raw)
            break
    probe = _peek(stream, 64) if hasattr(stream, "peek") else b""
    # a BOM alone is not enough: UTF-16 text of ASCII characters is full of NUL bytes
    if probe[:2] in (b"\xff\xfe", b"\xfe\xff") and b"\x00" in probe[2:]:
        stream = io.BufferedReader(_Transcoder(stream, "utf-16"))
        stats.warnings.append(f"{path}: UTF-16 text, read as UTF-8")
    return stream


def _decompressor(kind: str, raw):
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw)
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    import zstandard

    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))


def _readinto(stream, view: memoryview, stats: ReadStats) -> int:
    try:
        return stream.readinto(view) or 0
    except (EOFError, OSError, lzma.LZMAError, ValueError) as exc:
        msg = str(exc) or type(exc).__name__
        raise InputError(f"{stats.name}: {stats.compression or 'file'} stream is corrupt or truncated "
                         f"after {stats.bytes} bytes ({msg})",
                         tip="recompress it, or pass the uncompressed part "
                             "(e.g. 'zcat -f FILE | faultlens diagnose -')") from None
    except Exception as exc:  # zstandard.ZstdError and other codec errors
        raise InputError(f"{stats.name}: cannot decompress: {exc}") from None


def iter_blocks(path, stats: ReadStats, chunk_size: int = CHUNK_SIZE,
                max_line: int = MAX_LINE) -> Iterator[tuple[bytearray, int, int, int]]:
    """Yield (buffer, start, end, number of the first line) with buffer[start:end] line-aligned.

    The buffer is reused: a consumer must copy what it keeps before asking for the next block.
    No bytes are copied on the way (one `readinto` per block), which is what keeps the scan at
    memory speed. A line longer than `max_line` is split into pieces that keep its line number.
    """
    stream = open_log(path, stats)
    buf = bytearray(chunk_size + max_line)
    view = memoryview(buf)
    have = 0
    line_no = 1
    last_byte = 10  # b"\n"
    first = True
    try:
        while True:
            n = _readinto(stream, view[have:have + chunk_size], stats)
            if first:
                first = False
                if not n:
                    raise InputError("standard input is empty" if path == "-"
                                     else f"{stats.name}: is empty",
                                     tip="pass the log of the failed run")
                if buf.find(b"\x00", 0, min(n, BINARY_PROBE)) >= 0:
                    raise InputError(f"{stats.name}: looks like a binary file, not a text log",
                                     tip="pass the text log (compressed logs are fine)")
            if not n:
                break
            stats.bytes += n
            total = have + n
            start = 0
            while start < total:
                nl = buf.rfind(b"\n", start, total)
                if nl >= 0:
                    cut = nl + 1
                elif total - start >= max_line:
                    cut = start + max_line
                    stats.split_lines += 1
                else:
                    break
                yield buf, start, cut, line_no
                line_no += buf.count(b"\n", start, cut)
                last_byte = buf[cut - 1]
                start = cut
            have = total - start
            if have and start:
                buf[:have] = bytes(view[start:total])
        if have:
            yield buf, 0, have, line_no
            last_byte = buf[have - 1]
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    stats.lines = line_no - 1 + (0 if last_byte == 10 else 1)
    if stats.split_lines:
        stats.warnings.append(f"{stats.name}: lines longer than {max_line >> 20} MiB were split "
                              f"({stats.split_lines} pieces)")


def iter_chunks(path, stats: ReadStats, chunk_size: int = CHUNK_SIZE,
                max_line: int = MAX_LINE) -> Iterator[tuple[bytes, int]]:
    """Like `iter_blocks`, but each chunk is an independent bytes object (a copy)."""
    for buf, start, end, line_no in iter_blocks(path, stats, chunk_size, max_line):
        yield bytes(buf[start:end]), line_no
