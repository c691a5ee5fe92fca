"""Plain CSV files read by Arrow's CSV reader, exactly as DuckDB reads them, without starting DuckDB.

DuckDB is the reference reader of CSV files (:mod:`cellsafe.io._duckdb`): it detects the dialect
(delimiter, quoting, comments, rows to skip) and reads every column as written.  Starting it costs
more than reading a table of a few hundred thousand cells.  A *plain* file leaves nothing to
detect: comma-separated, no quote character of either kind, none of DuckDB's other candidate
delimiters (``;``, tab, ``|``), no ``#``, no carriage return, no NUL, no byte-order mark, no empty
line, a header of distinct non-empty names (case aside).  Anything else, including what
:func:`cellsafe.io.check_csv` refuses, goes through DuckDB's path and its checks.  DuckDB's sniffer then has one consistent reading (the
commas), and so has Arrow's reader with commas and no quoting: the same fields, byte for byte.
A field DuckDB would read as missing (empty) and anything the checks do not settle send the file
to DuckDB, whose messages name the row.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["plain_csv_header", "aggregate_plain_csv"]

# Files up to this size are checked and read in memory; larger ones are DuckDB's (it streams them).
_MAX_BYTES = 1 << 28
_FORBIDDEN = (b'"', b"'", b";", b"\t", b"|", b"#", b"\r", b"\x00", b"\n\n")
# A count as written: digits, optionally '.0...' (the same rule as DuckDB's path, _duckdb._WHOLE).
_WHOLE = re.compile(r"^[\t\n\f\r ]*\+?[0-9]+(\.0*)?[\t\n\f\r ]*$")  # RE2's \s, not Python's
_MAX_COUNT = 2**63 - 1

# The verdict on the last file looked at (the header read for the count rule, then the records).
_cache: dict[Any, list[str] | None] = {}


def _plain(path: Any) -> tuple[bytes, list[str]] | None:
    """The file's bytes and header names when the file is plain (see the module's notes), else None."""
    p = Path(path)
    if not p.name.lower().endswith(".csv"):
        return None
    try:
        st = p.stat()
    except OSError:
        return None
    if not 0 < st.st_size <= _MAX_BYTES:
        return None
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    if key in _cache and _cache[key] is None:
        return None
    data = p.read_bytes()
    if key in _cache:
        return data, _cache[key]  # type: ignore[return-value]
    names = _plain_names(data)
    _cache.clear()
    _cache[key] = names
    return None if names is None else (data, names)


def _plain_names(data: bytes) -> list[str] | None:
    if data.startswith(b"\n") or data.startswith(b"\xef\xbb\xbf") or any(x in data for x in _FORBIDDEN):
        return None
    first = data.split(b"\n", 1)[0]
    try:
        names = first.decode("utf-8").split(",")
    except UnicodeDecodeError:
        return None
    # distinct names, case aside (DuckDB's names ignore case: io.check_csv refuses such a header)
    if len(names) < 2 or not all(names) or len({n.lower() for n in names}) != len(names) or len(data) <= len(first) + 1:
        return None
    return names


def plain_csv_header(path: Any) -> list[str] | None:
    """The column names of a plain CSV file (as DuckDB names them), or None when DuckDB must read it."""
    plain = _plain(path)
    return None if plain is None else list(plain[1])


def aggregate_plain_csv(path: Any, variables: Sequence[str], count: str | None = None) -> Any:
    """The coded cells (:class:`cellsafe.io.CodedCells`) of a plain CSV file, or None for DuckDB's path.

    Every column is read as text exactly as written, dictionary-encoded by Arrow's reader; counts
    are checked against the same rule as DuckDB's path (whole numbers as written) and converted
    exactly, value by distinct value.
    """
    if isinstance(variables, str) or not len(variables) or (count is not None and count in variables):
        return None
    plain = _plain(path) if isinstance(path, (str, os.PathLike)) else None
    if plain is None:
        return None
    data, names = plain
    wanted = list(variables) + ([count] if count else [])
    if any(c not in names for c in wanted) or len(set(wanted)) != len(wanted):
        return None
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from ._coded import _Crossing

    text = pa.dictionary(pa.int32(), pa.string())
    try:
        table = pcsv.read_csv(
            pa.py_buffer(data),
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pcsv.ParseOptions(delimiter=",", quote_char=False, escape_char=False,
                                            newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={c: text for c in wanted}, include_columns=wanted,
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None  # ragged rows, bad UTF-8: DuckDB's reader says what and where
    n = table.num_rows
    if n == 0:
        return None
    for c in wanted:  # an empty field is a missing value to DuckDB
        if any("" in chunk.dictionary.to_pylist() for chunk in table.column(c).chunks):
            return None
    weights = None
    if count is not None:
        weights = _counts(table.column(count))
        if weights is None:
            return None
    crossing = _Crossing(len(variables), [False] * len(variables), n)
    if not crossing.add([table.column(v) for v in variables], weights, []):
        return None
    return crossing.result(None, None)


def _counts(column: Any) -> np.ndarray | None:
    """Each row's count as float64, exact; None when a count breaks DuckDB's rule or the total reaches 2^53."""
    parts = []
    for chunk in column.chunks:
        values = []
        for text in chunk.dictionary.to_pylist():
            if not _WHOLE.match(text):
                return None
            value = int(text.strip("\t\n\f\r ").lstrip("+").split(".")[0])
            if value > _MAX_COUNT:
                return None
            values.append(value)
        codes = np.frombuffer(chunk.indices.buffers()[1], dtype=np.int32, count=len(chunk),
                              offset=chunk.indices.offset * 4)
        parts.append(np.asarray(values, dtype=np.float64)[codes])
    out = np.concatenate(parts) if parts else np.zeros(0)
    if out.size and float(out.sum()) >= 2.0**53:
        return None
    return out
