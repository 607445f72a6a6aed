"""A log out of an HTTP request: a raw body (text or compressed) or a form (pasted text or a
file), size-checked before and after each layer of decompression, decompressed off the event
loop."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import PurePosixPath

from fastapi import Request
from starlette.datastructures import UploadFile

from ..errors import InputError
from ..logs.reader import ReadStats, compression_of, open_decompressor, read_guarded
from .errors import ApiError
from .heavy import HeavyWork
from .limits import SLACK_BYTES, too_large

RAW_TYPES = ("", "text/plain", "application/octet-stream", "application/gzip", "application/x-gzip")
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


@dataclass(frozen=True)
class Upload:
    name: str
    """The file name shown in the report: the uploaded file's base name, or '<text>'."""
    fields: dict[str, str]
    """The form's other fields (host, job, save, token); empty for a raw body."""
    data: bytes
    """The log, decompressed."""
    compression: str | None = None
    """The outer compression ('gzip', 'bzip2', 'xz', 'zstd') when the upload was compressed."""


async def read_upload(request: Request, max_bytes: int, heavy: HeavyWork) -> Upload:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in FORM_TYPES:
        return await _from_form(request, max_bytes, heavy)
    if kind in RAW_TYPES:
        body = await request.body()
        return Upload("<text>", {}, *await heavy.run(decompressed, body, "<text>", max_bytes))
    raise ApiError(415, "unsupported_media_type",
                   f"cannot read a log from {kind}: send text/plain, a gzip body, or a form "
                   "with 'file' or 'text'")


async def _from_form(request: Request, max_bytes: int, heavy: HeavyWork) -> Upload:
    form = await request.form(max_files=1, max_fields=16, max_part_size=max_bytes + SLACK_BYTES)
    try:
        file, text = form.get("file"), form.get("text")
        if isinstance(file, UploadFile) and file.filename:
            name = PurePosixPath(file.filename.replace("\\", "/")).name[:200] or "<upload>"
            data = await file.read(max_bytes + 1)
        elif isinstance(text, str) and text.strip():
            name, data = "<text>", text.replace("\r\n", "\n").encode("utf-8")
        else:
            raise ApiError(422, "empty_log", "no log given: paste it, or upload a file")
        fields = {k: v for k, v in form.items() if isinstance(v, str) and k != "text"}
    finally:
        await form.close()
    return Upload(name, fields, *await heavy.run(decompressed, data, name, max_bytes))


MAX_LAYERS = 3
"""Compressed streams inside compressed streams (a gzip of a zstd stream) read at most this deep."""


def decompressed(data: bytes, name: str, max_bytes: int) -> tuple[bytes, str | None]:
    """(`data` decompressed, the outer compression). Every layer (gzip, bzip2, xz, zstd, one
    inside another) is counted against `max_bytes` as it is decompressed, so neither a bomb nor
    a compressed stream inside a gzip gets past the limit; the engine is handed plain text.
    CPU-bound: call it in a worker thread."""
    if len(data) > max_bytes:
        raise too_large(name, len(data), max_bytes)
    outer = None
    for _layer in range(MAX_LAYERS + 1):
        kind = compression_of(data[:10])
        if kind is None:
            break
        if _layer == MAX_LAYERS:
            raise ApiError(415, "unsupported_compression",
                           f"{name}: compressed more than {MAX_LAYERS} times over")
        outer = outer or kind
        data = _decompress(kind, data, name, max_bytes)
    if not data.strip():
        raise ApiError(422, "empty_log", f"{name}: the log is empty")
    return data, outer


def _decompress(kind: str, data: bytes, name: str, max_bytes: int) -> bytes:
    """One layer, streamed, stopping one byte past `max_bytes`."""
    stats = ReadStats(name)
    stats.compression = kind
    try:
        stream = open_decompressor(kind, io.BytesIO(data), stats)
        out = bytearray()
        while len(out) <= max_bytes:
            piece = read_guarded(stream, min(1 << 20, max_bytes + 1 - len(out)), stats)
            if not piece:
                break
            out += piece
    except InputError as exc:
        raise ApiError(422, "unreadable_log", str(exc)) from None
    if len(out) > max_bytes:
        raise too_large(f"{name} after decompression", None, max_bytes)
    return bytes(out)
