"""Magnitude tables: sums of a numeric variable over the published cells, and their largest contributions.

A magnitude table publishes, for every published cell of a :class:`~cellsafe.published.Publication`,
the sum of a value (turnover, income) over its records.  The dominance rules need each published
cell's largest contributions, where a contributor is a holding: an enterprise's records in several
inner cells of one published cell are added up before ranking.  :func:`magnitude_table` reads the
records with DuckDB (one ``GROUP BY`` per inner cell and contributor), and :func:`top_contributions`
expands those sums through X and ranks them per published cell, by sorting, never by a loop over
cells; it spreads only the contributions that can be among a cell's largest.  It is the one
ranking of largest contributions: cell suppression and the cell key method for magnitudes both
read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .._frames import pd
from ..exceptions import DataError, InvalidArgumentError
from ..io import aggregate_contributions
from ..table import CountTable, Hierarchy, encode_cells
from ._spec import Publication, publication_for

__all__ = ["MagnitudeTable", "magnitude_table", "top_contributions"]


def top_contributions(
    X: Any, inner_row: np.ndarray, contributor: np.ndarray, values: np.ndarray, n: int = 2, *, ids: bool = False
) -> tuple[np.ndarray, ...]:
    """The ``n`` largest contributions to each published cell and its number of contributors.

    Parameters
    ----------
    X : sparse matrix, inner cells x published cells
        Which inner cells each published cell adds up (its pattern; the values are not read).
    inner_row, contributor, values : arrays of equal length
        One entry per (inner cell, contributor) with the contributor's value in that cell;
        contributors are numbered from 0.
    n : int
        How many of the largest contributions to keep.
    ids : bool, default False
        Also return who the largest contributor of each cell is.

    Returns
    -------
    top : ndarray (n_published, n)
        Largest contributions first; 0 where a cell has fewer contributors.
    n_contributors : ndarray of int64
        Distinct contributors of each published cell (with a non-zero or zero value).
    largest : ndarray of int64
        With ``ids``: the contributor of each cell's largest contribution (ties: the smallest
        contributor number), -1 for a cell without contributors.

    Notes
    -----
    A contributor's contribution to a published cell is the sum of its values over the inner
    cells the published cell adds up (a holding's records in several inner cells count as one
    contribution).  Contributions are ranked by value, largest first, ties by the smaller
    contributor number.  Only the entries that can reach some published cell's first ``n`` are
    spread over X and ranked: a contributor found in one entry only gives the same value to every
    published cell above its inner cell, so when ``n`` other such contributors of that inner cell
    rank before it, at least ``n`` contributions rank before it in each of those published cells.
    Every entry of a contributor found in several entries is kept, since its parts add up.  The
    result is the same as ranking every contribution (``tests/published/test_top_contributions.py``
    checks it against that ranking written plainly), on about ``n`` entries per inner cell plus the
    holdings instead of one per record.  A holding's parts are added in the order of their inner
    cells, so the order of the entries never changes a sum, even in its last bit.  The dominance rules that read these contributions are
    those of Hundepool et al. (2012), Statistical Disclosure Control, section 4.2.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 1.0]]))
    >>> top, k = top_contributions(X, np.array([0, 1, 1]), np.array([7, 7, 8]), np.array([5.0, 3.0, 4.0]))
    >>> top.tolist(), k.tolist()
    ([[5.0, 0.0], [8.0, 4.0]], [1, 2])
    """
    import scipy.sparse as sp

    Xr = sp.csr_matrix(X)
    inner_row = np.asarray(inner_row, dtype=np.int64)
    contributor = np.asarray(contributor, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if not (inner_row.shape == contributor.shape == values.shape) or inner_row.ndim != 1:
        raise InvalidArgumentError(
            f"inner_row, contributor and values must be 1-d arrays of one length. Got shapes "
            f"{inner_row.shape}, {contributor.shape} and {values.shape}."
        )
    if not np.all(np.isfinite(values)):
        raise InvalidArgumentError("values must be finite numbers (no NaN or infinity); drop or fill the missing ones.")
    if contributor.size and contributor.min() < 0:
        raise InvalidArgumentError(f"contributor must hold contributor numbers >= 0. Got {int(contributor.min())}.")
    if inner_row.size and (inner_row.min() < 0 or inner_row.max() >= Xr.shape[0]):
        raise InvalidArgumentError(f"inner_row must index the {Xr.shape[0]} rows of X. Got values up to {int(inner_row.max())}.")
    n_inner, n_pub = Xr.shape
    keep, dropped = _candidates(inner_row, contributor, values, max(int(n), 1), n_inner)
    inner_row, contributor, values = inner_row[keep], contributor[keep], values[keep]
    n_who = int(contributor.max()) + 1 if contributor.size else 1
    # a holding's parts are added in the order of their inner cells, whatever the order of the entries
    # (DuckDB returns groups in no fixed order): the same sums to the last bit on every run
    if n_who * max(n_inner, 1) < 2**62:
        by_who = np.argsort(contributor * n_inner + inner_row, kind="stable")
    else:
        by_who = np.lexsort((inner_row, contributor))
    inner_row, contributor, values = inner_row[by_who], contributor[by_who], values[by_who]
    per = np.diff(Xr.indptr)[inner_row]
    first = np.repeat(Xr.indptr[inner_row], per)
    within = np.arange(first.shape[0]) - np.repeat(np.cumsum(per) - per, per)
    cell = Xr.indices[first + within]
    who = np.repeat(contributor, per)
    val = np.repeat(values, per)
    # the entries are in contributor order, so a stable sort by published cell alone orders them by
    # (cell, contributor, inner cell); a small integer type lets numpy sort by radix
    small = np.uint16 if n_pub <= 2**16 else np.int32 if n_pub < 2**31 else np.int64
    order = np.argsort(cell.astype(small), kind="stable")
    cell, who, val = cell[order].astype(np.int64), who[order], val[order]
    # a holding's records in several inner cells of one published cell count as one contribution
    if cell.size:
        start = np.flatnonzero(np.r_[True, (cell[1:] != cell[:-1]) | (who[1:] != who[:-1])])
        cell_u, who_u, val_u = cell[start], who[start], np.add.reduceat(val, start)
    else:
        cell_u, who_u, val_u = cell, who, val
    ranked = np.bincount(cell_u, minlength=n_pub).astype(np.int64)
    top = np.zeros((n_pub, n))
    largest = np.full(n_pub, -1, dtype=np.int64)
    if cell_u.size:
        # the first n ranks by n passes of a maximum per published cell (a loop over ranks, not cells)
        present = np.flatnonzero(ranked)
        seg = np.r_[0, np.cumsum(ranked[present])[:-1]]
        seg_of = np.repeat(np.arange(present.size), ranked[present])
        alive = np.ones(val_u.size, dtype=bool)
        for j in range(min(n, int(ranked.max()))):
            work = np.where(alive, val_u, -np.inf)
            best = np.maximum.reduceat(work, seg)
            hit = np.flatnonzero(alive & (work == best[seg_of]))
            # ties: the first hit of a cell is its smallest contributor number (they ascend within a cell)
            s_hit = seg_of[hit]
            chosen = hit[np.r_[True, s_hit[1:] != s_hit[:-1]]]
            top[cell_u[chosen], j] = val_u[chosen]
            if j == 0:
                largest[cell_u[chosen]] = who_u[chosen]
            alive[chosen] = False
    # the contributors left out of the ranking still count, once per published cell above their inner cell
    left_out = np.bincount(Xr.indices, weights=np.repeat(dropped, np.diff(Xr.indptr)).astype(np.float64), minlength=n_pub)
    n_contributors = ranked + np.rint(left_out).astype(np.int64)
    if not ids:
        return top, n_contributors
    return top, n_contributors, largest


def _candidates(row: np.ndarray, contributor: np.ndarray, values: np.ndarray, n: int, n_inner: int) -> tuple[np.ndarray, np.ndarray]:
    """Entries that can be among some published cell's ``n`` largest contributions, and the others' count per inner cell.

    Contributors found in one entry only are ranked within their inner cell by value, largest
    first, ties by the smaller contributor number (the order of :func:`top_contributions`); those
    below the first ``n`` are left out.  Every entry of a contributor found in several is kept.
    """
    single = np.bincount(contributor)[contributor] == 1 if contributor.size else np.zeros(0, dtype=bool)
    idx = np.flatnonzero(single)
    idx = idx[np.lexsort((contributor[idx], -values[idx], row[idx]))]
    r = row[idx]
    first = np.flatnonzero(np.r_[True, r[1:] != r[:-1]]) if r.size else np.zeros(0, dtype=np.int64)
    rank = np.arange(r.size) - np.repeat(first, np.diff(np.r_[first, r.size]))
    keep = np.sort(np.r_[np.flatnonzero(~single), idx[rank < n]])
    return keep, np.bincount(r[rank >= n], minlength=n_inner)


@dataclass(frozen=True, eq=False)
class MagnitudeTable:
    """Sums of a value over the published cells, with what the dominance rules need.

    Attributes
    ----------
    publication : Publication
    table : CountTable
        Record counts of the inner cells (the publication's inner cells are its non-zero cells).
    values : ndarray of float64
        The published sums.
    counts : ndarray of int64
        Records per published cell.
    n_contributors : ndarray of int64
        Distinct contributors (holdings) per published cell.
    top : ndarray (n_published, 2)
        The two largest contributions of each cell.
    value : str
        The name of the summed variable.
    largest : ndarray of int64, optional
        The contributor (a number) of each cell's largest contribution, -1 for none: with
        ``n_contributors == 1``, who alone knows the cell (the singleton problem of suppression).
    inner_values : ndarray of float64, optional
        The sums at the inner cells (rows of X).
    """

    publication: Publication = field(repr=False)
    table: CountTable = field(repr=False)
    values: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    n_contributors: np.ndarray = field(repr=False)
    top: np.ndarray = field(repr=False)
    value: str = "value"
    largest: np.ndarray | None = field(default=None, repr=False)
    inner_values: np.ndarray | None = field(default=None, repr=False)

    def means(self) -> np.ndarray:
        """Mean value per record in each published cell (NaN for empty cells)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.counts > 0, self.values / np.maximum(self.counts, 1), np.nan)

    def to_frame(self) -> pd.DataFrame:
        out = self.publication.cells()
        out[self.value] = self.values
        out["count"] = self.counts
        out["n_contributors"] = self.n_contributors
        return out

    def __repr__(self) -> str:
        return f"MagnitudeTable({self.value!r}, n_published={self.values.shape[0]:,}, n_records={int(self.table.total):,})"


def magnitude_table(
    data: Any,
    variables: Sequence[str],
    value: str,
    formula: Any,
    *,
    contributor: str | None = None,
    hierarchies: Mapping[str, Hierarchy | Sequence[Hierarchy]] | None = None,
    n_top: int = 2,
) -> MagnitudeTable:
    """The magnitude table of ``value`` over the published cells of ``formula``, from records.

    Parameters
    ----------
    data : path to CSV/Parquet, or a DataFrame (pandas, polars, pyarrow)
        One row per record.
    variables : sequence of str
        The crossed variables (inner cells).
    value : str
        The numeric column summed (non-negative).
    formula : str, list of crossings, or Publication
        The published cells (a Publication must be built on the records' inner cells).
    contributor : str, optional
        Contributor id (holdings); without it each record contributes on its own.
    hierarchies : dict, optional
        Hierarchies of the variables, as for :meth:`Publication.from_formula`.
    n_top : int, default 2
        Largest contributions kept per cell (the (n, k) rule needs n of them).

    Examples
    --------
    >>> df = pd.DataFrame({"sector": ["a", "a", "b"], "firm": [1, 2, 3], "turnover": [90.0, 10.0, 5.0]})
    >>> m = magnitude_table(df, ["sector"], "turnover", "sector", contributor="firm")
    >>> m.values.tolist(), m.top[:, 0].tolist(), m.n_contributors.tolist()
    ([105.0, 100.0, 5.0], [90.0, 90.0, 5.0], [3, 2, 1])
    """
    if isinstance(variables, str) or not len(variables):
        raise InvalidArgumentError(f"variables must be a non-empty list of column names. Got {variables!r}.")
    contrib = aggregate_contributions(data, list(variables), value, contributor)
    names = [getattr(v, "name", v) for v in variables]
    vs, flat = encode_cells(contrib.cells, list(variables))
    order = np.argsort(flat, kind="stable")
    flat_sorted = flat[order]
    start = np.flatnonzero(np.r_[True, flat_sorted[1:] != flat_sorted[:-1]])
    cells = flat_sorted[start]
    counts = np.add.reduceat(contrib.counts[order], start)
    table = CountTable(vs, cells, counts)
    if isinstance(formula, Publication):
        pub = publication_for(table, formula)
    else:
        pub = Publication.from_formula(table, formula, zeros=False, hierarchies=hierarchies)
    row = np.searchsorted(pub.inner_index, flat)
    if np.any(row >= pub.n_inner) or np.any(pub.inner_index[np.minimum(row, pub.n_inner - 1)] != flat):
        raise DataError(f"some records of {names} fall outside the publication's inner cells.")
    inner_values = np.bincount(row, weights=contrib.values, minlength=pub.n_inner)
    top, n_contributors, largest = top_contributions(pub.X, row, contrib.contributor, contrib.values, n=n_top, ids=True)
    return MagnitudeTable(
        publication=pub,
        table=table,
        values=pub.aggregate(inner_values),
        counts=pub.aggregate(table),
        n_contributors=n_contributors,
        top=top,
        value=value,
        largest=largest,
        inner_values=inner_values,
    )
