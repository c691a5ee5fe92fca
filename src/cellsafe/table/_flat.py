"""Flat-index arithmetic for row-major cell indices.

A cell with category codes (c_1, ..., c_p) over variables of sizes (l_1, ..., l_p) has flat index
``sum_j c_j * stride_j`` with ``stride_j = l_{j+1} * ... * l_p``.  Indices are int64, so the number
of possible cells K must stay below 2**63; :func:`n_cells_checked` says so when it does not.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..exceptions import TableTooLargeError

INDEX_DTYPE = np.int64
MAX_CELLS = 2**63 - 1

__all__ = [
    "INDEX_DTYPE",
    "MAX_CELLS",
    "n_cells_checked",
    "strides",
    "ravel",
    "unravel",
    "group_sum",
    "sorted_unique",
    "sorted_union",
    "align_counts",
]


def n_cells_checked(shape: Sequence[int], names: Sequence[str] | None = None) -> int:
    """K = prod(shape) as a Python int, or TableTooLargeError if flat indices would overflow int64."""
    k = math.prod(int(s) for s in shape)
    if k > MAX_CELLS:
        what = f" over variables {', '.join(names)}" if names else ""
        raise TableTooLargeError(
            f"the full table{what} has {float(k):.3g} possible cells, more than the 9.2e18 that a 64-bit "
            "flat index can address; use fewer variables or merge categories"
        )
    return k


def strides(shape: Sequence[int]) -> np.ndarray:
    """Row-major strides (int64)."""
    out = np.ones(len(shape), dtype=INDEX_DTYPE)
    for j in range(len(shape) - 2, -1, -1):
        out[j] = out[j + 1] * int(shape[j + 1])
    return out


def ravel(codes: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Flat indices from an (n, p) array of category codes."""
    codes = np.asarray(codes, dtype=INDEX_DTYPE)
    if codes.ndim != 2 or codes.shape[1] != len(shape):
        raise ValueError("codes must be an (n, p) array matching the shape")
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=INDEX_DTYPE)
    return codes @ strides(shape) if len(shape) else np.zeros(codes.shape[0], dtype=INDEX_DTYPE)


def unravel(index: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """An (n, p) array of category codes from flat indices."""
    index = np.asarray(index, dtype=INDEX_DTYPE)
    out = np.empty((index.shape[0], len(shape)), dtype=INDEX_DTYPE)
    rest = index.copy()
    for j in range(len(shape) - 1, -1, -1):
        rest, out[:, j] = np.divmod(rest, int(shape[j]))
    return out


def group_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and the exact sum of ``values`` within each (integer sums stay integer)."""
    keys = np.asarray(keys, dtype=INDEX_DTYPE)
    values = np.asarray(values)
    if keys.shape[0] == 0:
        return keys.copy(), values[:0].copy()
    if keys.shape[0] > 1 and np.all(keys[1:] > keys[:-1]):
        return keys.copy(), values.copy()
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    return k[starts], np.add.reduceat(values[order], starts)


# Sorting, not np.unique / np.union1d: with numpy 2.4 those are hash-based on int64 and several
# times slower than a stable sort, which merges already-sorted runs (flat indices of tables) in
# linear time.
def sorted_unique(values: np.ndarray, return_counts: bool = False) -> Any:
    """Sorted distinct values (and how often each occurs), by a stable sort.

    Examples
    --------
    >>> sorted_unique(np.array([5, 1, 5, 3]), return_counts=True)
    (array([1, 3, 5]), array([1, 1, 2]))
    """
    x = np.sort(np.asarray(values).ravel(), kind="stable")
    if x.size == 0:
        return (x, np.zeros(0, dtype=np.int64)) if return_counts else x
    first = np.empty(x.size, dtype=bool)
    first[0] = True
    np.not_equal(x[1:], x[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if not return_counts:
        return x[starts]
    return x[starts], np.diff(np.append(starts, x.size)).astype(np.int64)


def sorted_union(*arrays: np.ndarray) -> np.ndarray:
    """The sorted union of sorted flat-index arrays (each sorted; duplicates across them removed).

    Examples
    --------
    >>> sorted_union(np.array([1, 4, 9]), np.array([2, 4]))
    array([1, 2, 4, 9])
    """
    parts = [np.asarray(a, dtype=INDEX_DTYPE) for a in arrays]
    if len(parts) == 1:
        return parts[0].copy()
    return sorted_unique(np.concatenate(parts))


def align_counts(indexes: Sequence[np.ndarray], counts: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The union of several tables' cells and each table's counts on it (zero where absent).

    Parameters
    ----------
    indexes : sequence of ndarray
        Each table's sorted, distinct flat indices.
    counts : sequence of ndarray
        Their counts, aligned with ``indexes``.

    Returns
    -------
    union : ndarray
        The sorted union of the indices.
    aligned : list of ndarray
        For each table, its counts at ``union``.

    Notes
    -----
    One stable sort of the concatenated indices (sorted runs, which the sort merges) instead of
    a binary search per table: linear in the total size.

    Examples
    --------
    >>> u, (f, g) = align_counts([np.array([1, 4]), np.array([2, 4])], [np.array([5, 6]), np.array([7, 8])])
    >>> u, f, g
    (array([1, 2, 4]), array([5, 0, 6]), array([0, 7, 8]))
    """
    keys = np.concatenate([np.asarray(i, dtype=INDEX_DTYPE) for i in indexes])
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    first = np.empty(k.size, dtype=bool)
    first[:1] = True
    np.not_equal(k[1:], k[:-1], out=first[1:])
    union = k[first]
    where = np.empty(keys.size, dtype=np.intp)  # position in the union of every input key
    where[order] = np.cumsum(first) - 1
    aligned, start = [], 0
    for i, c in zip(indexes, counts):
        c = np.asarray(c)
        out = np.zeros(union.size, dtype=c.dtype)
        out[where[start : start + len(i)]] = c
        aligned.append(out)
        start += len(i)
    return union, aligned
