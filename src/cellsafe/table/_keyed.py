"""A CountTable of records with the exact record-key sum of each non-zero cell (for the cell key method)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..io import aggregate_with_keys
from ._table import CountTable, VariablesLike, _normalise_variables, encode_cells

__all__ = ["KeyedTable", "keyed_table"]


class KeyedTable(NamedTuple):
    """A table of records and the key sums of its non-zero cells.

    Attributes
    ----------
    table : CountTable
    key_sums : ndarray of uint64 or None
        Aligned with ``table.index``: the sum of the cell's record keys modulo ``n_keys`` (integer
        keys) or modulo 2^53 as 53-bit fixed point (uniform keys); None without a key column.
    integer_keys : bool or None
        True for integer keys, False for uniform keys, None without a key column.
    """

    table: CountTable
    key_sums: np.ndarray | None
    integer_keys: bool | None


def keyed_table(
    source: Any,
    variables: VariablesLike,
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
) -> KeyedTable:
    """Count records per cell and sum their keys exactly in one DuckDB pass, then build the table.

    Parameters
    ----------
    source : path to a CSV or Parquet file, or a pandas / polars DataFrame or pyarrow Table
        One row per record.
    variables : sequence of str or Variable, or mapping of name to categories
        As in :meth:`CountTable.from_frame` (categories from the data unless given).
    record_key : str, optional
        The column of record keys (see :func:`cellsafe.io.aggregate_with_keys`).
    n_keys : int, optional
        Number of integer cell keys (required for integer keys).

    Returns
    -------
    KeyedTable

    Notes
    -----
    Only the distinct cells leave DuckDB; they are encoded once and sorted once by flat index, and
    the key sums follow the same permutation.  The records are never loaded into pandas.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["M", "F", "F"], "key": [7, 200, 100]})
    >>> kt = keyed_table(df, ["sex"], "key", n_keys=256)
    >>> kt.table.counts.tolist(), kt.key_sums.tolist()
    ([2, 1], [44, 7])
    """
    names = [name for name, _ in _normalise_variables(variables)]
    agg = aggregate_with_keys(source, names, record_key, n_keys=n_keys)
    out_vars, flat = encode_cells(agg.cells, variables)
    order = np.argsort(flat)
    table = CountTable(out_vars, flat[order], agg.counts[order])
    sums = None if agg.key_sums is None else agg.key_sums[order]
    return KeyedTable(table, sums, agg.integer_keys)
