"""DuckDB as the embedded engine for CSV and Parquet inputs.

Files are aggregated in DuckDB (``GROUP BY`` the variables), so records never all pass through
pandas; only the table of distinct cells does.  Validation queries (missing values, negative or
fractional counts) also run in DuckDB and report the first offending line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..exceptions import DataError

__all__ = ["aggregate_file", "read_frame", "read_records", "source_sql"]

_CSV = (".csv", ".csv.gz", ".tsv", ".txt", ".csv.zst")
_PARQUET = (".parquet", ".pq", ".parq")


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def source_sql(path: "str | os.PathLike[str]") -> str:
    """The DuckDB table function reading ``path`` (CSV or Parquet, by suffix)."""
    p = Path(path)
    name = p.name.lower()
    if not p.exists() and not any(ch in str(p) for ch in "*?["):
        raise DataError(f"input file {str(p)!r} does not exist.")
    if p.is_dir():
        raise DataError(f"input {str(p)!r} is a folder; give a CSV or Parquet file.")
    if name.endswith(_PARQUET):
        return f"read_parquet({_quote_str(str(p))})"
    if name.endswith(_CSV):
        return f"read_csv({_quote_str(str(p))}, header = true)"
    raise DataError(
        f"cannot tell the format of {str(p)!r} from its name; use a .csv, .csv.gz, .tsv or .parquet file."
    )


def _connect():  # type: ignore[no-untyped-def]
    import duckdb

    return duckdb.connect(database=":memory:")


def _columns(con, src: str) -> list[str]:  # type: ignore[no-untyped-def]
    try:
        return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    except Exception as exc:  # duckdb raises its own exception hierarchy
        raise DataError(f"cannot read {src}: {exc}") from None


def read_frame(path: "str | os.PathLike[str]") -> pd.DataFrame:
    """Read a whole CSV or Parquet file into pandas through DuckDB (for small inputs)."""
    src = source_sql(path)
    con = _connect()
    try:
        _columns(con, src)
        return con.execute(f"SELECT * FROM {src}").df()
    finally:
        con.close()


def read_records(path: "str | os.PathLike[str]") -> pd.DataFrame:
    """Read microdata records from CSV or Parquet without guessing the types of text.

    A CSV file's columns are read as text exactly as written (``"yes"`` stays ``"yes"``,
    ``"0.50"`` stays ``"0.50"``; an empty field is missing); a Parquet file's columns keep
    the types stored in it.
    """
    src = source_sql(path)
    if src.startswith("read_csv("):
        src = src[:-1] + ", all_varchar = true)"
    con = _connect()
    try:
        _columns(con, src)
        return con.execute(f"SELECT * FROM {src}").df()
    finally:
        con.close()


def aggregate_file(
    path: "str | os.PathLike[str]", variables: Sequence[str], count: str | None = None
) -> tuple[pd.DataFrame, str]:
    """Aggregate a microdata (or frequency) file to one row per distinct cell.

    Returns the frame of distinct cells and the name of its frequency column.
    """
    src = source_sql(path)
    con = _connect()
    try:
        cols = _columns(con, src)
        for v in list(variables) + ([count] if count else []):
            if v not in cols:
                raise DataError(
                    f"unknown variable {v!r}: {str(path)!r} has columns {cols}. Check the spelling of --variables / --count."
                )
        n_rows = con.execute(f"SELECT COUNT(*) FROM {src}").fetchone()[0]
        if n_rows == 0:
            raise DataError(f"the input {str(path)!r} has no rows; a table needs at least one record or cell.")
        numbered = f"(SELECT row_number() OVER () AS __line, * FROM {src})"
        for v in variables:
            row = con.execute(
                f"SELECT __line, COUNT(*) OVER () FROM {numbered} WHERE {_quote_ident(v)} IS NULL LIMIT 1"
            ).fetchone()
            if row is not None:
                raise DataError(
                    f"variable {v!r} has {row[1]} missing value(s) in {str(path)!r}, the first in data row {row[0]}; "
                    "recode missing values as a category (for example 'Unknown') or drop those rows."
                )
        groups = ", ".join(_quote_ident(v) for v in variables)
        out_name = "count" if "count" not in variables else "__count"
        if count is None:
            agg = f"COUNT(*) AS {_quote_ident(out_name)}"
        else:
            c = _quote_ident(count)
            try:
                bad = con.execute(
                    f"SELECT __line, {c} FROM {numbered} WHERE {c} IS NULL OR TRY_CAST({c} AS DOUBLE) IS NULL "
                    f"OR TRY_CAST({c} AS DOUBLE) < 0 OR TRY_CAST({c} AS DOUBLE) <> floor(TRY_CAST({c} AS DOUBLE)) LIMIT 1"
                ).fetchone()
            except Exception as exc:
                raise DataError(f"cannot read count column {count!r} of {str(path)!r}: {exc}") from None
            if bad is not None:
                what = "a missing" if bad[1] is None else f"an invalid value {bad[1]!r} (not a non-negative integer)"
                raise DataError(
                    f"count column {count!r} has {what} in data row {bad[0]} of {str(path)!r}; "
                    "counts must be non-negative whole numbers."
                )
            agg = f"SUM(CAST({c} AS HUGEINT)) AS {_quote_ident(out_name)}"
        frame = con.execute(f"SELECT {groups}, {agg} FROM {src} GROUP BY {groups}").df()
        frame[out_name] = frame[out_name].astype("int64")
        return frame, out_name
    finally:
        con.close()
