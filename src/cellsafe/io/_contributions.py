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
import pandas as pd

from ..exceptions import DataError, InvalidArgumentError
from ._duckdb import _connect, _quote_ident, source_sql

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
    """

    cells: pd.DataFrame
    contributor: np.ndarray
    counts: np.ndarray
    values: np.ndarray
    contributor_ids: np.ndarray | None


def aggregate_contributions(
    source: Any, variables: Sequence[str], value: str, contributor: str | None = None
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

    Examples
    --------
    >>> df = pd.DataFrame({"sector": ["a", "a", "a"], "firm": [1, 1, 2], "turnover": [5.0, 3.0, 2.0]})
    >>> c = aggregate_contributions(df, ["sector"], "turnover", "firm")
    >>> sorted(c.values.tolist())
    [2.0, 8.0]
    """
    if isinstance(variables, str) or not len(variables):
        raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
    con = _connect()
    try:
        if isinstance(source, str) or hasattr(source, "__fspath__"):
            src, where = source_sql(source), repr(str(source))
        else:
            con.register("__records", source)
            src, where = "__records", "the data"
        cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
        for c in [*variables, value] + ([contributor] if contributor else []):
            if c not in cols:
                raise DataError(f"unknown column {c!r}: {where} has columns {cols}.")
        v = _quote_ident(value)
        bad = con.execute(
            f"SELECT COUNT(*) FILTER (WHERE TRY_CAST({v} AS DOUBLE) IS NULL OR TRY_CAST({v} AS DOUBLE) < 0) FROM {src}"
        ).fetchone()[0]
        if bad:
            raise DataError(
                f"value column {value!r} of {where} has {bad} missing, non-numeric or negative value(s); the dominance "
                "rules need non-negative contributions (drop or recode those records)."
            )
        groups = ", ".join(_quote_ident(x) for x in variables)
        if contributor:
            who = f"CAST({_quote_ident(contributor)} AS VARCHAR)"
            sql = (
                f"SELECT {groups}, {who} AS __who, COUNT(*) AS __n, SUM(CAST({v} AS DOUBLE)) AS __v "
                f"FROM {src} GROUP BY {groups}, __who"
            )
        else:
            sql = f"SELECT {groups}, row_number() OVER () - 1 AS __who, 1 AS __n, CAST({v} AS DOUBLE) AS __v FROM {src}"
        frame = con.execute(sql).df()
    finally:
        con.close()
    if len(frame) == 0:
        raise DataError(f"{where} has no rows.")
    for x in variables:
        if frame[x].isna().any():
            raise DataError(f"variable {x!r} has missing values in {where}; recode them as a category.")
    who = frame.pop("__who")
    if contributor:
        if who.isna().any():
            raise DataError(f"contributor column {contributor!r} has missing values in {where}; every record needs an id.")
        codes, ids = pd.factorize(who, sort=True)
        ids_arr: np.ndarray | None = np.asarray(ids, dtype=object)
    else:
        codes, ids_arr = who.to_numpy(dtype=np.int64), None
    counts = frame.pop("__n").to_numpy(dtype=np.int64)
    values = frame.pop("__v").to_numpy(dtype=np.float64)
    return Contributions(frame, np.asarray(codes, dtype=np.int64), counts, values, ids_arr)
