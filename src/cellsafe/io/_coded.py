"""Counts and exact record-key sums per cell of a Parquet file, from its dictionary codes.

Parquet stores a text column as a dictionary of its distinct values and one small integer code per
record.  Reading those codes (``read_dictionary``) instead of the strings, one flat index per record
over the dictionaries' sizes and :func:`numpy.bincount` give every cell's count and key sum without
ever comparing or hashing a string per record: the same numbers DuckDB's ``GROUP BY`` gives
(:func:`cellsafe.io.aggregate_with_keys`), several times faster.

The shortcut applies only where it reads the records exactly as DuckDB would: text columns (a
category is its text, no conversion), no missing value, keys of a numeric type and in range, and a
crossing small enough for a dense count vector.  Anything else returns None, and the caller takes
the DuckDB path, whose messages name the offending row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from ._keyed import FLOAT_KEY_BITS

__all__ = ["CodedCells", "aggregate_parquet_codes"]

_PARQUET = (".parquet", ".pq", ".parq")

# A dense count vector over the crossed dictionaries is used up to this many cells, or twice the
# number of records when that is more (two vectors of 8 bytes per cell).
_MAX_DENSE = 1 << 22

# Uniform keys are summed as two halves of their 53-bit fixed-point value, each exact in float64
# for up to 2^(53 - 27) records per cell.
_LOW_BITS = 27


class CodedCells(NamedTuple):
    """The non-empty cells of some records, by their variables' dictionary codes.

    Attributes
    ----------
    dictionaries : list of list of str
        Per variable, the distinct values of the file's dictionary (unified over its row groups), in
        that order; a value may occur in no record.
    index : ndarray of int64
        Flat index of each non-empty cell, row-major over the dictionaries (ascending).
    counts : ndarray of int64
        Number of records of each cell.
    key_sums : ndarray of uint64 or None
        Sum of the cell's record keys modulo ``n_keys`` (integer keys) or the fixed-point sum modulo
        2^53 (uniform keys); None without a key column.
    integer_keys : bool or None
        True for integer keys, False for uniform keys, None without keys.
    """

    dictionaries: list[list[str]]
    index: np.ndarray
    counts: np.ndarray
    key_sums: np.ndarray | None
    integer_keys: bool | None


def _is_parquet_file(source: Any) -> bool:
    if not (isinstance(source, str) or isinstance(source, os.PathLike)):
        return False
    p = Path(source)
    return p.name.lower().endswith(_PARQUET) and p.is_file()


def _text_type(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _view(array: Any) -> np.ndarray:
    """A numpy view of a primitive arrow array without nulls, read from its data buffer.

    (``Array.to_numpy`` would import pandas to look for extension types.)
    """
    import pyarrow as pa

    t = array.type
    kind = "f" if pa.types.is_floating(t) else "i" if pa.types.is_signed_integer(t) else "u"
    dtype = np.dtype(f"{kind}{t.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _codes(column: Any, dictionary: list[str], position: dict[str, int]) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Per chunk of a column, its codes and their map into one dictionary shared by all row groups.

    Values new to ``dictionary`` are appended (earlier positions never move).  Row groups and
    batches carry dictionaries of their own; mapping each small dictionary costs less than unifying
    the chunks' codes.  None when a dictionary holds a missing value.
    """
    parts = []
    for chunk in column.chunks:
        if chunk.dictionary.null_count:
            return None
        local = chunk.dictionary.to_pylist()
        for value in local:
            if value not in position:
                position[value] = len(dictionary)
                dictionary.append(value)
        to_global = np.fromiter((position[value] for value in local), dtype=np.int64, count=len(local))
        parts.append((_view(chunk.indices), to_global))
    return parts


def _product(sizes: Sequence[int]) -> int:
    out = 1
    for size in sizes:
        out *= size
    return out


def aggregate_parquet_codes(
    source: Any,
    variables: Sequence[str],
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
) -> CodedCells | None:
    """Count the records of every non-empty cell and sum their keys, from a Parquet file's codes.

    Parameters
    ----------
    source : path
        A Parquet file (``.parquet``, ``.pq``, ``.parq``).
    variables : sequence of str
        The text columns to cross.
    record_key : str, optional
        The column of record keys: integers 0..n_keys - 1, or uniform numbers in [0, 1).
    n_keys : int, optional
        The number of integer cell keys (required for integer keys).

    Returns
    -------
    CodedCells or None
        None when the shortcut does not apply (not a Parquet file, a variable that is not text, a
        missing value, a key of another type or out of range, too many cells): the caller then
        aggregates with :func:`cellsafe.io.aggregate_with_keys`, which reads the same values and
        reports the problem.

    Notes
    -----
    The file is read one row group at a time: each group's cells are counted by ``bincount`` over
    its flat index, and the groups' cells are merged by one more ``bincount`` over the final
    dictionaries.  Integer key sums are exact in float64 (below 2^53), uniform keys are summed as the high and low halves of ``floor(u * 2^53)`` so
    that each half's sum is exact, and recombined modulo 2^53 in integers.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pq.write_table(pa.table({"sex": ["M", "F", "F"], "key": [7, 200, 100]}), f)
    >>> res = aggregate_parquet_codes(f, ["sex"], "key", n_keys=256)
    >>> res.dictionaries, res.counts.tolist(), res.key_sums.tolist()
    ([['M', 'F']], [1, 2], [7, 44])
    """
    if not _is_parquet_file(source) or isinstance(variables, str) or not len(variables):
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    variables = list(variables)
    try:
        schema = pq.read_schema(source)
    except Exception:  # noqa: BLE001  an unreadable file: DuckDB's reader says why
        return None
    names = schema.names
    wanted = variables + ([record_key] if record_key is not None else [])
    if len(set(names)) != len(names) or len(set(wanted)) != len(wanted) or any(c not in names for c in wanted):
        return None
    if not all(_text_type(schema.field(v).type) for v in variables):
        return None
    integer: bool | None = None
    if record_key is not None:
        kt = schema.field(record_key).type
        integer = bool(pa.types.is_integer(kt))
        if not (integer or pa.types.is_floating(kt)) or (integer and n_keys is None):
            return None
    dictionaries: list[list[str]] = [[] for _ in variables]
    positions: list[dict[str, int]] = [{} for _ in variables]
    # per row group, its non-empty cells (global codes per variable), counts and key sums
    cells: list[list[np.ndarray]] = [[] for _ in variables]
    counts: list[np.ndarray] = []
    sums: list[list[np.ndarray]] = []
    try:
        # ParquetFile reads without the dataset layer (whose import brings pandas); one row group
        # at a time keeps the records' codes small
        with pq.ParquetFile(source, read_dictionary=variables) as pf:
            n = pf.metadata.num_rows
            if n == 0 or (record_key is not None and integer and n * float(n_keys) >= 2.0**53):  # type: ignore[arg-type]
                return None
            if record_key is not None and not integer and n >= 2 ** (53 - _LOW_BITS):
                return None
            for g in range(pf.num_row_groups):
                group = _group_cells(pf.read_row_group(g, columns=wanted), variables, record_key, integer, n_keys,
                                     dictionaries, positions, n)
                if group is None:
                    return None
                if group is False:
                    continue
                codes, cnt, weights = group
                for j in range(len(variables)):
                    cells[j].append(codes[j])
                counts.append(cnt)
                sums.append(weights)
    except Exception:  # noqa: BLE001  a file pyarrow cannot read: DuckDB says why
        return None
    if not counts:
        return None
    sizes = [len(d) for d in dictionaries]
    n_cells = _product(sizes)
    if n_cells > max(_MAX_DENSE, 2 * n):
        return None
    # the row groups' cells merged by one more bincount over the final dictionaries
    flat = np.concatenate(cells[0])
    for j in range(1, len(variables)):
        flat *= sizes[j]
        flat += np.concatenate(cells[j])
    total = np.bincount(flat, weights=np.concatenate(counts).astype(np.float64), minlength=n_cells)
    nz = np.flatnonzero(total)
    key_sums = None
    if record_key is not None:
        merged = [np.bincount(flat, weights=np.concatenate([w[i] for w in sums]), minlength=n_cells)[nz]
                  for i in range(len(sums[0]))]
        if integer:
            key_sums = (merged[0].astype(np.int64) % int(n_keys)).astype(np.uint64)  # type: ignore[arg-type]
        else:
            low, high = (m.astype(np.uint64) for m in merged)
            # modulo 2^64 wrap-around is harmless: 2^53 divides 2^64
            key_sums = ((high << np.uint64(_LOW_BITS)) + low) & np.uint64((1 << FLOAT_KEY_BITS) - 1)
    return CodedCells(dictionaries, nz.astype(np.int64), total[nz].astype(np.int64), key_sums,
                      None if record_key is None else integer)


def _group_cells(
    table: Any,
    variables: list[str],
    record_key: str | None,
    integer: bool | None,
    n_keys: int | None,
    dictionaries: list[list[str]],
    positions: list[dict[str, int]],
    n: int,
) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]] | bool | None:
    """One row group's non-empty cells: global codes per variable, counts and key-sum weights.

    False for an empty group; None when the shortcut does not apply (a missing value, a key out of
    range, too many cells).
    """
    rows = table.num_rows
    if rows == 0:
        return False
    if any(table.column(c).null_count for c in table.column_names):
        return None
    parts = []
    for v, dictionary, position in zip(variables, dictionaries, positions):
        coded = _codes(table.column(v), dictionary, position)
        if coded is None:
            return None
        parts.append(coded)
    sizes = [len(d) for d in dictionaries]  # so far: later groups may add values, never move them
    n_cells = _product(sizes)
    if n_cells > max(_MAX_DENSE, 2 * n):
        return None
    # the flat index built in place, one variable at a time (the columns' chunks need not align)
    flat = np.zeros(rows, dtype=np.int64)
    for j, chunks in enumerate(parts):
        if j:
            flat *= sizes[j]
        start = 0
        for c, to_global in chunks:
            flat[start:start + len(c)] += to_global[c]
            start += len(c)
    del parts
    counts = np.bincount(flat, minlength=n_cells)
    nz = np.flatnonzero(counts)
    weights: list[np.ndarray] = []
    if record_key is not None:
        chunks = [_view(c) for c in table.column(record_key).chunks]
        keys = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
        if integer:
            if keys.min() < 0 or keys.max() > int(n_keys) - 1:  # type: ignore[arg-type]
                return None
            weights = [np.bincount(flat, weights=keys, minlength=n_cells)[nz]]
        else:
            if not np.all(np.isfinite(keys)) or keys.min() < 0 or keys.max() >= 1:
                return None
            fixed = np.floor(keys.astype(np.float64) * float(2**FLOAT_KEY_BITS)).astype(np.uint64)
            weights = [np.bincount(flat, weights=(fixed & np.uint64((1 << _LOW_BITS) - 1)).astype(np.float64),
                                   minlength=n_cells)[nz],
                       np.bincount(flat, weights=(fixed >> np.uint64(_LOW_BITS)).astype(np.float64),
                                   minlength=n_cells)[nz]]
    codes = []
    rest = nz
    for size in reversed(sizes[1:]):
        rest, code = np.divmod(rest, size)
        codes.append(code)
    codes.append(rest)
    return codes[::-1], counts[nz], weights
