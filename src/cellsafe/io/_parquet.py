"""Parquet footers and row groups read without importing ``pyarrow.parquet``.

``pyarrow.parquet`` loads Arrow's filesystems (S3, GCS, Azure, HDFS, with ssl and sockets) on top of its
reader: some 10-15 ms of CPU at the start of a short command.  The reader underneath,
``pyarrow._parquet.ParquetReader``, needs none of it.  :func:`open_parquet` opens a local file with that
reader and reads flat columns by name, as ``pyarrow.parquet.ParquetFile`` does; where the reader is not
the one this module knows (another pyarrow), it opens the file with ``ParquetFile`` instead.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

__all__ = ["open_parquet", "parquet_schema"]


class _FlatReader:
    """A ``ParquetReader`` that reads top-level columns of a simple type by name (what ``ParquetFile`` does
    for them: a column is the leaf whose path is its name alone)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._leaf = {path[0]: i for i, path in enumerate(reader.column_paths) if len(path) == 1}

    @property
    def metadata(self) -> Any:
        return self._reader.metadata

    @property
    def num_row_groups(self) -> int:
        return int(self._reader.num_row_groups)

    @property
    def schema_arrow(self) -> Any:
        return self._reader.schema_arrow

    def read_row_group(self, i: int, columns: Sequence[str]) -> Any:
        return self._reader.read_row_group(i, column_indices=[self._leaf[c] for c in columns])

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> "_FlatReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_parquet(path: "str | os.PathLike[str]", read_dictionary: Sequence[str] = ()) -> Any:
    """A local Parquet file opened for reading row groups of flat columns (``read_row_group(i, columns)``,
    ``metadata``, ``num_row_groups``, ``schema_arrow``; a context manager).

    ``read_dictionary`` names the text columns read as their dictionary codes.  Raises what pyarrow
    raises for a file it cannot read.
    """
    try:
        from pyarrow._parquet import ParquetReader

        reader = ParquetReader()
        opener = reader.open
    except (ImportError, AttributeError):  # pragma: no cover  another pyarrow: its public reader
        import pyarrow.parquet as pq

        return pq.ParquetFile(path, read_dictionary=list(read_dictionary) or None)
    opener(os.fspath(path), read_dictionary=list(read_dictionary) or None)
    return _FlatReader(reader)


def parquet_schema(path: "str | os.PathLike[str]") -> Any:
    """The Arrow schema of a local Parquet file, from its footer (``pyarrow.parquet.read_schema``'s fields)."""
    with open_parquet(path) as f:
        return f.schema_arrow
