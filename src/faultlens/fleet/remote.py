"""Logs named by fsspec URLs (s3://, gs://, abfs://, http://, ...), read by the worker itself.

An object is streamed in chunks into memory up to SPOOL_BYTES, and past that into a temporary
file, so a worker's memory stays bounded whatever the object's size; the engine then reads the
bytes (or the file) exactly as it reads a local log, decompression included. Credentials and
endpoints come from fsspec's usual configuration (environment variables such as
FSSPEC_S3_ENDPOINT_URL or AWS_ENDPOINT_URL, ~/.config/fsspec/, the cloud SDK's own files).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone

from ..errors import InputError, UsageError

CHUNK_BYTES = 8 << 20
SPOOL_BYTES = 64 << 20

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*(?:://|::)")


def is_url(text: str) -> bool:
    """Whether `text` is an fsspec URL (a protocol, or a chain such as simplecache::s3://...)."""
    return bool(_URL.match(text))


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise UsageError("reading URLs needs fsspec",
                         tip="pip install 'faultlens[fleet]', plus the filesystem's package "
                             "(s3fs, gcsfs, adlfs...)") from None
    return fsspec


def filesystem(url: str):
    """(filesystem, path inside it) for a URL."""
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise UsageError(f"{url}: {exc}") from None


@contextlib.contextmanager
def local_copy(url: str) -> Iterator[bytes | str]:
    """The object's bytes (up to SPOOL_BYTES) or the path of a temporary copy (beyond), which is
    deleted on exit. Raises InputError when the object cannot be read."""
    fsspec = _fsspec()
    buf = bytearray()
    spill = None
    try:
        with fsspec.open(url, "rb", compression=None) as fh:
            while chunk := fh.read(CHUNK_BYTES):
                if spill is None and len(buf) + len(chunk) <= SPOOL_BYTES:
                    buf += chunk
                    continue
                if spill is None:
                    spill = tempfile.NamedTemporaryFile(prefix="faultlens-", suffix=".log",
                                                        delete=False)
                    spill.write(buf)
                    buf = bytearray()
                spill.write(chunk)
    except FileNotFoundError:
        _discard(spill)
        raise InputError(f"{url}: no such object") from None
    except PermissionError:
        _discard(spill)
        raise InputError(f"{url}: permission denied") from None
    except OSError as exc:
        _discard(spill)
        raise InputError(f"{url}: cannot read: {exc}") from None
    if spill is None:
        yield bytes(buf)
        return
    spill.close()
    try:
        yield spill.name
    finally:
        os.unlink(spill.name)


def _discard(spill) -> None:
    if spill is not None:
        spill.close()
        os.unlink(spill.name)


def modified_day(url: str) -> str | None:
    """The object's modification day (UTC, YYYY-MM-DD), when the filesystem knows it."""
    try:
        fs, path = filesystem(url)
        when = fs.modified(path)
    except Exception:  # not every filesystem implements modified(); the day is optional
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d")


def local_modified_day(path: str) -> str | None:
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d")
