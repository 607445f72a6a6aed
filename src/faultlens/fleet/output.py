"""Write result rows to a file whose extension names the format: .jsonl (or .ndjson), .csv,
.parquet. JSON Lines and CSV rows are written as they arrive, so an interrupted scan keeps what it
finished; Parquet is written in row groups of PARQUET_BATCH rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..errors import UsageError
from .row import FIELDS

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
PARQUET_BATCH = 1024


def format_of(path: str) -> str:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise UsageError(f"--out {path}: unknown format",
                         tip="name the file .jsonl (JSON Lines), .csv or .parquet")
    return fmt


def open_writer(path: str):
    """A writer with `write(row)` and `close()` for the format the extension names."""
    fmt = format_of(path)
    if fmt == "parquet":
        return ParquetWriter(path)
    try:
        fh = open(path, "w", newline="" if fmt == "csv" else None, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write: {exc.strerror}") from None
    return CsvWriter(fh) if fmt == "csv" else JsonLinesWriter(fh)


class JsonLinesWriter:
    def __init__(self, fh):
        self.fh = fh

    def write(self, row: dict) -> None:
        self.fh.write(json.dumps({k: row[k] for k in FIELDS}, ensure_ascii=False) + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


class CsvWriter:
    """One column per field; list fields (files, warnings, error lines) are JSON arrays."""

    def __init__(self, fh):
        self.fh = fh
        self.writer = csv.DictWriter(fh, fieldnames=list(FIELDS))
        self.writer.writeheader()

    def write(self, row: dict) -> None:
        self.writer.writerow({k: json.dumps(row[k], ensure_ascii=False) if kind == "list" else row[k]
                              for k, kind in FIELDS.items()})
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


class ParquetWriter:
    def __init__(self, path: str):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError("writing Parquet needs pyarrow",
                             tip="pip install 'faultlens[fleet]', or use --out rows.jsonl") from None
        types = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(),
                 "list": pa.list_(pa.string())}
        self.pa = pa
        self.schema = pa.schema([(name, types[kind]) for name, kind in FIELDS.items()])
        try:
            self.writer = pq.ParquetWriter(path, self.schema)
        except OSError as exc:
            raise UsageError(f"--out {path}: cannot write: {exc}") from None
        self.batch: list[dict] = []

    def write(self, row: dict) -> None:
        self.batch.append({k: row[k] for k in FIELDS})
        if len(self.batch) >= PARQUET_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.batch:
            self.writer.write_table(self.pa.Table.from_pylist(self.batch, schema=self.schema))
            self.batch = []

    def close(self) -> None:
        self._flush()
        self.writer.close()
