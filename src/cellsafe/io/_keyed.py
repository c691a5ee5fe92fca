"""Counts and exact record-key sums of every distinct cell, in one DuckDB pass over the records.

The cell key method needs, for each non-zero cell of the crossed variables, its number of records
and the sum of its records' keys modulo the key range (001 section 2).  DuckDB computes both in one
``GROUP BY`` straight from a CSV or Parquet file (or from a DataFrame it scans in place), so records
are never loaded into pandas and never sorted: only the distinct cells come back.

Sums are exact whatever the order of summation: integer keys are summed as 128-bit integers and
reduced modulo the number of cell keys; uniform keys u in [0, 1) are summed as the 53-bit
fixed-point integers floor(u * 2^53) and reduced modulo 2^53, which is exact because a double in
[0, 1) times 2^53 is an integer plus a fraction that ``floor`` drops without rounding.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from ._duckdb import _connect, _quote_ident, duckdb_error, source_sql

__all__ = ["KeyedCells", "aggregate_with_keys", "aggregate_keyed_codes", "FLOAT_KEY_BITS"]

#: Uniform keys are summed as fixed-point integers with this many fractional bits.
FLOAT_KEY_BITS = 53

_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                  "UBIGINT", "UHUGEINT")
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")


class KeyedCells(NamedTuple):
    """The distinct cells of some records, their counts and their key sums.

    Attributes
    ----------
    cells : DataFrame
        One row per distinct combination of the variables (one column each), in no particular order.
    counts : ndarray of int64
        Number of records of each cell (aligned with the rows of ``cells``).
    key_sums : ndarray of uint64 or None
        Sum of the cell's record keys modulo ``n_keys`` (integer keys) or the fixed-point sum modulo
        2^53 (uniform keys, see :data:`FLOAT_KEY_BITS`); None when no key column was named.
    integer_keys : bool or None
        True for integer keys, False for uniform keys, None without keys.
    """

    cells: pd.DataFrame
    counts: np.ndarray
    key_sums: np.ndarray | None
    integer_keys: bool | None


def _is_path(source: Any) -> bool:
    return isinstance(source, str) or hasattr(source, "__fspath__")


def aggregate_with_keys(
    source: Any,
    variables: Sequence[str],
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
) -> KeyedCells:
    """Count the records of every distinct cell and sum their record keys exactly, in one pass.

    Parameters
    ----------
    source : path to a CSV or Parquet file, or a pandas / polars DataFrame or pyarrow Table
        One row per record.
    variables : sequence of str
        The columns to cross.
    record_key : str, optional
        The column of record keys: integers 0..n_keys - 1 (the ONS convention) or uniform numbers in
        [0, 1).  Without it only counts are computed.
    n_keys : int, optional
        The number of integer cell keys (an ONS ptable's max ckey + 1); required for integer keys.

    Returns
    -------
    KeyedCells

    Raises
    ------
    DataError
        When a column is missing, a variable or key has missing values, or a key is out of range
        (the message names the column, the file and the first offending data row).

    Notes
    -----
    One ``GROUP BY`` computes per cell the count, the key sum and the number of bad keys (missing,
    NaN or out of range); the records are scanned again only to locate the first bad row for the
    error message.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F"], "key": [200, 7, 100]})
    >>> res = aggregate_with_keys(df, ["sex"], "key", n_keys=256)
    >>> sorted(zip(res.cells["sex"], res.counts.tolist(), res.key_sums.tolist()))
    [('F', 2, 44), ('M', 1, 7)]
    """
    con = _connect()
    try:
        q = _keyed_query(con, source, variables, record_key, n_keys)
        try:
            frame = con.execute(q.sql).df()
        except Exception as exc:
            raise duckdb_error(exc, source if _is_path(source) else "the data", "aggregate") from None
        if len(frame) == 0:
            raise DataError(f"{q.where} has no rows; a table needs at least one record.")
        nulls = [int(frame["__n"].to_numpy()[frame[v].isna().to_numpy()].sum()) for v in variables]
        n_bad = int(frame.pop("__bad").to_numpy(dtype=np.int64).sum()) if q.key_type is not None else 0
        _check_keyed(con, q, variables, record_key, n_keys, nulls, n_bad)
        counts = frame.pop("__n").to_numpy(dtype=np.int64)
        if q.key_type is None:
            return KeyedCells(frame, counts, None, None)
        sums = frame.pop("__s").to_numpy(dtype=np.int64).astype(np.uint64)
        return KeyedCells(frame, counts, sums, q.key_type == "integer")
    finally:
        con.close()


def aggregate_keyed_codes(
    source: Any,
    variables: Sequence[str],
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
) -> Any:
    """:func:`aggregate_with_keys` with the distinct cells coded (:class:`cellsafe.io.CodedCells`), no pandas frame.

    The same query and the same checks; the cells come back as Arrow columns.  Returns the
    :class:`KeyedCells` of :func:`aggregate_with_keys` instead when a variable's type would not come
    back as that frame gives it (dates, decimals).
    """
    from ._coded import _view, coded_rows

    con = _connect()
    try:
        q = _keyed_query(con, source, variables, record_key, n_keys)
        try:
            table = con.sql(q.sql).to_arrow_table()
        except Exception as exc:
            raise duckdb_error(exc, source if _is_path(source) else "the data", "aggregate") from None
        if table.num_rows == 0:
            raise DataError(f"{q.where} has no rows; a table needs at least one record.")

        def column(name: str) -> np.ndarray:
            return np.concatenate([_view(c) for c in table.column(name).chunks]).astype(np.int64, copy=False)

        counts = column("__n")
        nulls = [0] * len(variables)
        for i, v in enumerate(variables):
            col = table.column(v)
            if col.null_count:
                mask = np.concatenate([np.asarray(c.is_null().to_pylist(), dtype=bool) for c in col.chunks])
                nulls[i] = int(counts[mask].sum())
        n_bad = int(column("__bad").sum()) if q.key_type is not None else 0
        _check_keyed(con, q, variables, record_key, n_keys, nulls, n_bad)
        sums = None if q.key_type is None else column("__s").astype(np.uint64)
        integer = None if q.key_type is None else q.key_type == "integer"
        coded = coded_rows(table, variables, counts, sums, integer)
        if coded is not None:
            return coded
        frame = con.execute(q.sql).df()
        return KeyedCells(frame[list(variables)], frame["__n"].to_numpy(dtype=np.int64),
                          None if sums is None else frame["__s"].to_numpy(dtype=np.int64).astype(np.uint64), integer)
    finally:
        con.close()


class _KeyedQuery(NamedTuple):
    sql: str
    src: str
    where: str
    key_type: str | None
    bad_key: str


def _keyed_query(con: Any, source: Any, variables: Sequence[str], record_key: str | None,
                 n_keys: int | None) -> _KeyedQuery:
    """The one GROUP BY of :func:`aggregate_with_keys` (source registered, columns and key type checked)."""
    if isinstance(variables, str) or not len(variables):
        raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
    if n_keys is not None and (not isinstance(n_keys, (int, np.integer)) or n_keys < 1):
        raise InvalidArgumentError(f"The 'n_keys' parameter of aggregate_with_keys must be a positive integer. Got {n_keys!r}.")
    con.execute("SET enable_progress_bar = false")  # long scans would draw a bar on the terminal
    if _is_path(source):
        where = repr(str(source))
        src = source_sql(source, text=True)  # the variables as written; the key's type from DuckDB's sniffer
        if record_key is not None:
            sniffed = _column_types(con, source_sql(source))
            if record_key in sniffed:
                src = source_sql(source, text=True, types={record_key: sniffed[record_key]})
    else:
        try:
            con.register("__records", source)
        except Exception as exc:  # duckdb raises its own exception hierarchy
            raise InvalidArgumentError(
                "source must be a CSV or Parquet path, a pandas or polars DataFrame or a pyarrow Table. "
                f"Got {type(source).__name__} ({exc})."
            ) from None
        src = "__records"
        where = "the data"
    types = _column_types(con, src)
    cols = list(types)
    for v in variables:
        if v not in types:
            raise DataError(f"unknown variable {v!r}: {where} has columns {cols}. Check the spelling of the variables.")
    key_type = None
    if record_key is not None:
        if record_key not in types:
            raise DataError(f"record key column {record_key!r} is not in {where} (columns {cols}).")
        key_type = _key_kind(types[record_key], record_key, where)
        if key_type == "integer" and n_keys is None:
            raise InvalidArgumentError(
                f"record key column {record_key!r} of {where} holds integers, which are summed modulo the number "
                "of cell keys: pass n_keys (an ONS-layout ptable's max ckey + 1), or use uniform keys in [0, 1)."
            )
    groups = ", ".join(_quote_ident(v) for v in variables)
    aggs = ["COUNT(*) AS __n"]
    bad_key = ""
    if key_type is not None:
        k = _quote_ident(record_key)  # type: ignore[arg-type]
        if key_type == "integer":
            total = f"SUM(CAST({k} AS HUGEINT))"
            modulus = int(n_keys)  # type: ignore[arg-type]
            bad_key = f"{k} IS NULL OR {k} < 0 OR {k} > {modulus - 1}"
        else:
            # out-of-range and NaN keys give NULL here; they are counted as bad keys and refused below
            total = f"SUM(TRY_CAST(floor({k} * {float(2**FLOAT_KEY_BITS)!r}) AS BIGINT))"
            modulus = 2**FLOAT_KEY_BITS
            bad_key = f"{k} IS NULL OR NOT isfinite({k}) OR {k} < 0 OR {k} >= 1"  # isnan misses NaN read from Parquet in DuckDB 2.0
        # one filtered count checks every key in the same pass (cheaper than per-cell MIN/MAX/COUNT)
        aggs += [f"CAST(COALESCE({total}, 0) % {modulus} AS BIGINT) AS __s",
                 f"COUNT(*) FILTER (WHERE {bad_key}) AS __bad"]
    sql = f"SELECT {groups}, {', '.join(aggs)} FROM {src} GROUP BY {groups}"
    return _KeyedQuery(sql, src, where, key_type, bad_key)


def _check_keyed(con: Any, q: _KeyedQuery, variables: Sequence[str], record_key: str | None, n_keys: int | None,
                 nulls: Sequence[int], n_bad: int) -> None:
    """Refuse missing categories and bad keys, naming the first offending data row."""
    numbered = f"(SELECT row_number() OVER () AS __line, * FROM {q.src})"
    for v, n_missing in zip(variables, nulls):
        if n_missing:
            first_na = _first_line(con, numbered, f"{_quote_ident(v)} IS NULL", "")
            at = f", the first in data row {first_na[0]}" if first_na is not None else ""
            raise DataError(
                f"variable {v!r} has {n_missing} missing value(s) in {q.where}{at}; recode missing values as a "
                "category (for example 'Unknown') or drop those rows."
            )
    if not n_bad:
        return
    first_bad = _first_line(con, numbered, q.bad_key, _quote_ident(record_key))  # type: ignore[arg-type]
    line, value = first_bad if first_bad is not None else (None, None)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        what = "missing value(s)" if value is None else "NaN value(s)"
        raise DataError(
            f"record key column {record_key!r} of {q.where} has {what}, the first in data row {line}; every "
            "record needs a key (drop those records or give them keys)."
        )
    if q.key_type == "integer":
        raise DataError(
            f"record key column {record_key!r} of {q.where} must hold integers in 0..{int(n_keys) - 1} (the "  # type: ignore[arg-type]
            f"ptable's cell keys). Got {value} in data row {line} ({n_bad} key(s) out of range)."
        )
    raise DataError(
        f"record key column {record_key!r} of {q.where} must hold uniform numbers in [0, 1) (or integers for an "
        f"ONS ptable). Got {value!r} in data row {line} ({n_bad} key(s) out of range)."
    )


def _column_types(con: Any, src: str) -> dict[str, str]:
    try:
        return {r[0]: str(r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    except Exception as exc:  # duckdb raises its own exception hierarchy
        raise duckdb_error(exc, src) from None


def _key_kind(sql_type: str, name: str, where: str) -> str:
    t = sql_type.upper()
    if t in _INTEGER_TYPES:
        return "integer"
    if t in _FLOAT_TYPES or t.startswith("DECIMAL"):
        return "uniform"
    raise DataError(
        f"record key column {name!r} of {where} must hold numbers (integers 0..n_keys - 1 or uniform numbers in "
        f"[0, 1)). Got type {sql_type}."
    )


def _first_line(con: Any, numbered: str, condition: str, column: str) -> tuple[int, Any] | None:
    """The first data row (1-based) meeting ``condition``, and the value of ``column`` there."""
    what = f", {column}" if column else ""
    row = con.execute(f"SELECT __line{what} FROM {numbered} WHERE {condition} ORDER BY __line LIMIT 1").fetchone()
    if row is None:
        return None
    return int(row[0]), (row[1] if column else None)
