"""CountTable: a sparse contingency table.

A table is its variables (each with ordered categories) and its non-zero cells, stored as
sorted unique flat indices (row-major over the variables, int64) with their counts.  Optional
structural zeros (impossible combinations) are stored the same way.  Memory is proportional to
the non-zero cells, so K, the number of possible cells, may be astronomically large (up to
2**63 - 1).  Counts are int64 for frequency tables; fitted tables (IPF, expected frequencies)
hold float64 counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError, TableTooLargeError
from ._flat import INDEX_DTYPE, group_sum, n_cells_checked, ravel, sorted_unique, unravel
from ._variable import Variable

if TYPE_CHECKING:  # pragma: no cover
    from os import PathLike

__all__ = ["CountTable", "DEFAULT_MAX_DENSE_CELLS", "encode_cells"]

#: The largest K that :meth:`CountTable.dense` and ``to_frame(zeros=True)`` build by default
#: (10**8 cells, 800 MB of int64).
DEFAULT_MAX_DENSE_CELLS = 10**8

VariablesLike = Sequence["str | Variable"] | Mapping[str, Iterable[Hashable]]


def count_column_name(variables: Sequence[str]) -> str:
    """The name of the counts' column beside ``variables``: ``count``, or the first free of n, freq, frequency.

    Examples
    --------
    >>> count_column_name(["sex", "age"]), count_column_name(["count", "n"])
    ('count', 'freq')
    """
    taken = {str(v) for v in variables}
    for name in ("count", "n", "freq", "frequency"):
        if name not in taken:
            return name
    i = 1
    while f"count_{i}" in taken:
        i += 1
    return f"count_{i}"


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class CountTable:
    """A sparse multi-way frequency table.

    Parameters
    ----------
    variables : sequence of Variable
        The table's variables, in the order that defines flat indices (row-major).
    index : array_like of int
        Flat indices of cells with a count (any order; duplicates are summed).
    counts : array_like
        Their counts: non-negative integers, or non-negative floats for fitted tables.
        Cells whose count is zero are dropped (they are random zeros).
    structural_zeros : array_like of int, optional
        Flat indices of impossible cells; they never carry a count.

    Notes
    -----
    Build tables from data with :meth:`from_frame` (long format, one row per record or per
    cell) or :meth:`from_microdata` (a DataFrame, or a CSV/Parquet file aggregated by DuckDB).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": ["F", "M", "F"], "age": ["old", "young", "old"]})
    >>> t = CountTable.from_frame(df, ["sex", "age"])
    >>> t.shape, t.n_cells, t.nnz, t.total
    ((2, 2), 4, 2, 3)
    >>> t.cell_sizes().to_dict()
    {0: 2, 1: 1, 2: 1}
    """

    __slots__ = ("_variables", "_index", "_counts", "_structural", "_n_cells")

    def __init__(
        self,
        variables: Sequence[Variable],
        index: Any,
        counts: Any,
        structural_zeros: Any = None,
    ) -> None:
        variables = tuple(variables)
        for v in variables:
            if not isinstance(v, Variable):
                raise InvalidArgumentError(
                    f"CountTable variables must be cellsafe.Variable objects. Got {type(v).__name__} instead; "
                    "use CountTable.from_frame to build a table from data."
                )
        names = [v.name for v in variables]
        if len(set(names)) != len(names):
            raise InvalidArgumentError(f"CountTable variable names must be distinct. Got {names}.")
        n_cells = n_cells_checked([v.size for v in variables], names)
        idx = np.asarray(index)
        cnt = np.asarray(counts)
        if idx.ndim != 1 or cnt.ndim != 1 or idx.shape != cnt.shape:
            raise InvalidArgumentError(
                f"index and counts must be one-dimensional arrays of equal length. Got shapes {idx.shape} and {cnt.shape}."
            )
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise InvalidArgumentError(f"flat indices must be integers. Got dtype {idx.dtype}.")
        idx = idx.astype(INDEX_DTYPE, copy=False)
        cnt = _as_count_array(cnt)
        if idx.size and (idx.min() < 0 or idx.max() >= n_cells):
            bad = idx[(idx < 0) | (idx >= n_cells)][0]
            raise DataError(f"flat index {bad} is outside the table's {n_cells} cells.")
        if cnt.size and np.any(cnt < 0):
            raise DataError(f"counts must be non-negative. Got {cnt[cnt < 0][0]} at flat index {idx[cnt < 0][0]}.")
        idx, cnt = group_sum(idx, cnt)
        keep = cnt != 0
        idx, cnt = idx[keep], cnt[keep]
        sz = None
        if structural_zeros is not None:
            sz = np.asarray(structural_zeros, dtype=INDEX_DTYPE).ravel()
            if sz.size > 1 and not np.all(sz[1:] > sz[:-1]):  # another table's are already sorted and unique
                sz = sorted_unique(sz)
            if sz.size and (sz[0] < 0 or sz[-1] >= n_cells):
                raise DataError("structural zero flat indices must lie in [0, n_cells).")
            clash = _common_sorted(sz, idx)
            if clash.size:
                self._variables = variables  # for the cell description below
                cell = _describe_cells(variables, clash[:1])[0]
                raise DataError(
                    f"cell ({cell}) is declared a structural zero but has count "
                    f"{cnt[np.searchsorted(idx, clash[0])]}; remove it from the structural zeros or correct the data."
                )
            if sz.size == 0:
                sz = None
        self._variables = variables
        self._index = _frozen(idx)
        self._counts = _frozen(cnt)
        self._structural = None if sz is None else _frozen(sz)
        self._n_cells = n_cells

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(
        cls,
        df: Any,
        variables: VariablesLike,
        count: str | None = None,
        *,
        structural_zeros: Any = None,
        allow_fractional: bool = False,
    ) -> "CountTable":
        """Build a table from a long-format frame.

        Parameters
        ----------
        df : pandas.DataFrame (or a polars / pyarrow table)
            One row per record (``count=None``) or per cell (``count`` names the frequency column;
            rows of the same cell are summed).
        variables : sequence of str or Variable, or mapping of name to categories
            The columns to cross.  A plain name takes its categories from the data, sorted
            (by value when every value is a string spelling a number, so '2' < '10'); a
            :class:`Variable` or a mapping gives them explicitly (values outside them are an error).
        count : str, optional
            The frequency column.
        structural_zeros : DataFrame or array of flat indices, optional
            Impossible cells: a frame with one column per variable, one row per impossible combination.
        allow_fractional : bool, default False
            Accept non-integer counts (fitted or expected tables).

        Returns
        -------
        CountTable
        """
        from .._frames import as_pandas

        df = as_pandas(df, "df")
        specs = _normalise_variables(variables)
        columns = [name for name, _ in specs]
        missing = [c for c in columns + ([count] if count else []) if c not in df.columns]
        if missing:
            raise DataError(
                f"unknown variable {missing[0]!r}: the data have columns {list(map(str, df.columns))}. "
                "Check the spelling of --variables / count."
            )
        if len(df) == 0:
            raise DataError("the input has no rows; a table needs at least one record or cell.")
        out_vars, index = encode_cells(df, variables)
        if count is None:
            counts = np.ones(len(df), dtype=np.int64)
        else:
            counts = _validate_count_column(df, count, columns, allow_fractional)
        table_sz = None
        if structural_zeros is not None:
            table_sz = _structural_index(structural_zeros, out_vars)
        return cls(out_vars, index, counts, table_sz)

    @classmethod
    def from_microdata(
        cls,
        source: "pd.DataFrame | str | PathLike[str]",
        variables: VariablesLike,
        *,
        count: str | None = None,
        structural_zeros: Any = None,
    ) -> "CountTable":
        """Build a table by counting records.

        Parameters
        ----------
        source : DataFrame (pandas, polars, pyarrow), or path to a CSV (optionally gzipped) or Parquet file
            Records are crossed from category codes without a pandas frame of records: a
            Parquet file's dictionary codes and integer values, a frame's columns viewed through
            Arrow, a CSV file's distinct cells from one DuckDB ``GROUP BY`` (see
            :func:`cellsafe.table.keyed_table`); the table is the one :meth:`from_frame` builds.
        variables : sequence of str or Variable, or mapping of name to categories
        count : str, optional
            A frequency column to sum instead of counting rows (the file is a frequency table).
        structural_zeros : optional
            As in :meth:`from_frame`.
        """
        specs = _normalise_variables(variables)
        names = [n for n, _ in specs]
        from_data = all(cats is None for _, cats in specs)
        if isinstance(source, (str,)) or hasattr(source, "__fspath__"):
            from ..io import CodedCells, aggregate_file, aggregate_file_codes, aggregate_parquet_codes

            if from_data:
                coded = aggregate_parquet_codes(source, names, count=count) or aggregate_file_codes(source, names, count)
                if isinstance(coded, CodedCells):
                    return _from_coded(names, coded, structural_zeros)
                frame, count_col = coded
            else:
                frame, count_col = aggregate_file(source, names, count)
            return cls.from_frame(frame, variables, count=count_col, structural_zeros=structural_zeros)
        if from_data:
            from ..io import aggregate_frame_codes

            coded = aggregate_frame_codes(source, names, count=count, arrow_declared=True)
            if coded is not None:
                return _from_coded(names, coded, structural_zeros)
        return cls.from_frame(source, variables, count=count, structural_zeros=structural_zeros)

    @classmethod
    def from_dense(cls, array: Any, variables: Sequence[Variable], structural_zeros: Any = None) -> "CountTable":
        """Build a table from a dense array whose axes follow ``variables``."""
        arr = np.asarray(array)
        variables = tuple(variables)
        if arr.shape != tuple(v.size for v in variables):
            raise InvalidArgumentError(
                f"array shape {arr.shape} does not match the variables' sizes {tuple(v.size for v in variables)}."
            )
        flat = arr.reshape(-1)
        nz = np.flatnonzero(flat)
        return cls(variables, nz, flat[nz], structural_zeros)

    def with_counts(self, index: Any, counts: Any) -> "CountTable":
        """A table on the same variables and structural zeros with other cells and counts."""
        return CountTable(self._variables, index, counts, self._structural)

    @classmethod
    def from_sorted_cells(cls, like: "CountTable", index: np.ndarray, counts: np.ndarray) -> "CountTable":
        """A table on ``like``'s variables and structural zeros from cells already in canonical form.

        For producers whose output is canonical by construction, such as samplers that keep the
        order of the original's sorted cells: the arrays are taken over as they are (made
        read-only in place, not copied, not re-validated), which saves the sort, the copies and
        the checks of :meth:`with_counts`.

        Parameters
        ----------
        like : CountTable
            The table whose variables and structural zeros the new one shares.
        index : ndarray of int64
            Flat indices, strictly increasing, in ``[0, like.n_cells)``, none of them a
            structural zero of ``like``.
        counts : ndarray of int64 or float64
            Their counts, every one positive.

        Returns
        -------
        CountTable

        Notes
        -----
        Only the dtypes, the shapes and the first and last index are checked (O(1)); anything
        else breaks the table's invariants silently.  Data you did not produce yourself go
        through :meth:`with_counts` or the constructor.

        Examples
        --------
        >>> import numpy as np
        >>> from cellsafe import CountTable, Variable
        >>> t = CountTable([Variable("a", (0, 1, 2))], [0, 2], [4, 1])
        >>> CountTable.from_sorted_cells(t, np.array([1, 2]), np.array([3, 5])).equals(t.with_counts([1, 2], [3, 5]))
        True
        """
        return _trusted_table(like._variables, index, counts, like._structural, like._n_cells)

    # ------------------------------------------------------------------ basic attributes
    @property
    def variables(self) -> tuple[Variable, ...]:
        """The variables, in flat-index order."""
        return self._variables

    @property
    def names(self) -> list[str]:
        """The variables' names."""
        return [v.name for v in self._variables]

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of categories of each variable."""
        return tuple(v.size for v in self._variables)

    @property
    def n_cells(self) -> int:
        """K, the number of possible cells (a Python int; may exceed float precision)."""
        return self._n_cells

    @property
    def nnz(self) -> int:
        """Number of cells with a non-zero count."""
        return int(self._index.shape[0])

    @property
    def total(self) -> int | float:
        """The grand total n."""
        if not self.is_integer:
            return float(self._counts.sum())
        if self.nnz and int(self._counts.max()) > (2**63 - 1) // self.nnz:
            # the int64 sum could wrap around; Python integers are exact
            return sum(int(c) for c in self._counts.tolist())
        return int(self._counts.sum())

    @property
    def index(self) -> np.ndarray:
        """Sorted flat indices of the non-zero cells (read-only int64 array)."""
        return self._index

    @property
    def counts(self) -> np.ndarray:
        """Counts of the non-zero cells, aligned with :attr:`index` (read-only)."""
        return self._counts

    @property
    def structural_zeros(self) -> np.ndarray:
        """Sorted flat indices of the structural zeros (possibly empty, read-only)."""
        if self._structural is None:
            return _frozen(np.zeros(0, dtype=INDEX_DTYPE))
        return self._structural

    @property
    def n_structural_zeros(self) -> int:
        return 0 if self._structural is None else int(self._structural.shape[0])

    @property
    def n_random_zeros(self) -> int:
        """Number of possible cells with count zero."""
        return self._n_cells - self.nnz - self.n_structural_zeros

    @property
    def is_integer(self) -> bool:
        """True when counts are integers (a frequency table rather than a fitted one)."""
        return bool(np.issubdtype(self._counts.dtype, np.integer))

    # ------------------------------------------------------------------ views
    def codes(self) -> np.ndarray:
        """An (nnz, p) array of the non-zero cells' category codes."""
        return unravel(self._index, self.shape)

    def lookup(self, index: Any) -> np.ndarray:
        """Counts at arbitrary flat indices (zero where the table has no count)."""
        q = np.asarray(index, dtype=INDEX_DTYPE)
        pos = np.searchsorted(self._index, q)
        pos_c = np.minimum(pos, max(self.nnz - 1, 0))
        hit = (pos < self.nnz) & (self._index[pos_c] == q) if self.nnz else np.zeros(q.shape, bool)
        out = np.zeros(q.shape, dtype=self._counts.dtype)
        out[hit] = self._counts[pos_c[hit]]
        return out

    def to_frame(self, zeros: bool = False, *, max_cells: int = DEFAULT_MAX_DENSE_CELLS) -> pd.DataFrame:
        """Long format: one column per variable (ordered categoricals) and ``count``.

        When a variable is itself named ``count``, the counts take the first free name of
        :func:`count_column_name` (``n``, ``freq``, ...), never overwriting the variable.

        Parameters
        ----------
        zeros : bool, default False
            Include the random zeros (every non-structural cell); refused when K > ``max_cells``.
        """
        if zeros:
            self._check_dense(max_cells, "to_frame(zeros=True)")
            all_idx = np.arange(self._n_cells, dtype=INDEX_DTYPE)
            if self._structural is not None:
                possible = np.ones(self._n_cells, dtype=bool)
                possible[self._structural] = False
                all_idx = all_idx[possible]
            idx, cnt = all_idx, self.lookup(all_idx)
        else:
            idx, cnt = self._index, self._counts
        codes = unravel(idx, self.shape)
        data = {v.name: _categorical(codes[:, j], v) for j, v in enumerate(self._variables)}
        data[count_column_name(self.names)] = np.array(cnt)
        return pd.DataFrame(data)

    def cell_codes(self) -> dict[str, tuple[list[Hashable], np.ndarray]]:
        """The non-zero cells in coded form: per variable, its categories and each cell's category code.

        :meth:`to_frame` without the frame (rows in the same order); a writer formats each
        category once (:func:`cellsafe.io.write_coded_csv`).

        Examples
        --------
        >>> t = CountTable([Variable("a", ("x", "y")), Variable("b", (1, 2, 3))], [1, 5], [4, 2])
        >>> {k: (cats, codes.tolist()) for k, (cats, codes) in t.cell_codes().items()}
        {'a': (['x', 'y'], [0, 1]), 'b': ([1, 2, 3], [1, 2])}
        """
        codes = unravel(self._index, self.shape)
        return {v.name: (list(v.categories), codes[:, j]) for j, v in enumerate(self._variables)}

    def dense(self, *, max_cells: int = DEFAULT_MAX_DENSE_CELLS) -> np.ndarray:
        """The full table as a dense array with one axis per variable.

        Raises
        ------
        TableTooLargeError
            When K exceeds ``max_cells``.
        """
        self._check_dense(max_cells, "dense()")
        out = np.zeros(self._n_cells, dtype=self._counts.dtype)
        out[self._index] = self._counts
        return out.reshape(self.shape)

    def margin(self, variables: Sequence[str] | str) -> "CountTable":
        """The marginal table over ``variables`` (in the order given).

        A margin cell is a structural zero when every inner cell it sums is one.
        """
        names = [variables] if isinstance(variables, str) else list(variables)
        pos = [self._position(n) for n in names]
        if len(set(pos)) != len(pos):
            raise InvalidArgumentError(f"margin variables must be distinct. Got {names}.")
        sub_vars = [self._variables[p] for p in pos]
        sub_shape = [v.size for v in sub_vars]
        sub_cells = n_cells_checked(sub_shape)
        keys = ravel(self.codes()[:, pos], sub_shape)
        idx, cnt = _margin_sum(keys, self._counts, sub_cells)
        sz = None
        if self._structural is not None:
            sk = ravel(unravel(self._structural, self.shape)[:, pos], sub_shape)
            u, c = sorted_unique(sk, return_counts=True)
            sz = u[c == self._n_cells // sub_cells]
            if not sz.size:
                sz = None
        return _trusted_table(tuple(sub_vars), idx, cnt, sz, sub_cells)

    def margin_index(self, variables: Sequence[str]) -> np.ndarray:
        """Flat indices, in the margin over ``variables``, of each non-zero cell (aligned with :attr:`index`)."""
        pos = [self._position(n) for n in variables]
        return ravel(self.codes()[:, pos], [self._variables[p].size for p in pos])

    def to_microdata(self, rng: Any = None) -> pd.DataFrame:
        """One row per record (a cell of count f gives f rows), columns as ordered categoricals.

        Rows come sorted by cell unless ``rng`` is given, in which case they are shuffled (``"secure"``:
        by the operating system's cryptographic generator).
        """
        if not self.is_integer:
            raise DataError("to_microdata needs integer counts; this table holds fitted (fractional) counts.")
        rows = np.repeat(np.arange(self.nnz), self._counts)
        if rng is not None:
            from .._random import as_generator

            rows = as_generator(rng).permutation(rows)  # numpy's or the cryptographic generator's (rng="secure")
        codes = unravel(self._index[rows], self.shape)
        return pd.DataFrame({v.name: _categorical(codes[:, j], v) for j, v in enumerate(self._variables)})

    def cell_sizes(self) -> pd.Series:
        """Number of non-structural cells with each count value, zeros included.

        Computed from the non-zero cells only: the zeros are K - nnz - (structural zeros).
        """
        vals, freq = _value_counts(self._counts)
        zeros = self.n_random_zeros
        if zeros > 0:
            vals = np.r_[np.zeros(1, dtype=vals.dtype), vals]
            freq = np.r_[np.array([zeros], dtype=np.int64), freq.astype(np.int64)]
        s = pd.Series(freq.astype(np.int64), index=pd.Index(vals, name="count"), name="cells")
        return s

    def equals(self, other: object) -> bool:
        """Same variables, cells, counts and structural zeros."""
        return (
            isinstance(other, CountTable)
            and self._variables == other._variables
            and np.array_equal(self._index, other._index)
            and np.array_equal(self._counts, other._counts)
            and np.array_equal(self.structural_zeros, other.structural_zeros)
        )

    def describe_cells(self, index: Any) -> list[str]:
        """Human-readable ``name='category', ...`` descriptions of flat indices (for messages)."""
        return _describe_cells(self._variables, np.asarray(index, dtype=INDEX_DTYPE))

    def __repr__(self) -> str:
        vs = ", ".join(f"{v.name}({v.size})" for v in self._variables)
        total = f"{self.total:,}" if self.is_integer else f"{self.total:,.6g}"
        sz = f", structural_zeros={self.n_structural_zeros:,}" if self._structural is not None else ""
        return f"CountTable([{vs}], n_cells={self._n_cells:,}, nnz={self.nnz:,}, total={total}{sz})"

    def __len__(self) -> int:
        return self.nnz

    # ------------------------------------------------------------------ helpers
    def _position(self, name: str) -> int:
        for j, v in enumerate(self._variables):
            if v.name == name:
                return j
        raise DataError(f"unknown variable {name!r}; the table has variables {self.names}.")

    def _check_dense(self, max_cells: int, what: str) -> None:
        if self._n_cells > max_cells:
            raise TableTooLargeError(
                f"{what} would allocate the full table of {float(self._n_cells):.3g} cells, more than "
                f"max_cells={max_cells:.3g}; use the sparse form (index, counts, to_frame()) or fewer variables."
            )


# ---------------------------------------------------------------------- module helpers
def _trusted_table(
    variables: tuple[Variable, ...], index: np.ndarray, counts: np.ndarray, structural: np.ndarray | None, n_cells: int
) -> CountTable:
    """A table from canonical parts, without validation (see :meth:`CountTable.from_sorted_cells`)."""
    assert index.dtype == INDEX_DTYPE and index.ndim == 1 and index.shape == counts.shape
    assert counts.dtype in (np.int64, np.float64)
    assert index.size == 0 or (index[0] >= 0 and index[-1] < n_cells)
    out = CountTable.__new__(CountTable)
    out._variables = variables
    out._index = _frozen(index)
    out._counts = _frozen(counts)
    out._structural = None if structural is None or not structural.size else _frozen(structural)
    out._n_cells = n_cells
    return out


def _margin_sum(keys: np.ndarray, counts: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct margin cells with their positive summed counts."""
    if n_cells <= 4 * keys.size + 4096 and (counts.dtype != np.int64 or not counts.size or counts.sum() < 2**53):
        # A dense accumulator over the margin's cells: linear, no sort.  float64 sums of int64
        # counts are exact below 2**53.
        sums = np.bincount(keys, weights=counts, minlength=n_cells)
        idx = np.flatnonzero(sums)
        cnt = sums[idx]
        return idx.astype(INDEX_DTYPE, copy=False), cnt.astype(counts.dtype) if counts.dtype == np.int64 else cnt
    idx, cnt = group_sum(keys, counts)
    keep = cnt != 0
    return idx[keep], cnt[keep]


def _value_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of ``values`` and how many cells hold each."""
    if values.size and values.dtype == np.int64 and int(values.max()) <= 4 * values.size + 4096:
        freq = np.bincount(values)
        vals = np.flatnonzero(freq)
        return vals.astype(np.int64, copy=False), freq[vals].astype(np.int64, copy=False)
    return sorted_unique(values, return_counts=True)


def encode_cells(df: Any, variables: VariablesLike) -> tuple[tuple[Variable, ...], np.ndarray]:
    """The variables of ``df``'s columns and the flat index of each row's cell (unsorted).

    Categories come from the data (sorted as in :meth:`CountTable.from_frame`) unless a
    :class:`Variable` or a mapping gives them.  Callers that carry other per-row values (such as
    record-key sums of distinct cells) sort by the index themselves to keep them aligned.

    Examples
    --------
    >>> import pandas as pd
    >>> vs, idx = encode_cells(pd.DataFrame({"a": ["y", "x"], "b": [2, 1]}), ["a", "b"])
    >>> [v.categories for v in vs], idx.tolist()
    ([('x', 'y'), (1, 2)], [3, 0])
    """
    from .._frames import as_pandas

    df = as_pandas(df, "df")
    specs = _normalise_variables(variables)
    columns = [name for name, _ in specs]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataError(
            f"unknown variable {missing[0]!r}: the data have columns {list(map(str, df.columns))}. "
            "Check the spelling of --variables / count."
        )
    codes = np.empty((len(df), len(specs)), dtype=INDEX_DTYPE)
    out_vars = []
    for j, (name, cats) in enumerate(specs):
        var, codes[:, j] = _encode(df, name, cats)
        out_vars.append(var)
    shape = [v.size for v in out_vars]
    n_cells_checked(shape, columns)
    return tuple(out_vars), ravel(codes, shape)


def _from_coded(names: list[str], coded: Any, structural_zeros: Any) -> "CountTable":
    from ._keyed import table_from_codes

    return table_from_codes(names, coded, structural_zeros)[0]


def _common_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elements of sorted unique ``b`` that are also in sorted unique ``a`` (O(len(b) log len(a)))."""
    if a.size == 0 or b.size == 0:
        return b[:0]
    pos = np.minimum(np.searchsorted(a, b), a.size - 1)
    return b[a[pos] == b]


def _as_count_array(cnt: np.ndarray) -> np.ndarray:
    if cnt.size == 0:
        return cnt.astype(np.int64)
    if np.issubdtype(cnt.dtype, np.bool_):
        return cnt.astype(np.int64)
    if np.issubdtype(cnt.dtype, np.integer):
        return cnt.astype(np.int64, copy=False)
    if np.issubdtype(cnt.dtype, np.floating):
        if not np.all(np.isfinite(cnt)):
            raise DataError("counts must be finite numbers; found NaN or infinity.")
        return cnt.astype(np.float64, copy=False)
    raise DataError(f"counts must be numeric. Got dtype {cnt.dtype}.")


def _normalise_variables(variables: VariablesLike) -> list[tuple[str, tuple[Hashable, ...] | None]]:
    if isinstance(variables, str):
        raise InvalidArgumentError(
            f"variables must be a list of names, not the single string {variables!r}; write [{variables!r}]."
        )
    if isinstance(variables, Mapping):
        return [(str(k), None if v is None else tuple(v)) for k, v in variables.items()]
    out: list[tuple[str, tuple[Hashable, ...] | None]] = []
    for v in variables:
        if isinstance(v, Variable):
            out.append((v.name, v.categories))
        elif isinstance(v, str):
            out.append((v, None))
        else:
            raise InvalidArgumentError(f"each variable must be a name or a cellsafe.Variable. Got {v!r}.")
    names = [n for n, _ in out]
    if not names:
        raise InvalidArgumentError("at least one variable is needed to build a table.")
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"variables must be distinct. Got {names}.")
    return out


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _sorted_categories(values: np.ndarray) -> list[Hashable]:
    """Sorted distinct values; strings that all spell numbers ('2', '10', '3.5') sort by value."""
    uniq = list(dict.fromkeys(np.asarray(values, dtype=object).tolist()))  # first-seen order, as pd.unique
    if uniq and all(isinstance(u, str) for u in uniq):
        numbers = [_as_number(u) for u in uniq]
        if all(x is not None for x in numbers):
            return [u for _, u in sorted(zip(numbers, uniq))]
    try:
        return sorted(uniq)
    except TypeError:
        return sorted(uniq, key=lambda x: (type(x).__name__, str(x)))


def _encode(df: pd.DataFrame, name: str, cats: tuple[Hashable, ...] | None) -> tuple[Variable, np.ndarray]:
    col = df[name]
    isna = col.isna().to_numpy()
    if isna.any():
        row = df.index[np.flatnonzero(isna)[0]]
        raise DataError(
            f"variable {name!r} has {int(isna.sum())} missing value(s), the first at row {row!r}; "
            "recode missing values as a category (for example 'Unknown') or drop those rows."
        )
    if isinstance(col.dtype, pd.CategoricalDtype) and cats is None:
        cats = tuple(col.cat.categories)
    # Factorize once (fast, per row), then match only the distinct values to the categories.
    row_codes, uniques = pd.factorize(col, sort=False)
    distinct = np.asarray(uniques, dtype=object)
    if cats is None:
        cats = tuple(_sorted_categories(distinct))
    var = Variable(name, cats)
    lookup = pd.Index(list(cats), dtype=object)
    position = lookup.get_indexer(pd.Index(distinct, dtype=object))
    if np.any(position < 0) and all(isinstance(c, str) for c in cats) and not pd.api.types.is_string_dtype(col):
        position = lookup.get_indexer(pd.Index([str(u) for u in distinct], dtype=object))
    if np.any(position < 0) and all(isinstance(u, str) for u in distinct) and not all(isinstance(c, str) for c in cats):
        # values read as written (text) against declared non-text categories: match on the spelling
        spelled = pd.Index([str(c) for c in cats], dtype=object)
        if spelled.is_unique:
            position = spelled.get_indexer(pd.Index(distinct, dtype=object))
    unknown = np.flatnonzero(position < 0)
    if unknown.size:
        first_row = int(np.flatnonzero(np.isin(row_codes, unknown))[0])
        shown = list(cats) if len(cats) <= 10 else list(cats[:10]) + ["..."]
        raise DataError(
            f"variable {name!r} has value {col.iloc[first_row]!r} at row {df.index[first_row]!r} that is not among "
            f"its categories {shown}; add it to the categories or recode the data."
        )
    codes = position.astype(INDEX_DTYPE)[row_codes]
    return var, codes


def _validate_count_column(df: pd.DataFrame, count: str, columns: list[str], allow_fractional: bool) -> np.ndarray:
    col = df[count]
    where = lambda i: ", ".join(f"{c}={df[c].iloc[i]!r}" for c in columns)  # noqa: E731
    if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
        num = pd.to_numeric(col, errors="coerce")
        bad = np.flatnonzero(num.isna().to_numpy() & col.notna().to_numpy())
        if bad.size:
            raise DataError(
                f"count column {count!r} has a non-numeric value {col.iloc[bad[0]]!r} at row {df.index[bad[0]]!r} "
                f"({where(bad[0])}); counts must be non-negative integers."
            )
        col = num
    values = col.to_numpy(dtype=np.float64, na_value=np.nan)
    nan = np.flatnonzero(np.isnan(values))
    if nan.size:
        raise DataError(
            f"count column {count!r} has a missing value at row {df.index[nan[0]]!r} ({where(nan[0])}); "
            "fill it (0 for an empty cell) or drop the row."
        )
    neg = np.flatnonzero(values < 0)
    if neg.size:
        raise DataError(
            f"count column {count!r} has a negative value {values[neg[0]]:g} at row {df.index[neg[0]]!r} "
            f"({where(neg[0])}); counts must be non-negative."
        )
    if not np.all(np.isfinite(values)):
        i = np.flatnonzero(~np.isfinite(values))[0]
        raise DataError(f"count column {count!r} has an infinite value at row {df.index[i]!r} ({where(i)}).")
    if allow_fractional:
        if pd.api.types.is_integer_dtype(col):
            return col.to_numpy(dtype=np.int64)
        return values
    frac = np.flatnonzero(values != np.floor(values))
    if frac.size:
        raise DataError(
            f"count column {count!r} has a non-integer value {values[frac[0]]:g} at row {df.index[frac[0]]!r} "
            f"({where(frac[0])}); counts must be whole numbers of records."
        )
    if values.size and values.max() >= 2.0**53:
        return col.to_numpy(dtype=np.int64)
    return values.astype(np.int64)


def _structural_index(spec: Any, variables: Sequence[Variable]) -> np.ndarray:
    from .._frames import as_pandas

    if isinstance(spec, np.ndarray) or (isinstance(spec, (list, tuple)) and not hasattr(spec, "columns")):
        return np.asarray(spec, dtype=INDEX_DTYPE)
    df = as_pandas(spec, "structural_zeros")
    names = [v.name for v in variables]
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise DataError(
            f"the structural zeros must list every variable of the table; column {missing[0]!r} is missing "
            f"(they have {list(df.columns)})."
        )
    codes = np.empty((len(df), len(variables)), dtype=INDEX_DTYPE)
    for j, v in enumerate(variables):
        try:
            _, codes[:, j] = _encode(df, v.name, v.categories)
        except DataError as exc:
            raise DataError(f"in the structural zeros: {exc}") from None
    return ravel(codes, [v.size for v in variables])


def _categorical(codes: np.ndarray, var: Variable) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=pd.Index(list(var.categories), dtype=object), ordered=True)


def _describe_cells(variables: Sequence[Variable], index: np.ndarray) -> list[str]:
    codes = unravel(index, [v.size for v in variables])
    return [", ".join(f"{v.name}={v.categories[c]!r}" for v, c in zip(variables, row)) for row in codes]

