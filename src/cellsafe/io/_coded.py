"""Counts and exact record-key sums per cell from category codes: Parquet files and frames in memory.

Crossing records needs a code per record and variable, not the values themselves.  Parquet stores a
text column as a dictionary of its distinct values and one small integer code per record: reading
those codes (``read_dictionary``) costs nothing more.  Integer columns have codes of their own (the
value less the smallest, when the values span a short range) and any other column of a simple type
gets them from Arrow's ``dictionary_encode``, one hash per record in C++.  A frame in memory
(pandas, polars, pyarrow) is read the same way, column by column, without copying what Arrow can
view.  One flat index per record over the dictionaries' sizes and :func:`numpy.bincount` then give
every cell's count and key sum: the same numbers DuckDB's ``GROUP BY`` gives
(:func:`cellsafe.io.aggregate_with_keys`), without ever comparing or hashing a string per record
in Python.

The shortcut applies only where it reads the records exactly as DuckDB (or ``CountTable.from_frame``)
would: categories that are text, integers or booleans, no missing value, keys of a numeric type and
in range, counts that are non-negative integers, and a crossing small enough for a dense count
vector.  Anything else returns None, and the caller takes the DuckDB path, whose messages name the
offending row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from ._keyed import FLOAT_KEY_BITS

__all__ = ["CodedCells", "aggregate_parquet_codes", "coded_rows"]

_PARQUET = (".parquet", ".pq", ".parq")

# A dense count vector over the crossed dictionaries is used up to this many cells, or twice the
# number of records when that is more (two vectors of 8 bytes per cell).
_MAX_DENSE = 1 << 22

# Uniform keys are summed as two halves of their 53-bit fixed-point value, each exact in float64
# for up to 2^(53 - 27) records per cell.
_LOW_BITS = 27

# Records crossed at once (a frame in memory is read in slices of this many rows).
_BATCH = 1 << 20

# Records crossed per block: at least _MIN_BLOCK (and four per cell), at most _MAX_BLOCK; a block's
# flat index and weights live in arrays kept across blocks.
_MIN_BLOCK = 1 << 16
_MAX_BLOCK = 1 << 20

# Integer columns whose values span fewer than this many numbers are coded as value - minimum.
_SHORT_RANGE = 4096


class CodedCells(NamedTuple):
    """The non-empty cells of some records, by their variables' dictionary codes.

    Attributes
    ----------
    dictionaries : list of list
        Per variable, the distinct values met (text, integers or booleans), in order of first
        appearance; a value may occur in no record.
    index : ndarray of int64
        Flat index of each non-empty cell, row-major over the dictionaries (ascending).
    counts : ndarray of int64
        Number of records of each cell (the sum of the count column when one was named; a cell
        whose rows all count 0 is kept with count 0, as its categories are the data's).
    key_sums : ndarray of uint64 or None
        Sum of the cell's record keys modulo ``n_keys`` (integer keys) or the fixed-point sum modulo
        2^53 (uniform keys); None without a key column.
    integer_keys : bool or None
        True for integer keys, False for uniform keys, None without keys.
    declared : tuple of bool
        Per variable, True when its dictionary is a pandas categorical's declared categories:
        every category is kept, in its declared order (as ``CountTable.from_frame`` keeps them).
        False: the categories are the values met, sorted.
    """

    dictionaries: list[list[Any]]
    index: np.ndarray  # type: ignore[assignment]  # a field named like tuple.index: the cells' flat indices
    counts: np.ndarray
    key_sums: np.ndarray | None
    integer_keys: bool | None
    declared: tuple[bool, ...] = ()


# ---------------------------------------------------------------------- types read as DuckDB reads them
def _value_type(t: Any) -> bool:
    """A category type whose values come back from Arrow as DuckDB and pandas give them (str, int, bool)."""
    import pyarrow as pa

    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t)
                or pa.types.is_integer(t) or pa.types.is_boolean(t))


def _is_string_view(t: Any) -> bool:
    import pyarrow as pa

    return bool(getattr(pa.types, "is_string_view", lambda _: False)(t))


def _category_type(t: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return _value_type(t.value_type)
    return _value_type(t)


def _view(array: Any) -> np.ndarray:
    """A numpy view of a primitive arrow array without nulls, read from its data buffer.

    (``Array.to_numpy`` would import pandas to look for extension types.)
    """
    import pyarrow as pa

    t = array.type
    kind = "f" if pa.types.is_floating(t) else "i" if pa.types.is_signed_integer(t) else "u"
    dtype = np.dtype(f"{kind}{t.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


class _Dictionary:
    """One variable's dictionary over all batches: its values in order of first appearance.

    Earlier positions never move, so the codes of earlier batches stay valid.  A batch's own
    dictionary is small (its distinct values): it is matched value by value.
    """

    def __init__(self, declared: bool = False) -> None:
        self.values: list[Any] = []
        self.position: dict[Any, int] = {}
        self.declared = declared

    @property
    def size(self) -> int:
        return len(self.values)

    def positions(self, local: list[Any]) -> np.ndarray | None:
        """The position of each value of a batch's dictionary; None for a missing value or too many values."""
        if len(local) > _MAX_LOCAL:
            return None  # a column of identifiers: DuckDB's hash table is the better tool
        if self.declared:  # a categorical's categories are the dictionary of every chunk
            if not self.values:
                if len(set(local)) != len(local):
                    return None
                self.values = list(local)
            elif local != self.values:
                return None
            return np.arange(len(local), dtype=np.int64)
        position = self.position
        for value in local:
            if value not in position:
                if value is None:
                    return None
                position[value] = len(self.values)
                self.values.append(value)
        return np.fromiter((position[value] for value in local), dtype=np.int64, count=len(local))


# A batch whose own dictionary holds more values than this is left to DuckDB (identifiers, not categories).
_MAX_LOCAL = 1 << 17


def _chunk_codes(chunk: Any, dictionary: _Dictionary) -> tuple[np.ndarray, np.ndarray] | None:
    """A chunk's codes and their map into the variable's dictionary; None when it holds a missing value.

    Text read from Parquet comes with its codes; integers spanning a short range are coded by value
    (value - minimum), the rest by Arrow's hash encoding.
    """
    import pyarrow as pa

    if chunk.null_count:
        return None
    t = chunk.type
    if _is_string_view(t):  # polars' strings: hashed as large strings
        chunk = chunk.cast(pa.large_string())
        t = chunk.type
    if pa.types.is_dictionary(t):
        if chunk.dictionary.null_count:
            return None
        local, codes = chunk.dictionary, _view(chunk.indices)
    elif pa.types.is_integer(t) and len(chunk) and not dictionary.declared:
        values = _view(chunk)
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < _SHORT_RANGE:  # codes by value: no hashing
            if 0 <= lo <= max(16, hi - lo):  # the values are their own codes: no subtraction
                to_global = dictionary.positions(list(range(0, hi + 1)))
                return None if to_global is None else (values, to_global)
            to_global = dictionary.positions(list(range(lo, hi + 1)))
            if to_global is None:
                return None
            if values.dtype.kind == "u" or values.dtype.itemsize == 8:  # no overflow: the codes are below the range
                return values - values.dtype.type(lo), to_global
            return values.astype(np.int64) - lo, to_global
        encoded = chunk.dictionary_encode()
        local, codes = encoded.dictionary, _view(encoded.indices)
    else:
        fixed = _fixed_width_text(chunk) if not pa.types.is_integer(t) and not pa.types.is_boolean(t) else None
        if fixed is not None:  # short text of one width: hashed as the integers its bytes make
            values, width, size = fixed
            if values.ctypes.data % size:  # Arrow's numbers start aligned
                values = values.copy()
            # an Arrow view of the integers (pa.array would import pandas to look for its types)
            ints = pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])
            encoded = ints.dictionary_encode()
            if len(encoded.dictionary) > _MAX_LOCAL:
                return None
            codes = _view(encoded.indices)
            try:
                texts = [v.to_bytes(size, "little")[:width].decode() for v in encoded.dictionary.to_pylist()]
            except UnicodeDecodeError:
                return None
            to_global = dictionary.positions(texts)
            return None if to_global is None else (codes, to_global)
        encoded = chunk.dictionary_encode()
        local, codes = encoded.dictionary, _view(encoded.indices)
    if len(local) > _MAX_LOCAL:
        return None
    to_global = dictionary.positions(local.to_pylist())
    if to_global is None:
        return None
    return codes, to_global


def _fixed_width_text(chunk: Any) -> tuple[np.ndarray, int, int] | None:
    """A text chunk whose values all hold the same number of bytes, 1 to 8, as one unsigned integer per value
    (its bytes zero-padded to 1, 2, 4 or 8, little-endian): equal values, equal integers, and back by
    ``int.to_bytes``.  Hashing these integers costs less than half what hashing the text costs.  None for
    any other chunk (empty text, values of several widths or longer than 8 bytes)."""
    import pyarrow as pa

    n = len(chunk)
    if n == 0 or not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
        return None
    step = np.dtype(np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
    offsets = np.frombuffer(chunk.buffers()[1], dtype=step, count=n + 1, offset=chunk.offset * step.itemsize)
    first, total = int(offsets[0]), int(offsets[-1]) - int(offsets[0])
    width = total // n
    if total != width * n or not 1 <= width <= 8:
        return None
    for lo in range(0, n, _MIN_BLOCK):  # every value of that width (in blocks: no temporary of the chunk's size)
        if not np.all(np.diff(offsets[lo:lo + _MIN_BLOCK + 1]) == width):
            return None
    size = next(b for b in (1, 2, 4, 8) if b >= width)
    if size == width:
        values = np.frombuffer(chunk.buffers()[2], dtype=f"<u{size}", count=n, offset=first)
    else:
        padded = np.zeros((n, size), dtype=np.uint8)
        padded[:, :width] = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=total, offset=first).reshape(n, width)
        values = padded.view(f"<u{size}").reshape(n)
    return values, width, size


def _identity(to_global: np.ndarray) -> bool:
    """True when a chunk's codes are already the dictionary's positions (0, 1, 2, ... map to themselves)."""
    n = to_global.size
    return bool(n and to_global[0] == 0 and to_global[-1] == n - 1
                and np.array_equal(to_global, np.arange(n, dtype=to_global.dtype)))


def _product(sizes: Sequence[int]) -> int:
    out = 1
    for size in sizes:
        out *= size
    return out


class _Crossing:
    """Cells of record batches accumulated over the batches, merged over the final dictionaries."""

    def __init__(self, n_variables: int, declared: Sequence[bool], n_records: int) -> None:
        self.dictionaries = [_Dictionary(d) for d in declared]
        self.cells: list[list[np.ndarray]] = [[] for _ in range(n_variables)]
        self.rows: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.sums: list[list[np.ndarray]] = []
        # the running sums over consecutive batches with the same dictionary sizes, one slot per cell:
        # (sizes, records, counts or None when they are the records, key sums)
        self.running: tuple[list[int], np.ndarray, np.ndarray | None, list[np.ndarray]] | None = None
        self.limit = max(_MAX_DENSE, 2 * n_records)
        self.seen = 0
        self.buffers: dict[str, np.ndarray] = {}

    def _scratch(self, name: str, n: int, dtype: Any) -> np.ndarray:
        """A work array of ``n`` elements kept across blocks and batches (fresh memory costs page faults)."""
        buf = self.buffers.get(name)
        if buf is None or buf.size < n or buf.dtype != dtype:
            buf = self.buffers[name] = np.empty(n, dtype=dtype)
        return buf[:n]

    def add(self, columns: Sequence[Any], weights: np.ndarray | None, key_weights: list[np.ndarray],
            int_keys: np.ndarray | None = None, n_keys: int | None = None) -> bool:
        """Cross one batch: ``columns`` are its variables (arrow arrays or chunked arrays).

        ``weights``: the count of each row (None: 1 each); ``key_weights``: per key part, each
        row's value; or ``int_keys``, each row's integer key in 0..n_keys - 1 (checked by the
        caller).  False when the shortcut does not apply.
        """
        rows = len(columns[0])
        if rows == 0:
            return True
        self.seen += rows
        self.limit = max(self.limit, 2 * self.seen)  # records streamed in: the limit grows with them
        parts = []
        for column, dictionary in zip(columns, self.dictionaries):
            chunks = column.chunks if hasattr(column, "chunks") else [column]
            coded = []
            start = 0
            for chunk in chunks:
                c = _chunk_codes(chunk, dictionary)
                if c is None:
                    return False
                coded.append((start, c[0], c[1], _identity(c[1])))
                start += len(c[0])
            parts.append(coded)
        sizes = [d.size for d in self.dictionaries]  # so far: later batches may add values, never move them
        n_cells = _product(sizes)
        if n_cells > self.limit:
            return False
        n_parts = 1 if int_keys is not None else len(key_weights)
        present: np.ndarray
        counts: np.ndarray | None
        sums: list[np.ndarray]
        run = self.running
        if run is not None and run[0] == sizes and (weights is None) == (run[2] is None):
            # the same cells as the batches before: add to their running sums (the float sums of whole numbers
            # below 2^53 are exact, as the final merge's would be)
            _, present, counts, sums = run
        else:
            self._close_running()
            present = np.zeros(n_cells, dtype=np.int64)
            counts = None if weights is None else np.zeros(n_cells)
            sums = [np.zeros(n_cells) for _ in range(n_parts)]
            self.running = (sizes, present, counts, sums)
        # blocks of rows small enough for the cache, large enough that each block's count vectors cost little
        block = min(rows, _MAX_BLOCK, max(_MIN_BLOCK, 4 * n_cells))
        shift = _packing_shift(block, n_keys) if int_keys is not None and weights is None else None
        for lo in range(0, rows, block):
            hi = min(rows, lo + block)
            flat = self._flat_index(parts, sizes, lo, hi)
            if shift is not None and int_keys is not None:
                # one bincount gives each cell's records and key sum: key + 2^shift per record, exact in float64
                packed = self._scratch("weights", hi - lo, np.float64)
                np.add(int_keys[lo:hi], float(1 << shift), out=packed, casting="unsafe")
                total = np.bincount(flat, weights=packed, minlength=n_cells)
                records = self._scratch("records", n_cells, np.float64)  # in place: no temporaries per cell
                np.multiply(total, 1.0 / (1 << shift), out=records)
                np.floor(records, out=records)
                np.add(present, records, out=present, casting="unsafe")
                np.multiply(records, float(1 << shift), out=records)
                np.subtract(total, records, out=total)
                sums[0] += total
                continue
            present += np.bincount(flat, minlength=n_cells)
            if counts is not None:
                counts += np.bincount(flat, weights=weights[lo:hi], minlength=n_cells)  # type: ignore[index]
            if int_keys is not None:
                w = self._scratch("weights", hi - lo, np.float64)
                np.copyto(w, int_keys[lo:hi], casting="unsafe")
                sums[0] += np.bincount(flat, weights=w, minlength=n_cells)
            else:
                for total, part in zip(sums, key_weights):
                    total += np.bincount(flat, weights=part[lo:hi], minlength=n_cells)
        return True

    def _flat_index(self, parts: list[list[tuple[int, np.ndarray, np.ndarray, bool]]], sizes: list[int],
                    lo: int, hi: int) -> np.ndarray:
        """Rows lo..hi's flat cell index, row-major over the dictionaries (Horner's scheme, in a kept array).

        Each variable's codes are mapped through its dictionary positions (no lookup where they are their
        own positions); the columns' chunks need not align.
        """
        flat = self._scratch("flat", hi - lo, np.int64)
        step = None
        for j, chunks in enumerate(parts):
            if j:
                flat *= sizes[j]
            for start, codes, to_global, identity in chunks:
                a, b = max(lo, start), min(hi, start + len(codes))
                if a >= b:
                    continue
                piece, target = codes[a - start:b - start], flat[a - lo:b - lo]
                if j == 0:
                    if identity:
                        np.copyto(target, piece, casting="unsafe")
                    else:
                        np.take(to_global, piece, out=target, mode="clip")
                elif identity:  # codes below the variable's size: no overflow
                    np.add(target, piece, out=target, casting="unsafe")
                else:
                    if step is None:
                        step = self._scratch("step", hi - lo, np.int64)
                    mapped = step[: b - a]
                    np.take(to_global, piece, out=mapped, mode="clip")
                    target += mapped
        return flat

    def _close_running(self) -> None:
        """Keep the running sums' non-empty cells (their codes by variable) and start no new ones."""
        if self.running is None:
            return
        sizes, present, counts, sums = self.running
        self.running = None
        nz = np.flatnonzero(present)
        self.rows.append(present[nz])
        self.counts.append(self.rows[-1] if counts is None else counts[nz])
        self.sums.append([s[nz] for s in sums])
        self.last = (nz, sizes)
        rest = nz
        digits: list[np.ndarray] = []  # each variable's code of the non-empty cells, last variable first
        for size in reversed(sizes[1:]):
            rest, code = np.divmod(rest, size)
            digits.append(code)
        digits.append(rest)
        for j, code in enumerate(digits[::-1]):
            self.cells[j].append(code)

    def result(self, n_keys: int | None, integer: bool | None) -> "CodedCells | None":
        self._close_running()
        if not self.rows:
            return None
        sizes = [d.size for d in self.dictionaries]
        n_cells = _product(sizes)
        if n_cells > self.limit:
            return None
        if len(self.rows) == 1 and self.last[1] == sizes:  # one batch: its cells are the result
            nz, total, merged = self.last[0], self.counts[0], self.sums[0]
        else:  # the batches' cells merged by one more bincount over the final dictionaries
            flat = np.concatenate(self.cells[0])
            for j in range(1, len(sizes)):
                flat *= sizes[j]
                flat += np.concatenate(self.cells[j])
            present = np.bincount(flat, weights=np.concatenate(self.rows).astype(np.float64), minlength=n_cells)
            nz = np.flatnonzero(present)
            total = np.bincount(flat, weights=np.concatenate(self.counts).astype(np.float64), minlength=n_cells)[nz]
            merged = [np.bincount(flat, weights=np.concatenate([w[i] for w in self.sums]), minlength=n_cells)[nz]
                      for i in range(len(self.sums[0]))]
        key_sums: np.ndarray | None = None
        if integer is not None:
            if integer:
                key_sums = merged[0].astype(np.int64)
                np.remainder(key_sums, int(n_keys), out=key_sums)  # type: ignore[arg-type]
                key_sums = key_sums.view(np.uint64)  # non-negative: the same numbers
            else:
                low, high = (m.astype(np.uint64) for m in merged)
                # modulo 2^64 wrap-around is harmless: 2^53 divides 2^64
                key_sums = ((high << np.uint64(_LOW_BITS)) + low) & np.uint64((1 << FLOAT_KEY_BITS) - 1)
        return CodedCells([d.values for d in self.dictionaries], nz.astype(np.int64, copy=False),
                          total.astype(np.int64, copy=False),
                          key_sums, integer, tuple(d.declared for d in self.dictionaries))


def _packing_shift(rows: int, n_keys: int | None) -> int | None:
    """The power of two that packs a record (2^shift) and its integer key (below 2^shift) into one float64
    weight, so that ``rows`` records' sums stay exact (below 2^53); None when no power fits."""
    if n_keys is None or rows <= 0:
        return None
    shift = max(1, (rows * (int(n_keys) - 1)).bit_length())  # a cell's key sum stays below 2^shift
    return shift if rows * ((1 << shift) + int(n_keys)) < 2**53 else None


def _integer_keys(chunks: list[np.ndarray], n_keys: int) -> np.ndarray | None:
    """Each record's integer key (as stored); None when a key is outside 0..n_keys - 1."""
    keys = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    if not keys.size:
        return keys
    if keys.dtype.kind == "u" or int(n_keys) <= 1 << (8 * keys.dtype.itemsize - 1):
        # one pass: read as unsigned, a negative key is at least 2^(bits - 1), beyond every key in range
        top = int((keys.view(f"u{keys.dtype.itemsize}") if keys.dtype.kind == "i" else keys).max())
        return None if top > int(n_keys) - 1 else keys
    return None if keys.min() < 0 or keys.max() > int(n_keys) - 1 else keys


def _key_weights(chunks: list[np.ndarray]) -> list[np.ndarray] | None:
    """Per half of the uniform keys' fixed-point values, each record's weight; None when a key is out of [0, 1)."""
    keys = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    if not keys.size:
        return [keys.astype(np.float64)] * 2
    if not np.all(np.isfinite(keys)) or keys.min() < 0 or keys.max() >= 1:
        return None
    fixed = np.floor(keys.astype(np.float64) * float(2**FLOAT_KEY_BITS)).astype(np.uint64)
    return [(fixed & np.uint64((1 << _LOW_BITS) - 1)).astype(np.float64),
            (fixed >> np.uint64(_LOW_BITS)).astype(np.float64)]


def _count_weights(chunks: list[np.ndarray]) -> np.ndarray | None:
    """Each row's count as float64 (exact below 2^53); None for a negative count."""
    counts = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    if counts.size and counts.min() < 0:
        return None
    return counts.astype(np.float64)


def _numeric_chunks(column: Any) -> list[np.ndarray] | None:
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    if any(c.null_count for c in chunks):
        return None
    return [_view(c) for c in chunks]


def _cross(
    batches: Iterator[Any],
    variables: list[str],
    record_key: str | None,
    integer: bool | None,
    n_keys: int | None,
    count: str | None,
    declared: Sequence[bool],
    n_records: int,
    key_values: np.ndarray | None = None,
) -> CodedCells | None:
    """Cross arrow record batches (tables) of ``variables`` into coded cells."""
    crossing = _Crossing(len(variables), declared, n_records)
    total = 0.0
    start = 0
    for batch in batches:
        rows = batch.num_rows
        if not all(_category_type(batch.schema.field(v).type) for v in variables):
            return None
        if rows == 0:
            continue
        weights = None
        if count is not None:
            chunks = _numeric_chunks(batch.column(count))
            weights = None if chunks is None else _count_weights(chunks)
            if weights is None:
                return None
            total += float(weights.sum())
            if total >= 2.0**53:  # float sums stop being exact: DuckDB sums in 128 bits
                return None
        key_weights: list[np.ndarray] = []
        int_keys = None
        if integer is not None:
            if key_values is not None:
                chunks = [key_values[start:start + rows]]
            else:
                chunks = _numeric_chunks(batch.column(record_key))  # type: ignore[assignment]
                if chunks is None:
                    return None
            if integer:
                int_keys = _integer_keys(chunks, n_keys)  # type: ignore[arg-type]
                if int_keys is None:
                    return None
            else:
                kw = _key_weights(chunks)
                if kw is None:
                    return None
                key_weights = kw
        if not crossing.add([batch.column(v) for v in variables], weights, key_weights, int_keys, n_keys):
            return None
        start += rows
    return crossing.result(n_keys, integer)


def _key_kind(t: Any, n_keys: int | None) -> bool | None:
    """True for integer keys, False for uniform keys; None for a type DuckDB must judge."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return None if n_keys is None else True
    if pa.types.is_floating(t) and not pa.types.is_float16(t):
        return False
    return None


def _names_ok(names: Sequence[str], variables: list[str], others: list[str]) -> bool:
    wanted = variables + others
    return len(set(names)) == len(names) and len(set(wanted)) == len(wanted) and all(c in names for c in wanted)


# ---------------------------------------------------------------------- Parquet files
def _is_parquet_file(source: Any) -> bool:
    if not (isinstance(source, str) or isinstance(source, os.PathLike)):
        return False
    p = Path(source)
    return p.name.lower().endswith(_PARQUET) and p.is_file()


def aggregate_parquet_codes(
    source: Any,
    variables: Sequence[str],
    record_key: str | None = None,
    *,
    n_keys: int | None = None,
    count: str | None = None,
) -> CodedCells | None:
    """Count the records of every non-empty cell and sum their keys, from a Parquet file's codes.

    Parameters
    ----------
    source : path
        A Parquet file (``.parquet``, ``.pq``, ``.parq``).
    variables : sequence of str
        The columns to cross: text, integers or booleans.
    record_key : str, optional
        The column of record keys: integers 0..n_keys - 1, or uniform numbers in [0, 1).
    n_keys : int, optional
        The number of integer cell keys (required for integer keys).
    count : str, optional
        A column of counts (non-negative integers) summed instead of counting rows.

    Returns
    -------
    CodedCells or None
        None when the shortcut does not apply (not a Parquet file, a variable of another type, a
        missing value, a key or count of another type or out of range, too many cells): the caller
        then aggregates with DuckDB, which reads the same values and reports the problem.

    Notes
    -----
    The file is read one row group at a time: text columns as their dictionary codes, integer
    columns coded by value (or by Arrow's hash encoding when their values span a long range).
    Each group's cells are counted by ``bincount`` over its flat index, and the groups' cells are
    merged by one more ``bincount`` over the final dictionaries.  Integer key sums are exact in
    float64 (below 2^53); uniform keys are summed as the high and low halves of
    ``floor(u * 2^53)`` so that each half's sum is exact, and recombined modulo 2^53 in integers.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pq.write_table(pa.table({"sex": ["M", "F", "F"], "age": [30, 30, 41], "key": [7, 200, 100]}), f)
    >>> res = aggregate_parquet_codes(f, ["sex", "age"], "key", n_keys=256)
    >>> res.dictionaries[0], res.counts.tolist(), res.key_sums.tolist()
    (['M', 'F'], [1, 1, 1], [7, 200, 100])
    >>> res.dictionaries[1][0], res.dictionaries[1][-1]   # integers: codes by value over their range
    (30, 41)
    """
    if not _is_parquet_file(source) or isinstance(variables, str) or not len(variables):
        return None
    import pyarrow as pa

    from ._parquet import open_parquet, parquet_schema

    variables = list(variables)
    try:
        schema = parquet_schema(source)
    except Exception:  # noqa: BLE001  an unreadable file: DuckDB's reader says why
        return None
    others = [c for c in (record_key, count) if c is not None]
    if not _names_ok(schema.names, variables, others):
        return None
    if not all(_category_type(schema.field(v).type) for v in variables):
        return None
    if count is not None and not pa.types.is_integer(schema.field(count).type):
        return None
    integer: bool | None = None
    if record_key is not None:
        integer = _key_kind(schema.field(record_key).type, n_keys)
        if integer is None:
            return None
    text = [v for v in variables if pa.types.is_string(schema.field(v).type) or pa.types.is_large_string(schema.field(v).type)]
    try:
        # the Parquet reader alone (no dataset layer, whose import brings pandas, nor filesystems); one row
        # group at a time keeps the records' codes small
        with open_parquet(source, read_dictionary=text) as pf:
            n = pf.metadata.num_rows
            if n == 0 or (integer and n * float(n_keys) >= 2.0**53):  # type: ignore[arg-type]
                return None
            if integer is False and n >= 2 ** (53 - _LOW_BITS):
                return None
            groups = (pf.read_row_group(g, columns=variables + others) for g in range(pf.num_row_groups))
            return _cross(groups, variables, record_key, integer, n_keys, count, [False] * len(variables), n)
    except Exception:  # noqa: BLE001  a file pyarrow cannot read: DuckDB says why
        return None


# ---------------------------------------------------------------------- distinct rows (DuckDB's GROUP BY)
def coded_rows(table: Any, variables: Sequence[str], counts: np.ndarray, key_sums: np.ndarray | None = None,
               integer_keys: bool | None = None) -> CodedCells | None:
    """The coded cells of an Arrow table holding one row per distinct cell (a ``GROUP BY`` result).

    Parameters
    ----------
    table : pyarrow.Table
        One row per distinct combination of ``variables`` (no missing value).
    variables : sequence of str
    counts : ndarray of int64
        The count of each row.
    key_sums, integer_keys
        The key sum of each row, already reduced, and the key kind.

    Returns
    -------
    CodedCells or None
        None when a variable's type is not read back as DuckDB's pandas frames read it (text,
        integers and booleans are), or a value is missing.
    """
    variables = list(variables)
    if not all(_category_type(table.schema.field(v).type) for v in variables):
        return None
    dictionaries = [_Dictionary() for _ in variables]
    flat = np.zeros(table.num_rows, dtype=np.int64)
    codes_by_var = []
    for v, dictionary in zip(variables, dictionaries):
        column = table.column(v)
        coded = []
        for chunk in column.chunks:
            c = _chunk_codes(chunk, dictionary)
            if c is None:
                return None
            coded.append(c)
        codes_by_var.append(coded)
    sizes = [d.size for d in dictionaries]
    for j, chunks in enumerate(codes_by_var):
        if j:
            flat *= sizes[j]
        start = 0
        for codes, to_global in chunks:
            flat[start:start + len(codes)] += to_global[codes]
            start += len(codes)
    order = np.argsort(flat, kind="stable")
    flat = flat[order]
    if flat.size > 1 and not np.all(flat[1:] > flat[:-1]):
        return None  # two rows of one cell: the rows were not distinct
    return CodedCells([d.values for d in dictionaries], flat, np.asarray(counts, dtype=np.int64)[order],
                      None if key_sums is None else np.asarray(key_sums)[order], integer_keys,
                      (False,) * len(variables))
