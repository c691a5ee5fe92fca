"""The pairing of an original table with released tables: the cells of each distinct (original, released) pair.

tau1..tau4(k), the share of cells within p%, the trimmed mean percentage difference, the squared
error, the total and the Hellinger distance all sum a function of a cell's pair (f, g) over the
cells, so the number of cells with each distinct pair is all they need.  Each engine pairs the
tables where they live (numpy here, a join and ``GROUP BY f, g`` in Spark) and gives the same
:class:`CellPairs`; :func:`cellsafe.metrics.table_metrics_from_pairs` computes every metric from
them, so both engines report the same numbers, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..exceptions import InvalidArgumentError
from ..table import CountTable, align_counts

__all__ = ["CellPairs", "cell_pairs", "pair_counts"]


@dataclass(frozen=True)
class CellPairs:
    """Per released table, the distinct (original, released) count pairs and how many cells have each.

    Attributes
    ----------
    f, g, cells : list of ndarray of int64
        Per released table (implicate): the pairs over the cells non-zero in either table, sorted
        by (f, g), and the number of cells with each; cells zero in both are not listed.
    n_open : int
        Non-structural cells of the table (the cells zero in both are ``n_open - sum(cells)``).
    total : int
        The original's grand total.
    squared_error_of_mean : float
        sum over cells of (f - the released tables' mean)^2: for integer tables the exact integer
        sum of (m f - sum of the released counts)^2, divided by m^2 once.
    """

    f: list[np.ndarray]
    g: list[np.ndarray]
    cells: list[np.ndarray]
    n_open: int
    total: float
    squared_error_of_mean: float

    @property
    def m(self) -> int:
        """Number of released tables."""
        return len(self.f)


def pair_counts(f: np.ndarray, g: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs of two aligned count arrays, sorted by (f, g), and their number of cells.

    Counts keep their type (integers, or floats for fitted tables); ``weights`` are cells per entry.

    Examples
    --------
    >>> pair_counts(np.array([1, 2, 1]), np.array([0, 2, 0]))
    (array([1, 2]), array([0, 2]), array([2, 1]))
    """
    f = np.asarray(f)
    g = np.asarray(g)
    if f.size == 0:
        return f[:0], g[:0], np.zeros(0, dtype=np.int64)
    if np.issubdtype(f.dtype, np.integer) and np.issubdtype(g.dtype, np.integer) and f.min() >= 0 and g.min() >= 0:
        span = int(g.max()) + 1
        if (int(f.max()) + 1) * span < 2**62:  # one integer key per pair: one sort instead of a lexsort
            key = f.astype(np.int64) * span + g
            if weights is None:
                key = np.sort(key)
                start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
                cells = np.diff(np.r_[start, key.size])
            else:
                order = np.argsort(key, kind="stable")
                key = key[order]
                start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
                cells = np.add.reduceat(np.asarray(weights, dtype=np.int64)[order], start)
            fs, gs = np.divmod(key[start], span)
            return fs.astype(f.dtype, copy=False), gs.astype(g.dtype, copy=False), cells.astype(np.int64)
    order = np.lexsort((g, f))
    fs, gs = f[order], g[order]
    start = np.flatnonzero(np.r_[True, (fs[1:] != fs[:-1]) | (gs[1:] != gs[:-1])])
    w = np.ones(f.size, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)[order]
    return fs[start], gs[start], np.add.reduceat(w, start)


def _sum_squares(d: np.ndarray) -> int:
    """sum d^2 exactly (int64 where it cannot overflow, Python integers otherwise)."""
    if d.size == 0:
        return 0
    top = int(np.max(np.abs(d)))
    if top < 2**31 and top * top * d.size < 2**63:
        return int(np.dot(d, d))
    return sum(int(x) * int(x) for x in d.tolist())


def cell_pairs(original: CountTable, released: CountTable | Sequence[CountTable]) -> CellPairs:
    """The pairing of the local engine: aligned non-zero cells of the original and each released table.

    Examples
    --------
    >>> from cellsafe import CountTable, Variable
    >>> v = [Variable("a", (0, 1, 2, 3))]
    >>> p = cell_pairs(CountTable(v, [0, 1, 2], [1, 2, 5]), CountTable(v, [0, 2, 3], [1, 5, 1]))
    >>> p.f[0].tolist(), p.g[0].tolist(), p.cells[0].tolist(), p.n_open
    ([0, 1, 2, 5], [1, 1, 0, 5], [1, 1, 1, 1], 4)
    """
    syn = [released] if isinstance(released, CountTable) else list(released)
    if not syn:
        raise InvalidArgumentError("cell_pairs needs at least one released table.")
    fs, gs, ws = [], [], []
    for s in syn:
        _, (f, g) = align_counts([original.index, s.index], [original.counts, s.counts])
        a, b, c = pair_counts(f, g)
        fs.append(a)
        gs.append(b)
        ws.append(c)
    _, aligned = align_counts([original.index] + [s.index for s in syn], [original.counts] + [s.counts for s in syn])
    m = len(syn)
    if all(np.issubdtype(np.asarray(a).dtype, np.integer) for a in aligned):
        d = m * np.asarray(aligned[0], dtype=np.int64) - np.sum(np.asarray(aligned[1:], dtype=np.int64), axis=0)
        se_mean = float(_sum_squares(d)) / (m * m)
    else:  # fitted tables: in floating point
        se_mean = float(np.sum((np.mean(np.asarray(aligned[1:], dtype=np.float64), axis=0) - aligned[0]) ** 2))
    return CellPairs(fs, gs, ws, int(original.n_cells - original.n_structural_zeros), float(original.total), se_mean)
