"""Many marginals of records in one DuckDB pass, on public codes, without loading the records.

:func:`aggregate_marginals` codes every record on the public domain inside DuckDB (a category's
position in its public list; a number's interval among public bin edges), counts the distinct
codes once, and returns each requested marginal as a dense numpy array from one query with
``GROUPING SETS``.  Only the marginals leave DuckDB: memory in Python is the sum of their sizes,
whatever the number of records.  Records with a value outside the domain (an unknown category, a
number outside the bins, a missing value) are refused, naming the first, or left out.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..exceptions import DataError, InvalidArgumentError
from ._duckdb import _connect, _count_check, _quote_ident, _quote_str, duckdb_error, source_sql

__all__ = ["ColumnCoding", "MarginalCounts", "aggregate_marginals"]


@dataclass(frozen=True)
class ColumnCoding:
    """How one column's values map to codes 0..size-1.

    Exactly one of ``categories`` (values written as text, matched exactly) and ``edges``
    (increasing numbers: value x has code i when edges[i] <= x < edges[i + 1], the last interval
    closed on the right) is given.
    """

    name: str
    categories: tuple[str, ...] | None = None
    edges: tuple[float, ...] | None = None

    @property
    def size(self) -> int:
        return len(self.categories) if self.categories is not None else len(self.edges or ()) - 1

    def sql(self) -> str:
        """The SQL expression of the code (NULL outside the domain)."""
        col = _quote_ident(self.name)
        if self.categories is not None:
            whens = " ".join(f"WHEN {_quote_str(c)} THEN {i}" for i, c in enumerate(self.categories))
            return f"(CASE CAST({col} AS VARCHAR) {whens} ELSE NULL END)"
        edges = self.edges or ()
        x = f"TRY_CAST({col} AS DOUBLE)"
        whens = " ".join(f"WHEN {x} < {float(e)!r} THEN {i}" for i, e in enumerate(edges[1:-1]))
        return (f"(CASE WHEN {x} IS NULL OR isnan({x}) OR {x} < {float(edges[0])!r} OR {x} > {float(edges[-1])!r} "
                f"THEN NULL {whens} ELSE {len(edges) - 2} END)")


@dataclass(frozen=True)
class MarginalCounts:
    """Marginals of coded records: one dense array per requested attribute set, and the records left out."""

    marginals: tuple[np.ndarray, ...]
    n_outside: int


def _source(con: Any, source: Any) -> tuple[str, Any]:
    if isinstance(source, (str, os.PathLike)):
        return source_sql(source, text=True), source
    from .._frames import as_pandas

    frame = as_pandas(source, "source")
    con.register("__records", frame)
    return "__records", "the records"


def aggregate_marginals(
    source: Any,
    columns: Sequence[ColumnCoding],
    cliques: Sequence[Sequence[int]],
    *,
    count: str | None = None,
    outside: str = "error",
) -> MarginalCounts:
    """Count records on public codes and return the marginals of ``cliques``.

    Parameters
    ----------
    source : path or DataFrame
        A CSV or Parquet file (CSV read as text, exactly as written) or a pandas/polars/Arrow frame.
    columns : sequence of ColumnCoding
        The coded columns; attribute i of a clique is ``columns[i]``.
    cliques : sequence of sequences of int
        Attribute sets (sorted) whose marginals are returned, axes in attribute order.
    count : str, optional
        A frequency column (non-negative whole numbers); by default every row is one record.
    outside : {"error", "drop"}
        Records with a value outside the domain: a :class:`DataError` naming the first, or left
        out (their number is returned, for the data holder only).

    Returns
    -------
    MarginalCounts

    Examples
    --------
    >>> import pandas as pd
    >>> records = pd.DataFrame({"sex": ["F", "M", "F"], "age": [23, 41, 67]})
    >>> cols = [ColumnCoding("sex", categories=("F", "M")), ColumnCoding("age", edges=(0, 40, 120))]
    >>> aggregate_marginals(records, cols, [(0, 1)]).marginals[0].tolist()
    [[1, 1], [0, 1]]
    """
    if outside not in ("error", "drop"):
        raise InvalidArgumentError(f"'outside' must be 'error' or 'drop'. Got {outside!r} instead.")
    d = len(columns)
    con = _connect()
    try:
        src, where = _source(con, source)
        try:
            have = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
        except Exception as exc:
            raise duckdb_error(exc, where) from None
        for c in list(columns) + ([ColumnCoding(count, categories=())] if count else []):
            if c.name not in have:
                raise DataError(f"unknown variable {c.name!r}: {where!s} has columns {have}.")
        codes = ", ".join(f"{c.sql()} AS c{i}" for i, c in enumerate(columns))
        weight = "1"
        if count is not None:
            _count_check(con, f"(SELECT row_number() OVER () AS __line, * FROM {src})", count, where)
            weight = f"CAST({_quote_ident(count)} AS BIGINT)"
        names = ", ".join(f"c{i}" for i in range(d))
        try:
            con.execute(
                f"CREATE TEMP TABLE __cells AS SELECT {names}, SUM(w) AS n FROM "
                f"(SELECT {codes}, {weight} AS w FROM {src}) GROUP BY ALL"
            )
            missing = " OR ".join(f"c{i} IS NULL" for i in range(d))
            n_out = int(con.execute(f"SELECT COALESCE(SUM(n), 0) FROM __cells WHERE {missing}").fetchone()[0])
        except Exception as exc:
            raise duckdb_error(exc, where) from None
        if n_out and outside == "error":
            raise _outside_error(con, src, columns, where)
        if n_out:
            con.execute(f"DELETE FROM __cells WHERE {missing}")
        return MarginalCounts(tuple(_grouping_sets(con, columns, cliques)), n_out)
    finally:
        con.close()


def _outside_error(con: Any, src: str, columns: Sequence[ColumnCoding], where: Any) -> DataError:
    for c in columns:
        row = con.execute(f"SELECT CAST({_quote_ident(c.name)} AS VARCHAR) FROM {src} WHERE {c.sql()} IS NULL LIMIT 1").fetchone()
        if row is None:
            continue
        if c.categories is not None:
            shown = list(c.categories[:10]) + (["..."] if len(c.categories) > 10 else [])
            domain = f"the public categories {shown}"
        else:
            domain = f"the public bins from {c.edges[0]:g} to {c.edges[-1]:g}"  # type: ignore[index]
        value = "a missing value" if row[0] is None else f"value {row[0]!r}"
        return DataError(
            f"variable {c.name!r} has {value} outside {domain} in {where!s}; add it to the domain if it is public, "
            "or leave such records out (outside='drop', --outside drop)."
        )
    return DataError(f"a record of {where!s} lies outside the public domain.")


def _grouping_sets(con: Any, columns: Sequence[ColumnCoding], cliques: Sequence[Sequence[int]]) -> list[np.ndarray]:
    sizes = [c.size for c in columns]
    wanted = [tuple(int(a) for a in c) for c in cliques]
    out = [np.zeros([sizes[a] for a in c], dtype=np.int64) for c in wanted]
    distinct = sorted(set(wanted) - {()})
    if () in wanted:
        total = con.execute("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM __cells").fetchone()[0]
        for k, c in enumerate(wanted):
            if c == ():
                out[k] = np.array(int(total), dtype=np.int64)
    if not distinct:
        return out
    # GROUPING_ID over the columns used (in order) has the bit of the j-th one set (from the top) when it is not grouped
    used = sorted({a for c in distinct for a in c}) or [0]
    u = len(used)
    bit = {a: 1 << (u - 1 - j) for j, a in enumerate(used)}
    full = (1 << u) - 1
    gid = {full & ~sum(bit[a] for a in c): c for c in distinct}
    sets = ", ".join("(" + ", ".join(f"c{a}" for a in c) + ")" for c in distinct)
    names = ", ".join(f"c{a}" for a in used)
    coalesced = ", ".join(f"COALESCE(c{a}, 0) AS c{a}" for a in used)
    res = con.execute(
        f"SELECT GROUPING_ID({names}) AS g, {coalesced}, CAST(SUM(n) AS BIGINT) AS n FROM __cells "
        f"GROUP BY GROUPING SETS ({sets})"
    ).fetchnumpy()
    g = np.asarray(res["g"], dtype=np.int64)
    n = np.asarray(res["n"], dtype=np.float64)
    codes = {a: np.asarray(res[f"c{a}"], dtype=np.int64) for a in used}
    # one sort by grouping id, then each marginal from its slice (never a scan per marginal)
    order = np.argsort(g, kind="stable")
    keys, starts = np.unique(g[order], return_index=True)
    ends = np.r_[starts[1:], order.size]
    by_clique = {}
    for key, lo, hi in zip(keys.tolist(), starts.tolist(), ends.tolist()):
        c = gid[key]
        rows = order[lo:hi]
        dims = [sizes[a] for a in c]
        flat = np.ravel_multi_index(tuple(codes[a][rows] for a in c), dims)
        # exact: the counts of one marginal stay far below 2**53
        arr = np.rint(np.bincount(flat, weights=n[rows], minlength=math.prod(dims))).astype(np.int64)
        by_clique[c] = arr.reshape(dims)
    for k, c in enumerate(wanted):
        if c in by_clique:
            out[k] = by_clique[c].copy()
    return out
