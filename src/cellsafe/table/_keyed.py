"""A CountTable of records with the exact record-key sum of each non-zero cell (for the cell key method)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..io import CodedCells, aggregate_frame_codes, aggregate_keyed_codes, aggregate_parquet_codes, aggregate_with_keys
from ._flat import INDEX_DTYPE, n_cells_checked, ravel, unravel
from ._table import CountTable, VariablesLike, _normalise_variables, _sorted_categories, _structural_index, encode_cells
from ._variable import Variable

__all__ = ["KeyedTable", "keyed_table", "table_from_codes"]


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
    With categories from the data, records are crossed from category codes: a Parquet file's
    dictionary codes and integer values (:func:`cellsafe.io.aggregate_parquet_codes`), a frame's
    columns viewed through Arrow (:func:`cellsafe.io.aggregate_frame_codes`), or, for CSV files and
    anything those do not read exactly as DuckDB would, DuckDB's ``GROUP BY`` with the distinct
    cells coded from Arrow.  The same table every way; the records never pass through pandas.
    Declared categories go through DuckDB's frame of distinct cells, matched as
    :meth:`CountTable.from_frame` matches them.

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
        if coded is None:
            coded = aggregate_frame_codes(source, names, record_key, n_keys=n_keys)
        if coded is None:
            coded = aggregate_keyed_codes(source, names, record_key, n_keys=n_keys)
        if isinstance(coded, CodedCells):
            table, sums = table_from_codes(names, coded)
            return KeyedTable(table, sums, coded.integer_keys)
        agg = coded
    else:  # declared categories: the values matched as from_frame matches them
        agg = aggregate_with_keys(source, names, record_key, n_keys=n_keys)
    out_vars, flat = encode_cells(agg.cells, variables)
    order = np.argsort(flat)
    table = CountTable(out_vars, flat[order], agg.counts[order])
    sums = None if agg.key_sums is None else agg.key_sums[order]
    return KeyedTable(table, sums, agg.integer_keys)


def table_from_codes(
    names: list[str], coded: CodedCells, structural_zeros: Any = None
) -> tuple[CountTable, np.ndarray | None]:
    """The table of coded cells, its categories as ``CountTable.from_frame`` gives them, and the key sums.

    Categories are the values met, sorted as from_frame sorts them, except a declared categorical's
    (all its categories, in order).  Cells counted 0 (a count column's zeros) still bring their
    categories, as from_frame's do.  Returns the table and the key sums aligned with its index.
    """
    sizes = [len(d) for d in coded.dictionaries]
    codes = unravel(coded.index, sizes)
    declared = coded.declared or (False,) * len(names)
    out_vars = []
    for j, (name, dictionary) in enumerate(zip(names, coded.dictionaries)):
        if declared[j]:
            out_vars.append(Variable(name, tuple(dictionary)))
            continue
        used = np.flatnonzero(np.bincount(codes[:, j], minlength=sizes[j]))  # a dictionary may hold unused values
        cats = _sorted_categories(np.asarray([dictionary[i] for i in used.tolist()], dtype=object))
        position = {c: i for i, c in enumerate(cats)}
        recode = np.full(sizes[j], -1, dtype=INDEX_DTYPE)
        recode[used] = [position[dictionary[i]] for i in used.tolist()]
        codes[:, j] = recode[codes[:, j]]
        out_vars.append(Variable(name, cats))
    shape = [v.size for v in out_vars]
    n_cells_checked(shape, names)
    flat = ravel(codes, shape)
    order = np.argsort(flat)
    flat, counts = flat[order], coded.counts[order]
    sums = None if coded.key_sums is None else coded.key_sums[order]
    keep = counts != 0
    if not keep.all():  # cells counted 0 were there for their categories only
        flat, counts = flat[keep], counts[keep]
        sums = None if sums is None else sums[keep]
    sz = None if structural_zeros is None else _structural_index(structural_zeros, out_vars)
    return CountTable(out_vars, flat, counts, sz), sums
