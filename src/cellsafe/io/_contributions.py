"""Contributions to a magnitude table: the value each contributor adds to each inner cell, from DuckDB.

A magnitude table publishes sums of a numeric variable (turnover, income) over the cells of crossed
variables.  The dominance rules look at the largest contributions to each published cell, where a
contributor is a holding: several records of one enterprise count as one.  One ``GROUP BY`` over
the variables and the contributor id sums each contributor's records per inner cell, straight from
the file; only these sums reach numpy.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from ._duckdb import _connect, _quote_ident, duckdb_error, source_sql
from ._keyed import FLOAT_KEY_BITS

__all__ = ["Contributions", "aggregate_contributions"]


class Contributions(NamedTuple):
    """Per (inner cell, contributor): the number of records and the sum of the value.

    Attributes
    ----------
    cells : DataFrame
        The variables of each row (one column each).
    contributor : ndarray of int64
        The contributor's number (0..n_contributors - 1, in the order of :attr:`contributor_ids`).
    counts : ndarray of int64
        Records of the contributor in the cell.
    values : ndarray of float64
        Sum of the value over those records.
    contributor_ids : ndarray
        The contributor ids as read (None when every record is its own contributor).
    key_sums, key_sums_nonzero : ndarray of uint64, optional
        With a record key column: the sum of the records' keys as 53-bit fixed-point integers
        (floor(key * 2^53)) modulo 2^53, over all the records of the row and over those with a
        non-zero value (the cell key method for magnitudes); None otherwise.
    """

    cells: pd.DataFrame
    contributor: np.ndarray
    counts: np.ndarray
    values: np.ndarray
    contributor_ids: np.ndarray | None
    key_sums: np.ndarray | None = None
    key_sums_nonzero: np.ndarray | None = None


def aggregate_contributions(
    source: Any, variables: Sequence[str], value: str, contributor: str | None = None, *, record_key: str | None = None
) -> Contributions:
    """Sum ``value`` per inner cell and contributor in one DuckDB pass.

    Parameters
    ----------
    source : path to CSV/Parquet, or a pandas / polars DataFrame or pyarrow Table
        One row per record.
    variables : sequence of str
        The columns to cross.
    value : str
        The numeric column summed (must be non-negative and not missing).
    contributor : str, optional
        The contributor id column (holdings); without it each record is its own contributor.
    record_key : str, optional
        A column of uniform record keys in [0, 1), summed exactly per row (see :class:`Contributions`).

    Examples
    --------
    >>> df = pd.DataFrame({"sector": ["a", "a", "a"], "firm": [1, 1, 2], "turnover": [5.0, 3.0, 2.0]})
    >>> c = aggregate_contributions(df, ["sector"], "turnover", "firm")
    >>> sorted(c.values.tolist())
    [2.0, 8.0]
    """
    if isinstance(variables, str) or not len(variables):
        raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
    import duckdb

    con = _connect()
    try:
        return _aggregate(con, source, variables, value, contributor, record_key)
    except duckdb.Error as exc:  # e.g. a CSV value its sniffer typed as a number: one line naming the file
        raise duckdb_error(exc, source if isinstance(source, str) or hasattr(source, "__fspath__") else "the data", "read") from None
    finally:
        con.close()


def _aggregate(con: Any, source: Any, variables: Sequence[str], value: str, contributor: str | None,
               record_key: str | None) -> Contributions:
    if isinstance(source, str) or hasattr(source, "__fspath__"):
        # CSV columns as written (a category '01' stays '01', as when counting); the key as the number it is
        src, where = source_sql(source, text=True, types={record_key: "DOUBLE"} if record_key else None), repr(str(source))
    else:
        con.register("__records", source)
        src, where = "__records", "the data"
    cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    for c in [*variables, value] + ([contributor] if contributor else []) + ([record_key] if record_key else []):
        if c not in cols:
            raise DataError(f"unknown column {c!r}: {where} has columns {cols}.")
    keys = per_record = ""
    if record_key:
        keys, per_record = _key_sums_sql(con, src, record_key, where, _quote_ident(value))
    v = _quote_ident(value)
    bad = con.execute(
        f"SELECT COUNT(*) FILTER (WHERE TRY_CAST({v} AS DOUBLE) IS NULL OR TRY_CAST({v} AS DOUBLE) < 0) FROM {src}"
    ).fetchone()[0]
    if bad:
        raise DataError(
            f"value column {value!r} of {where} has {bad} missing, non-numeric or negative value(s); magnitude tables "
            "need non-negative contributions (drop or recode those records)."
        )
    groups = ", ".join(_quote_ident(x) for x in variables)
    if contributor:
        who = f"CAST({_quote_ident(contributor)} AS VARCHAR)"
        sql = (
            f"SELECT {groups}, {who} AS __who, COUNT(*) AS __n, SUM(CAST({v} AS DOUBLE)) AS __v{keys} "
            f"FROM {src} GROUP BY {groups}, __who ORDER BY {groups}, __who"
        )
    else:  # one row per record, in the file's order (DuckDB keeps it without ORDER BY)
        sql = f"SELECT {groups}, 1 AS __n, CAST({v} AS DOUBLE) AS __v{per_record} FROM {src}"
    # rows in an order fixed by the data, so that keys drawn per row give the same release on every run
    frame = con.execute(sql).df()
    if len(frame) == 0:
        raise DataError(f"{where} has no rows.")
    for x in variables:
        if frame[x].isna().any():
            raise DataError(f"variable {x!r} has missing values in {where}; recode them as a category.")
    if contributor:
        who = frame.pop("__who")
        if who.isna().any():
            raise DataError(f"contributor column {contributor!r} has missing values in {where}; every record needs an id.")
        codes, ids = pd.factorize(who, sort=True)
        ids_arr: np.ndarray | None = np.asarray(ids, dtype=object)
    else:
        codes, ids_arr = np.arange(len(frame), dtype=np.int64), None
    counts = frame.pop("__n").to_numpy(dtype=np.int64)
    values = frame.pop("__v").to_numpy(dtype=np.float64)
    sums = sums_nz = None
    if record_key:
        sums = frame.pop("__k").to_numpy(dtype=np.int64).astype(np.uint64)
        sums_nz = frame.pop("__k_nz").to_numpy(dtype=np.int64).astype(np.uint64)
    return Contributions(frame, np.asarray(codes, dtype=np.int64), counts, values, ids_arr, sums, sums_nz)


def _key_sums_sql(con: Any, src: str, record_key: str, where: str, value: str) -> tuple[str, str]:
    """The select terms summing a uniform key column exactly per group, and the same for one record per row.

    Every key is checked to be in [0, 1) first.
    """
    sql_type = dict((r[0], str(r[1])) for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall())[record_key].upper()
    if not (sql_type in ("FLOAT", "DOUBLE", "REAL") or sql_type.startswith("DECIMAL")):
        raise DataError(
            f"record key column {record_key!r} of {where} must hold uniform numbers in [0, 1) for a magnitude table. "
            f"Got type {sql_type}."
        )
    k = _quote_ident(record_key)
    bad = con.execute(f"SELECT COUNT(*) FILTER (WHERE {k} IS NULL OR NOT isfinite({k}) OR {k} < 0 OR {k} >= 1) FROM {src}").fetchone()[0]
    if bad:
        raise DataError(
            f"record key column {record_key!r} of {where} has {bad} missing or out-of-range key(s); every record needs a "
            "uniform key in [0, 1)."
        )
    fixed = f"CAST(floor({k} * {float(2**FLOAT_KEY_BITS)!r}) AS BIGINT)"
    m = 2**FLOAT_KEY_BITS
    nonzero = f"CAST({value} AS DOUBLE) <> 0"
    grouped = (f", CAST(SUM({fixed}) % {m} AS BIGINT) AS __k"
               f", CAST(COALESCE(SUM({fixed}) FILTER (WHERE {nonzero}), 0) % {m} AS BIGINT) AS __k_nz")
    per_record = f", {fixed} AS __k, CASE WHEN {nonzero} THEN {fixed} ELSE 0 END AS __k_nz"
    return grouped, per_record
