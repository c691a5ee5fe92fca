"""Counts and key sums per cell of records in memory (pandas, polars, pyarrow), from category codes.

The frame's columns are viewed through Arrow without a copy where Arrow allows (numbers, Arrow
strings, a categorical's codes) and crossed as a Parquet file's row groups are
(:mod:`cellsafe.io._coded`): the same cells, counts and key sums as DuckDB's ``GROUP BY`` over the
frame, or as ``CountTable.from_frame``.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ._coded import _BATCH, _LOW_BITS, CodedCells, _category_type, _cross, _key_kind, _names_ok

__all__ = ["aggregate_frame_codes"]


def _pandas_column(series: Any) -> tuple[Any, bool] | None:
    """A pandas column as an Arrow array (a view where Arrow allows) and whether it is a declared categorical."""
    import pandas as pd
    import pyarrow as pa

    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        if not (pd.api.types.is_string_dtype(cats.dtype) or pd.api.types.is_integer_dtype(cats.dtype)
                or pd.api.types.is_bool_dtype(cats.dtype)):
            return None
        codes = np.asarray(series.cat.codes)
        if codes.size and codes.min() < 0:
            return None
        try:
            dictionary = pa.array(list(cats), type=pa.string() if pd.api.types.is_string_dtype(cats.dtype) else None)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        return pa.DictionaryArray.from_arrays(pa.array(codes), dictionary), True
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return pa.array(np.asarray(series)), False
    if not isinstance(dtype, np.dtype) and (pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
        # nullable integers and booleans (Int64, boolean, ArrowDtype): their values as Arrow holds them; a missing
        # value goes to DuckDB, which says where it is
        try:
            array = pa.array(series.array)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            return None
        return (array, False) if not array.null_count else None
    if pd.api.types.is_string_dtype(dtype) or dtype == np.dtype(object):
        try:
            array = (pa.array(series.to_numpy(), type=pa.string()) if dtype == np.dtype(object)
                     else pa.array(series.array))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            return None  # mixed or non-text objects: pandas' and DuckDB's own rules apply
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            return None
        return array, False
    return None


def _numbers(series: Any) -> np.ndarray | None:
    """A pandas column of keys or counts as a numpy array of numbers (nullable types without a missing value too)."""
    import pandas as pd

    dtype = series.dtype
    if not isinstance(dtype, np.dtype):
        numpy_dtype = getattr(dtype, "numpy_dtype", None)  # Int64, Float64, ArrowDtype of a number
        if numpy_dtype is None or numpy_dtype.kind not in "iuf" or series.isna().any():
            return None
        values = series.to_numpy(dtype=numpy_dtype)
    else:
        values = series.to_numpy()
    return values if values.dtype.kind in "iuf" and not pd.api.types.is_bool_dtype(values.dtype) else None


def _as_arrow_table(frame: Any, columns: list[str], n_categories: int,
                    arrow_declared: bool) -> tuple[Any, list[bool]] | None:
    """The named columns of a pandas, polars or pyarrow frame as an Arrow table, and which are declared."""
    import pyarrow as pa

    try:
        import pandas as pd  # noqa: F401  (only when a frame is given: pandas is then loaded already)
    except ImportError:  # pragma: no cover
        pd = None  # type: ignore[assignment]
    if pd is not None and isinstance(frame, pd.DataFrame):
        names = [str(c) for c in frame.columns]
        if len(set(names)) != len(names) or any(not isinstance(c, str) for c in frame.columns):
            return None
        arrays, declared = [], []
        for i, c in enumerate(columns):
            if i >= n_categories:  # keys and counts: numbers as they are
                values = _numbers(frame[c])
                if values is None:
                    return None
                arrays.append(pa.array(values))
                declared.append(False)
                continue
            got = _pandas_column(frame[c])
            if got is None:
                return None
            arrays.append(got[0])
            declared.append(got[1])
        return pa.table(arrays, names=columns), declared
    if isinstance(frame, (pa.Table, pa.RecordBatch)):
        table = frame
    elif hasattr(frame, "to_arrow") and type(frame).__module__.startswith("polars"):
        try:
            table = frame.select(columns).to_arrow()
        except Exception:  # noqa: BLE001  polars' own error: the DuckDB path reports it
            return None
    else:
        return None
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if len(set(table.column_names)) != len(table.column_names):
        return None
    declared = [arrow_declared and pa.types.is_dictionary(table.schema.field(c).type) for c in columns]
    return table.select(columns), declared


def aggregate_frame_codes(
    frame: Any,
    variables: Sequence[str],
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
    count: str | None = None,
    key_values: Any = None,
    arrow_declared: bool = False,
) -> CodedCells | None:
    """:func:`aggregate_parquet_codes` for records in memory: a pandas or polars DataFrame or a pyarrow Table.

    Parameters
    ----------
    frame : pandas.DataFrame, polars.DataFrame, pyarrow.Table or RecordBatch
        One row per record (or per cell with ``count``).
    variables, record_key, n_keys, count
        As for :func:`aggregate_parquet_codes`.
    key_values : array, optional
        One record key per row, instead of a key column.
    arrow_declared : bool, default False
        Read an Arrow dictionary column (a polars categorical) as declared categories, every one
        kept in dictionary order, as ``CountTable.from_frame`` reads it through pandas; by default
        its categories are the values met, as DuckDB reads them.

    Returns
    -------
    CodedCells or None
        None where the records are not read exactly as DuckDB or ``CountTable.from_frame`` reads
        them (other column types, missing values, keys or counts out of range, too many cells).

    Notes
    -----
    pandas columns become Arrow arrays without a copy where Arrow can view them (numbers, Arrow
    strings, a categorical's codes); text in object columns is converted once.  A pandas
    categorical keeps its declared categories, as ``CountTable.from_frame`` does.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["M", "F", "F"], "age": [30, 30, 41]})
    >>> res = aggregate_frame_codes(df, ["sex", "age"])
    >>> res.dictionaries[0], res.counts.tolist()
    (['M', 'F'], [1, 1, 1])
    >>> res.dictionaries[1][0], res.dictionaries[1][-1]   # integers: codes by value over their range
    (30, 41)
    """
    if isinstance(variables, str) or not len(variables) or isinstance(frame, (str, os.PathLike)):
        return None
    import pyarrow as pa

    variables = list(variables)
    others = [c for c in (record_key, count) if c is not None]
    try:
        names = list(frame.column_names) if isinstance(frame, (pa.Table, pa.RecordBatch)) else [str(c) for c in frame.columns]
    except Exception:  # noqa: BLE001  not a frame: the caller's own checks say so
        return None
    if not _names_ok(names, variables, others):
        return None
    got = _as_arrow_table(frame, variables + others, len(variables), arrow_declared)
    if got is None:
        return None
    table, declared = got
    declared = declared[: len(variables)]
    schema = table.schema
    if not all(_category_type(schema.field(v).type) for v in variables):
        return None
    if count is not None and not pa.types.is_integer(schema.field(count).type):
        return None
    integer: bool | None = None
    keys = None
    if key_values is not None:
        keys = np.asarray(key_values)
        if keys.shape != (table.num_rows,) or keys.dtype.kind not in "iuf":
            return None
        integer = (None if n_keys is None else True) if keys.dtype.kind in "iu" else False
        if integer is None:
            return None
    elif record_key is not None:
        integer = _key_kind(schema.field(record_key).type, n_keys)
        if integer is None:
            return None
    n = table.num_rows
    if n == 0 or (integer and n * float(n_keys) >= 2.0**53):  # type: ignore[arg-type]
        return None
    if integer is False and n >= 2 ** (53 - _LOW_BITS):
        return None
    batches = (table.slice(start, _BATCH) for start in range(0, n, _BATCH))
    try:
        return _cross(batches, variables, record_key, integer, n_keys, count, declared, n, keys)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
