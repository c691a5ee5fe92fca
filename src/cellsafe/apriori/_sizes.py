"""The input of every a priori metric: a table's cell-size distribution, and argument checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._frames import is_pandas
from ..exceptions import DataError, InvalidArgumentError
from ..mechanisms import CellwiseMechanism
from ..table import CountTable

#: Counts k reported by default (003 Table 4).
DEFAULT_K: tuple[int, ...] = (0, 1, 2, 3)
#: Percentages p reported by default (003 Table 3).
DEFAULT_P: tuple[float, ...] = (0.5, 1.0, 5.0, 10.0, 50.0)


@dataclass(frozen=True, repr=False)
class CellSizes:
    """A cell-size distribution: ``cells[i]`` non-structural cells have count ``values[i]``.

    Attributes
    ----------
    values : numpy.ndarray of int64
        Distinct counts j, sorted, zero included when there are random zeros.
    cells : numpy.ndarray of float64
        Number of cells w_j with each count (tau2(j) = w_j / n_cells).
    """

    values: np.ndarray
    cells: np.ndarray

    @property
    def n_cells(self) -> float:
        """Number of non-structural cells, sum of w_j."""
        return float(self.cells.sum())

    @property
    def total(self) -> float:
        """Grand total n = sum_j j w_j."""
        return float(self.values @ self.cells)

    @property
    def n_zero(self) -> float:
        """Number of random zeros."""
        return float(self.cells[self.values == 0].sum())

    def tau2(self, k: Any) -> np.ndarray:
        """Share of cells with count k (0 for counts not present)."""
        k = np.asarray(k, dtype=np.int64)
        pos = np.clip(np.searchsorted(self.values, k), 0, self.values.size - 1)
        hit = self.values[pos] == k
        return np.where(hit, self.cells[pos], 0.0) / self.n_cells

    def __repr__(self) -> str:
        return (
            f"CellSizes(n_cells={self.n_cells:,.0f}, total={self.total:,.0f}, distinct counts={self.values.size}, "
            f"max count={int(self.values[-1])})"
        )


def cell_sizes(table_or_cell_sizes: Any) -> CellSizes:
    """Normalize a table or a cell-size distribution to :class:`CellSizes`.

    Parameters
    ----------
    table_or_cell_sizes : CountTable, pandas.Series, mapping or CellSizes
        A table with integer counts, or ``count -> number of cells`` (as from
        :meth:`CountTable.cell_sizes`), zeros included.

    Examples
    --------
    >>> cell_sizes({0: 90, 1: 6, 2: 4})
    CellSizes(n_cells=100, total=14, distinct counts=3, max count=2)
    """
    obj = table_or_cell_sizes
    if isinstance(obj, CellSizes):
        return obj
    if isinstance(obj, CountTable):
        if not obj.is_integer:
            raise DataError(
                "a priori metrics need a table of integer counts; this table has fractional counts "
                "(a fitted table?). Round it or use the original frequency table."
            )
        values, cells = _table_cell_sizes(obj)
    else:
        if isinstance(obj, Mapping):
            index, numbers = list(obj), list(obj.values())
        elif is_pandas(obj, "Series"):
            index, numbers = obj.index, obj.to_numpy()
        else:
            raise InvalidArgumentError(
                "Expected a CountTable or a cell-size distribution (a pandas Series or dict mapping count -> number "
                f"of cells). Got {type(obj).__name__} instead."
            )
        try:
            values = np.asarray(index, dtype=np.float64)
            cells = np.asarray(numbers, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidArgumentError("a cell-size distribution must map numeric counts to numbers of cells.") from None
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        raise DataError(
            f"cell-size distribution: counts must be non-negative integers. Got {values[bad][0]!r} as a count."
        )
    bad = ~np.isfinite(cells) | (cells < 0)
    if bad.any():
        raise DataError(
            f"cell-size distribution: numbers of cells must be finite and >= 0. Got {cells[bad][0]!r} cells "
            f"with count {values[bad][0]:g}."
        )
    v = values.astype(np.int64)
    uniq, inv = np.unique(v, return_inverse=True)
    w = np.bincount(inv, weights=cells, minlength=uniq.size)
    keep = w > 0
    if not keep.any():
        raise DataError("cell-size distribution has no cells; a priori metrics need at least one cell.")
    return CellSizes(values=uniq[keep], cells=w[keep])


def _table_cell_sizes(table: CountTable) -> tuple[np.ndarray, np.ndarray]:
    """The counts of a table's non-structural cells and how many cells hold each (as CountTable.cell_sizes(),
    without building its pandas Series)."""
    counts = np.asarray(table.counts)
    if counts.size and counts.min() >= 0 and counts.max() <= 4 * counts.size + 4096:
        freq = np.bincount(counts)
        values = np.flatnonzero(freq)
        freq = freq[values]
    else:
        values, freq = np.unique(counts, return_counts=True)
    zeros = table.n_random_zeros
    if zeros > 0:
        values, freq = np.r_[0, values], np.r_[zeros, freq]
    return values.astype(np.float64), freq.astype(np.float64)


def _check_mechanism(mechanism: Any, owner: str) -> CellwiseMechanism:
    if not isinstance(mechanism, CellwiseMechanism):
        raise InvalidArgumentError(
            f"The 'mechanism' parameter of {owner} must be a cell-wise mechanism (for example "
            f"SaturatedSynthesizer(NBI(sigma=1))). Got {mechanism!r} instead."
        )
    return mechanism


def _check_counts(k: Any, name: str, owner: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(k))
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidArgumentError(f"The {name!r} parameter of {owner} must be a non-empty list of counts. Got {k!r}.")
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InvalidArgumentError(f"The {name!r} parameter of {owner} must hold integer counts >= 0. Got {k!r}.")
    bad = ~np.isfinite(arr.astype(float)) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must hold integer counts >= 0. Got {arr[bad][0]!r} instead."
        )
    return arr.astype(np.int64)


def _check_percentages(p: Any, owner: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
    bad = ~np.isfinite(arr) | (arr < 0)
    if arr.ndim != 1 or arr.size == 0 or bad.any():
        raise InvalidArgumentError(
            f"The 'p' parameter of {owner} must be a non-empty list of percentages >= 0. Got {p!r} instead."
        )
    return arr
