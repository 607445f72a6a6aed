"""A log out of an HTTP request: a raw body (text or gzip) or a form (pasted text or a file),
size-checked before and after decompression."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import PurePosixPath

from fastapi import Request
from starlette.datastructures import UploadFile

from ..logs.reader import BZ2_BLOCK, MAGIC
from .errors import ApiError
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
    """'gzip' when the upload was compressed."""


async def read_upload(request: Request, max_bytes: int) -> Upload:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in FORM_TYPES:
        return await _from_form(request, max_bytes)
    if kind in RAW_TYPES:
        return Upload("<text>", {}, *decompressed(await request.body(), "<text>", max_bytes))
    raise ApiError(415, "unsupported_media_type",
                   f"cannot read a log from {kind}: send text/plain, a gzip body, or a form "
                   "with 'file' or 'text'")


async def _from_form(request: Request, max_bytes: int) -> Upload:
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
    return Upload(name, fields, *decompressed(data, name, max_bytes))


def compression_of(data: bytes) -> str | None:
    """The compression the engine would detect (logs.reader's magic bytes)."""
    for magic, kind in MAGIC:
        if data.startswith(magic) and (kind != "bzip2" or data[3:4].isdigit() and data[4:10] == BZ2_BLOCK):
            return kind
    return None


def decompressed(data: bytes, name: str, max_bytes: int) -> tuple[bytes, str | None]:
    """(`data` itself or gunzipped, the compression); never more than `max_bytes` of log
    (a gzip bomb stops there)."""
    if len(data) > max_bytes:
        raise too_large(name, len(data), max_bytes)
    kind = compression_of(data)
    if kind == "gzip":
        data = _gunzip(data, name, max_bytes)
    elif kind:
        raise ApiError(415, "unsupported_compression",
                       f"{name}: {kind}-compressed; this server reads plain text and gzip (.gz)")
    if not data.strip():
        raise ApiError(422, "empty_log", f"{name}: the log is empty")
    return data, kind


def _gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    out = bytearray()
    rest = data
    try:
        while rest:  # one gzip member after another, as `zcat` reads them
            member = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
            out += member.decompress(rest, max_bytes + 1 - len(out))
            if len(out) > max_bytes:
                raise too_large(f"{name} after decompression", None, max_bytes)
            if not member.eof:
                raise ApiError(422, "unreadable_log", f"{name}: the gzip stream is truncated")
            rest = member.unused_data
    except zlib.error as exc:
        raise ApiError(422, "unreadable_log", f"{name}: the gzip stream is corrupt ({exc})") from None
    return bytes(out)
