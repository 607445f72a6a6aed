"""Read a log as line-aligned byte chunks, with memory flat in the log size.

Compression (gzip, bzip2, xz, zstd) is detected by magic bytes, not by file name. UTF-16 logs
(PowerShell's `>` redirect) are transcoded to UTF-8. Lines longer than MAX_LINE are split so a
single 200 MB line cannot exhaust memory.
"""

from __future__ import annotations

import bz2
import codecs
import io
import lzma
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import InputError

CHUNK_SIZE = 8 << 20
MAX_LINE = 1 << 20
BINARY_PROBE = 64 << 10
FIRST_CHUNK = 64 << 10
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


def compression_of(head: bytes) -> str | None:
    """The compression that `head` (the first 10 bytes or more) starts with, by magic bytes."""
    for magic, kind in MAGIC:
        if head.startswith(magic) and (kind != "bzip2" or head[3:4].isdigit() and head[4:10] == BZ2_BLOCK):
            return kind
    return None


def open_log(path: str, stats: ReadStats):
    """Open `path` ('-' for stdin) and return a binary stream of the decompressed, UTF-8 log."""
    raw = _open_path(path)
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    stream = raw
    kind = compression_of(_peek(raw, 10))
    if kind:
        stats.compression = kind
        stream = _decompressor(kind, raw)
    # peeking decompresses the first block: a corrupt header fails here, as an InputError
    probe = _guarded(stats, _peek, stream, 64) if hasattr(stream, "peek") else b""
    # a BOM alone is not enough: UTF-16 text of ASCII characters is full of NUL bytes
    if probe[:2] in (b"\xff\xfe", b"\xfe\xff") and b"\x00" in probe[2:]:
        stream = io.BufferedReader(_Transcoder(stream, "utf-16"))
        stats.warnings.append(f"{path}: UTF-16 text, read as UTF-8")
    return stream


def _decompressor(kind: str, raw):
    """A streaming decompressor over `raw`: memory bounded whatever the ratio, every member or
    frame read in turn (linear in the input), truncation reported (EOFError)."""
    if kind == "gzip":
        return io.BufferedReader(GzipMembers(raw))
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    import zstandard

    frames = ZstdFrames()
    reader = zstandard.ZstdDecompressor().stream_reader(_Tee(raw, frames.feed), read_across_frames=True)
    return io.BufferedReader(_Ends(reader, frames.check_complete))


class GzipMembers(io.RawIOBase):
    """Every gzip member of `raw` in turn, as `zcat` reads them, in time linear in the input
    however many members there are (gzip.GzipFile copies its read buffer at each member's end:
    400,000 two-byte members took minutes). The input is handed to zlib in pieces that start
    small at each member and double while it lasts, so what zlib copies at a member's end
    (its unused input) is at most about the member's own size."""

    FIRST_PIECE = 64
    MAX_PIECE = 1 << 20

    def __init__(self, raw):
        self._raw = raw
        self._in = b""
        self._off = 0
        self._member = None
        self._piece = self.FIRST_PIECE
        self._members = 0

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        """More input when all of it is used; False at the end of the input."""
        if self._off < len(self._in):
            return True
        self._in, self._off = self._raw.read(self.MAX_PIECE) or b"", 0
        return bool(self._in)

    def readinto(self, buf) -> int:
        """Fill `buf` as far as the input goes (one call, not one per member)."""
        want, pos = len(buf), 0
        while pos < want:
            if self._member is None:
                while self._fill() and self._in[self._off] == 0:  # zero padding between members
                    self._off += 1
                if not self._fill():
                    if not self._members:
                        raise EOFError("no gzip member")
                    break
                self._member = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
                self._piece = self.FIRST_PIECE
            if not self._fill():
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            piece = memoryview(self._in)[self._off:self._off + self._piece]
            try:
                out = self._member.decompress(piece, want - pos)
            except zlib.error as exc:
                what = "data after the last gzip member is not gzip" if self._members else "corrupt gzip data"
                raise OSError(f"{what} ({exc})") from None
            used = len(piece) - len(self._member.unconsumed_tail) - len(self._member.unused_data)
            self._off += used
            if self._member.eof:
                self._member = None
                self._members += 1
            elif used == len(piece) and self._piece < self.MAX_PIECE:
                self._piece *= 2
            buf[pos:pos + len(out)] = out
            pos += len(out)
        return pos


class _Tee(io.RawIOBase):
    """A raw stream that shows every byte read from it to `seen`."""

    def __init__(self, raw, seen):
        self._raw, self._seen = raw, seen

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = self._raw.readinto(buf) or 0
        if n:
            self._seen(bytes(memoryview(buf)[:n]))
        return n


class _Ends(io.RawIOBase):
    """`inner`, with `at_end()` called when it reports the end (and may raise)."""

    def __init__(self, inner, at_end):
        self._inner, self._at_end = inner, at_end

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = self._inner.readinto(buf)
        if not n:
            self._at_end()
        return n or 0


ZSTD_MAGIC = 0xFD2FB528


class ZstdFrames:
    """Follows the frame and block headers of a zstd stream as it is read (without
    decompressing), to tell a complete stream from one cut short, which python-zstandard's
    stream reader ends silently."""

    def __init__(self):
        self._state, self._need, self._skip = "magic", 4, 0
        self._pending = bytearray()
        self._checksum = False
        self.frames = 0

    def feed(self, data: bytes) -> None:
        pos = 0
        while pos < len(data) and self._state != "garbage":
            if self._skip:
                n = min(self._skip, len(data) - pos)
                self._skip -= n
                pos += n
                continue
            take = min(self._need - len(self._pending), len(data) - pos)
            self._pending += data[pos:pos + take]
            pos += take
            if len(self._pending) == self._need:
                header = bytes(self._pending)
                self._pending.clear()
                self._step(header)

    def _step(self, h: bytes) -> None:
        state = self._state
        if state == "magic":
            magic = int.from_bytes(h, "little")
            if magic == ZSTD_MAGIC:
                self._state, self._need = "descriptor", 1
            elif magic & 0xFFFFFFF0 == 0x184D2A50:
                self._state, self._need = "skippable", 4
            else:  # not a frame: the decompressor says what is wrong
                self._state = "garbage"
        elif state == "skippable":
            self._skip = int.from_bytes(h, "little")
            self._state, self._need = "magic", 4
        elif state == "descriptor":
            d = h[0]
            single, did, fcs = d >> 5 & 1, d & 3, d >> 6
            self._checksum = bool(d >> 2 & 1)
            rest = (0 if single else 1) + (0, 1, 2, 4)[did] + ((1 if single else 0), 2, 4, 8)[fcs]
            self._state, self._need = "rest", rest
            if rest == 0:
                self._state, self._need = "block", 3
        elif state == "rest":
            self._state, self._need = "block", 3
        elif state == "block":
            b = int.from_bytes(h, "little")
            last, kind, size = b & 1, b >> 1 & 3, b >> 3
            self._skip = 1 if kind == 1 else size
            if not last:
                self._need = 3
            elif self._checksum:
                self._state, self._need = "checksum", 4
            else:
                self._end_frame()
        elif state == "checksum":
            self._end_frame()

    def _end_frame(self) -> None:
        self.frames += 1
        self._state, self._need = "magic", 4

    def check_complete(self) -> None:
        if self._state != "magic" or self._pending or self._skip:
            raise EOFError("the zstd stream ends inside a frame")


def _guarded(stats: ReadStats, fn, *args):
    """fn(*args), with a decompressor's or decoder's error turned into one InputError line."""
    try:
        return fn(*args)
    except (EOFError, OSError, lzma.LZMAError, ValueError) as exc:
        msg = str(exc) or type(exc).__name__
        raise InputError(f"{stats.name}: {stats.compression or 'file'} stream is corrupt or truncated "
                         f"after {stats.bytes} bytes ({msg})",
                         tip="recompress it, or pass the uncompressed part "
                             "(e.g. 'zcat -f FILE | faultlens diagnose -')") from None
    except Exception as exc:  # zstandard.ZstdError and other codec errors
        raise InputError(f"{stats.name}: cannot decompress: {exc}") from None


def _readinto(stream, view: memoryview, stats: ReadStats) -> int:
    return _guarded(stats, stream.readinto, view) or 0


def open_decompressor(kind: str, raw, stats: ReadStats):
    """A streaming decompressor of `kind` over the binary stream `raw`; errors are InputError."""
    return _guarded(stats, _decompressor, kind, raw)


def read_guarded(stream, n: int, stats: ReadStats) -> bytes:
    """Up to `n` bytes from a decompressor; a corrupt or truncated stream is an InputError."""
    return _guarded(stats, stream.read, n) or b""


def first_overlong(buf, start: int, end: int, max_line: int) -> int:
    """Where buf[start:end] must be cut so that no line in it is longer than `max_line`
    (a line starts at `start`), or -1. Each step jumps about `max_line` bytes."""
    pos = start
    while end - pos > max_line:
        nl = buf.rfind(b"\n", pos, pos + max_line + 1)
        if nl < 0:
            return pos + max_line
        pos = nl + 1
    return -1


def iter_blocks(path, stats: ReadStats, chunk_size: int = CHUNK_SIZE,
                max_line: int = MAX_LINE) -> Iterator[tuple[bytearray, int, int, int]]:
    """Yield (buffer, start, end, number of the first line) with buffer[start:end] line-aligned.

    The buffer is reused: a consumer must copy what it keeps before asking for the next block.
    No bytes are copied on the way (one `readinto` per block), which is what keeps the scan at
    memory speed. A line longer than `max_line` is split into pieces that keep its line number.
    """
    stream = open_log(path, stats)
    # reads start small and double up to chunk_size: a pasted log does not pay for zeroing a
    # buffer of megabytes, a big one reaches full-size blocks after a few reads
    chunk = min(chunk_size, FIRST_CHUNK)
    buf = bytearray(chunk)
    view = memoryview(buf)
    have = 0
    line_no = 1
    last_byte = 10  # b"\n"
    first = True
    try:
        while True:
            if len(buf) < have + chunk:  # a new buffer: the consumer copied what it kept
                grown = bytearray(have + chunk)
                grown[:have] = view[:have]
                buf, view = grown, memoryview(grown)
            n = _readinto(stream, view[have:have + chunk], stats)
            chunk = min(chunk_size, chunk * 2)
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
                long_at = first_overlong(buf, start, cut, max_line)
                if long_at >= 0:  # a long line that ends inside the block is split too
                    cut = long_at
                    stats.split_lines += 1
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
