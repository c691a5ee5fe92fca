"""A CountTable of records with the exact record-key sum of each non-zero cell (for the cell key method)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..io import aggregate_parquet_codes, aggregate_with_keys
from ._flat import INDEX_DTYPE, ravel, unravel
from ._table import CountTable, VariablesLike, _normalise_variables, _sorted_categories, encode_cells
from ._variable import Variable

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
    the key sums follow the same permutation.  The records are never loaded into pandas.  From a
    Parquet file of text variables (categories from the data), the cells come from the file's
    dictionary codes instead (:func:`cellsafe.io.aggregate_parquet_codes`): the same table, without
    a string per record.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["M", "F", "F"], "key": [7, 200, 100]})
    >>> kt = keyed_table(df, ["sex"], "key", n_keys=256)
    >>> kt.table.counts.tolist(), kt.key_sums.tolist()
    ([2, 1], [44, 7])
    """
    specs = _normalise_variables(variables)
    names = [name for name, _ in specs]
    if all(cats is None for _, cats in specs):
        coded = aggregate_parquet_codes(source, names, record_key, n_keys=n_keys)
        if coded is not None:
            return _from_codes(names, coded)
    agg = aggregate_with_keys(source, names, record_key, n_keys=n_keys)
    out_vars, flat = encode_cells(agg.cells, variables)
    order = np.argsort(flat)
    table = CountTable(out_vars, flat[order], agg.counts[order])
    sums = None if agg.key_sums is None else agg.key_sums[order]
    return KeyedTable(table, sums, agg.integer_keys)


def _from_codes(names: list[str], coded: Any) -> KeyedTable:
    """The table of cells given by dictionary codes: categories sorted as from_frame sorts them."""
    sizes = [len(d) for d in coded.dictionaries]
    codes = unravel(coded.index, sizes)
    out_vars = []
    for j, (name, dictionary) in enumerate(zip(names, coded.dictionaries)):
        used = np.flatnonzero(np.bincount(codes[:, j], minlength=sizes[j]))  # a dictionary may hold unused values
        cats = _sorted_categories(np.asarray([dictionary[i] for i in used], dtype=object))
        position = {c: i for i, c in enumerate(cats)}
        recode = np.full(sizes[j], -1, dtype=INDEX_DTYPE)
        recode[used] = [position[dictionary[i]] for i in used]
        codes[:, j] = recode[codes[:, j]]
        out_vars.append(Variable(name, cats))
    flat = ravel(codes, [v.size for v in out_vars])
    order = np.argsort(flat)
    table = CountTable(out_vars, flat[order], coded.counts[order])
    sums = None if coded.key_sums is None else coded.key_sums[order]
    return KeyedTable(table, sums, coded.integer_keys)
