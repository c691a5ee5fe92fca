"""Small count rounding (SCR) of published tables (Langsrud and Heldal 2018; 001 section 2).

Inner cells are rounded to multiples of a base b (small ones to 0 or b) so that no published cell
shows a count in 1..b-1, with as few inner cells changed as possible and the grand total kept close
to the original.  Published cells are sums of rounded inner cells, so the published table is
additive by construction.

The algorithm (the "PLS" rounding of the R package SmallCountRounding): in each iteration the
candidate inner cells are the small ones (1..b-1) inside published cells that are small (1..b-1).
Of these, ``nR = round((sum of candidates + total correction) / b)`` are rounded up to b and the
rest down to 0.  They are chosen greedily: the score of a candidate is the sum, over the published
cells it belongs to, of what those cells still need (their original small part, plus the correction
from earlier iterations, minus b for each candidate already rounded up there); the best candidate is
rounded up and the scores of its neighbours are lowered, and a backward-forward pass then swaps a
rounded-up cell with a better one until no swap helps.  Rounding can make new published cells small,
so the iterations continue until none is.  Ties are broken at random (``rng``), which is the only
randomness.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from .._catalog import declared
from .._progress import progress_bar
from .._random import RNGLike, as_generator
from .._registry import register
from .._validation import check_integer
from ..exceptions import CellsafeWarning, DataError
from ..published import Publication, PublishedTable, check_publication_spec
from ..table import CountTable
from ._base import Mechanism
from ._listing import check_listing, listed_publication

__all__ = ["SmallCountRounding", "round_small_counts"]


def _greedy(Xs: sp.csr_matrix, target: np.ndarray, n_up: int, b: int, gen: np.random.Generator, max_swaps: int) -> np.ndarray:
    """Choose ``n_up`` rows to round up to b (True), greedily with backward-forward swaps."""
    n = Xs.shape[0]
    up = np.zeros(n, dtype=bool)
    if n_up <= 0:
        return up
    if n_up >= n:
        return ~up
    score = np.asarray(Xs @ target, dtype=np.float64).reshape(-1)
    G = (Xs @ Xs.T).toarray().astype(np.float64) * b
    perm = gen.permutation(n)  # random tie-breaking: the first maximum in a random order
    rank = np.empty(n, dtype=np.int64)
    rank[perm] = np.arange(n)
    when = np.full(n, -1, dtype=np.int64)  # order in which rows were rounded up
    clock = 0

    def best_down() -> int:
        vals = np.where(up, score, np.inf)[perm]
        return int(perm[np.argmin(vals)])

    def best_up() -> int:
        vals = np.where(up, -np.inf, score)[perm]
        return int(perm[np.argmax(vals)])

    for _ in range(n_up):
        k = best_up()
        up[k] = True
        when[k] = clock
        clock += 1
        score -= G[:, k]
    for _ in range(max_swaps):
        k = best_down()
        if when[k] == when[up].max():  # the weakest is the one just added: no improving swap
            break
        up[k] = False
        when[k] = -1
        score += G[:, k]
        k2 = best_up()
        up[k2] = True
        when[k2] = clock
        clock += 1
        score -= G[:, k2]
    return up


def round_small_counts(
    inner: Any,
    X: Any,
    base: int = 3,
    *,
    rng: RNGLike = None,
    max_iter_rows: int = 1000,
    max_iter: int = 10_000,
    progress: bool = False,
) -> tuple[np.ndarray, int, np.ndarray]:
    """The rounding itself on arrays: inner counts aligned with the rows of X.

    Returns the rounded inner counts, the number of iterations and the published cells still in
    1..b-1.  See :class:`SmallCountRounding` for the method.  ``progress`` shows a bar of the
    iterations (and the published cells still in 1..b-1) on standard error.
    """
    y = np.asarray(inner)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise DataError("small count rounding needs integer inner counts.")
    if y.size and y.min() < 0:
        raise DataError("inner counts must be non-negative.")
    b = check_integer(base, "base", "SmallCountRounding", low=2)
    Xs = sp.csr_matrix(X, dtype=np.float64)
    if Xs.shape[0] != y.shape[0]:
        raise DataError(f"X has {Xs.shape[0]} rows but there are {y.shape[0]} inner counts.")
    XT = Xs.T.tocsr()
    Xi = Xs.astype(np.int64)
    gen = as_generator(rng)
    y = y.astype(np.int64).copy()
    total_exact = int(y.sum())
    z_exact = np.asarray(Xi.T @ y).reshape(-1)
    z = z_exact.copy()
    small_pub = (z > 0) & (z < b)
    touch = np.asarray(Xs[:, small_pub].sum(axis=1)).reshape(-1) > 0
    pending = touch & (y % b != 0) & (y < b)  # first-iteration candidates
    n_iter = 0
    bar = progress_bar(None, progress, "rounding", unit="iteration")
    while n_iter < max_iter:
        if n_iter > 0:
            small_pub = (z > 0) & (z < b)
            if not small_pub.any() and not pending.any():
                break
            touch = np.asarray(XT[small_pub].sum(axis=0)).reshape(-1) > 0 if small_pub.any() else np.zeros_like(pending)
            cand = pending | (touch & (y > 0) & (y < b))
        else:
            cand = pending.copy()
        idx = np.flatnonzero(cand)
        if idx.size == 0:
            break
        n_iter += 1
        if idx.size > max_iter_rows:
            idx = np.sort(gen.choice(idx, size=max_iter_rows, replace=False))
        pending[idx] = False
        rows = Xs[idx]
        colsum = np.asarray(rows.sum(axis=0)).reshape(-1)
        cols = np.flatnonzero((colsum > 0) & (colsum < idx.size))
        sub = rows[:, cols]
        small = y[idx] % b
        basepart = y[idx] - small
        correction = (z_exact - z)[cols]
        target = np.asarray(sub.T @ small).reshape(-1) + correction
        n_up = int(np.floor((small.sum() + total_exact - y.sum()) / b + 0.5))
        n_up = min(max(n_up, 0), idx.size)
        if cols.size == 0:
            up = np.zeros(idx.size, dtype=bool)
            up[gen.choice(idx.size, size=n_up, replace=False)] = True
        else:
            up = _greedy(sub, target.astype(np.float64), n_up, b, gen, max_swaps=n_up + 100)
        new = basepart + np.where(up, b, 0)
        y[idx] = new
        z = np.asarray(Xi.T @ y).reshape(-1)
        bar.update(1)
        if progress:
            bar.set_postfix(small=int(np.count_nonzero((z > 0) & (z < b))), refresh=False)
    bar.close()
    still = np.flatnonzero((z > 0) & (z < b))
    if still.size:
        warnings.warn(
            f"small count rounding stopped with {still.size} published cell(s) still in 1..{b - 1}; "
            "raise max_iter.",
            CellsafeWarning,
            stacklevel=2,
        )
    return y, n_iter, still


@register("mechanism", "scr")
class SmallCountRounding(Mechanism):
    """Small count rounding of the published cells of a formula.

    Parameters
    ----------
    publication : str, list of crossings, or Publication
        The published cells, for example ``'party*age + party*sex'``.
    base : int, default 3
        Rounding base b: no published cell may show 1..b-1.
    max_iter_rows : int, default 1000
        Largest number of candidate inner cells handled in one iteration (a random subset when
        there are more); bounds the memory of the greedy step.
    max_iter : int, default 10000
        Cap on iterations.
    list : {'frame', 'nonzero'}, default 'frame'
        Which cells the release lists: every cell of every crossing, empty ones included (each
        combination of categories is an inner cell, as R's ``extend0``), or only the cells with a
        non-empty inner cell.  A listing of non-empty cells tells the reader that a listed 0 holds
        1 to b-1 in truth; it warns when the release has such cells.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> vs = [Variable("a", ["x", "y"]), Variable("b", ["u", "v", "w"])]
    >>> t = CountTable.from_dense(np.array([[1, 5, 0], [2, 7, 4]]), vs)
    >>> [res] = SmallCountRounding("a*b", base=3).sample(t, rng=1)
    >>> sorted(set(res.released.tolist()) & {1, 2})
    []
    """

    _params = declared("mechanism", "scr")

    def __init__(
        self,
        publication: str | Sequence[Sequence[str]] | Publication,
        *,
        base: int = 3,
        max_iter_rows: int = 1000,
        max_iter: int = 10_000,
        list: str = "frame",  # noqa: A002  the issue's and the command line's name (--list)
    ) -> None:
        self.publication = publication
        self.base = base
        self.max_iter_rows = max_iter_rows
        self.max_iter = max_iter
        self.list = list
        self._check_params()
        check_listing(list, "SmallCountRounding")
        check_publication_spec(publication, "SmallCountRounding")

    _integer_counts = True

    def _sample(self, table: CountTable, m: int, rng: RNGLike, progress: bool) -> list[PublishedTable]:
        """``m`` roundings of ``table``'s publication (independent tie-breaking), with the rounded inner
        cells in ``inner_released`` (``inner_table()``); ``progress`` shows a bar of the rounding's
        iterations on standard error."""
        gen = as_generator(rng)
        pub = listed_publication(table, self.publication, self.list)
        published_original = pub.aggregate(table)  # refuses non-zero cells outside the inner cells
        y0 = pub.inner_counts(table).astype(np.int64)
        out = []
        for _ in range(m):
            y, n_iter, _still = round_small_counts(
                y0, pub.X, self.base, rng=gen, max_iter_rows=self.max_iter_rows, max_iter=self.max_iter,
                progress=progress,
            )
            released = pub.aggregate(y).astype(np.float64)
            if self.list == "nonzero" and np.any(released == 0):
                warnings.warn(
                    f"{int(np.sum(released == 0))} listed cell(s) are released as 0: with a listing of non-empty cells "
                    f"a reader knows each holds 1 to {self.base - 1} in truth; list the frame (list='frame', the default).",
                    CellsafeWarning,
                    stacklevel=2,
                )
            out.append(
                PublishedTable(
                    publication=pub,
                    original=published_original,
                    released=released,
                    method="scr",
                    mechanism=repr(self),
                    inner_original=y0,
                    inner_released=y,
                    n_iter=n_iter,
                    listing=self.list,
                )
            )
        return out
