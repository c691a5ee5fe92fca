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
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._random import RNGLike, as_generator
from .._validation import check_integer
from ..exceptions import CellsafeWarning, DataError, InvalidArgumentError
from ..published import Publication
from ..published._spec import publication_for
from ..table import CountTable
from ._base import Mechanism

__all__ = ["SmallCountRounding", "RoundingResult", "round_small_counts"]


@dataclass(frozen=True, eq=False)
class RoundingResult:
    """Result of small count rounding.

    Attributes
    ----------
    publication : Publication
    base : int
    inner_original, inner_rounded : ndarray of int64
        Inner counts (aligned with the publication's inner cells) before and after rounding.
    published_original, published_rounded : ndarray of int64
        Published counts before and after (``X^T`` of the inner counts: additive).
    n_iter : int
        Rounding iterations.
    still_small : ndarray of int
        Published cells whose rounded count is still in 1..b-1 (empty unless the iteration cap was
        reached).
    """

    publication: Publication = field(repr=False)
    base: int
    inner_original: np.ndarray = field(repr=False)
    inner_rounded: np.ndarray = field(repr=False)
    published_original: np.ndarray = field(repr=False)
    published_rounded: np.ndarray = field(repr=False)
    n_iter: int
    still_small: np.ndarray = field(repr=False)

    # ------------------------------------------------------------------ views
    def frame(self) -> pd.DataFrame:
        """Published cells in long format with ``original`` and rounded ``count``."""
        out = self.publication.cells()
        out["original"] = self.published_original
        out["count"] = self.published_rounded
        return out

    def inner_table(self) -> CountTable:
        """The rounded inner cells as a CountTable (hidden from users; 001 Table 5)."""
        v = self.publication.variables
        return CountTable(v, self.publication.inner_index, self.inner_rounded)

    @property
    def n_changed(self) -> int:
        """Number of inner cells whose count changed."""
        return int(np.sum(self.inner_rounded != self.inner_original))

    def summary(self) -> dict[str, float]:
        """Utility of the published cells: Hellinger utility, max, mean absolute and RMS differences."""
        f = self.published_original.astype(np.float64)
        g = self.published_rounded.astype(np.float64)
        d = g - f
        # 001 eqs. 3-4, as cellsafe.metrics.hellinger_utility (a higher layer, so not imported here)
        hd = np.sqrt(0.5 * np.sum((np.sqrt(f) - np.sqrt(g)) ** 2))
        return {
            "hellinger_utility": float(1.0 - hd / np.sqrt(f.sum())) if f.sum() > 0 else float("nan"),
            "max_difference": float(np.max(np.abs(d))) if d.size else 0.0,
            "mean_absolute_difference": float(np.mean(np.abs(d))) if d.size else 0.0,
            "rms_difference": float(np.sqrt(np.mean(d**2))) if d.size else 0.0,
            "total_difference": float(self.inner_rounded.sum() - self.inner_original.sum()),
            "n_changed_inner": float(self.n_changed),
            "n_still_small": float(self.still_small.shape[0]),
        }

    def frequencies(self) -> pd.DataFrame:
        """How many inner and published cells hold each value 0..2b (and more), before and after."""
        b = self.base
        top = 2 * b
        labels = [str(k) for k in range(top + 1)] + [f"{top + 1}+"]

        def freq(a: np.ndarray) -> np.ndarray:
            return np.bincount(np.minimum(a, top + 1), minlength=top + 2)[: top + 2]

        rows = {
            "inner_original": freq(self.inner_original),
            "inner_rounded": freq(self.inner_rounded),
            "published_original": freq(self.published_original),
            "published_rounded": freq(self.published_rounded),
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=labels)

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"RoundingResult(base={self.base}, n_iter={self.n_iter}, changed_inner={self.n_changed}, "
            f"hellinger_utility={s['hellinger_utility']:.4f}, max_difference={s['max_difference']:g}, "
            f"still_small={self.still_small.shape[0]})"
        )


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
) -> tuple[np.ndarray, int, np.ndarray]:
    """The rounding itself on arrays: inner counts aligned with the rows of X.

    Returns the rounded inner counts, the number of iterations and the published cells still in
    1..b-1.  See :class:`SmallCountRounding` for the method.
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
    still = np.flatnonzero((z > 0) & (z < b))
    if still.size:
        warnings.warn(
            f"small count rounding stopped with {still.size} published cell(s) still in 1..{b - 1}; "
            "raise max_iter.",
            CellsafeWarning,
            stacklevel=2,
        )
    return y, n_iter, still


class SmallCountRounding(Mechanism):
    """Small count rounding of the published cells of a formula.

    Parameters
    ----------
    formula : str, list of crossings, or Publication
        The published cells, for example ``'party*age + party*sex'``.
    base : int, default 3
        Rounding base b: no published cell may show 1..b-1.
    max_iter_rows : int, default 1000
        Largest number of candidate inner cells handled in one iteration (a random subset when
        there are more); bounds the memory of the greedy step.
    max_iter : int, default 10000
        Cap on iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> vs = [Variable("a", ["x", "y"]), Variable("b", ["u", "v", "w"])]
    >>> t = CountTable.from_dense(np.array([[1, 5, 0], [2, 7, 4]]), vs)
    >>> res = SmallCountRounding("a*b", base=3).round(t, rng=1)
    >>> sorted(set(res.published_rounded.tolist()) & {1, 2})
    []
    """

    def __init__(
        self,
        formula: str | Sequence[Sequence[str]] | Publication,
        *,
        base: int = 3,
        max_iter_rows: int = 1000,
        max_iter: int = 10_000,
    ) -> None:
        check_integer(base, "base", "SmallCountRounding", low=2)
        check_integer(max_iter_rows, "max_iter_rows", "SmallCountRounding", low=1)
        check_integer(max_iter, "max_iter", "SmallCountRounding", low=1)
        if not isinstance(formula, (str, Publication, list, tuple)):
            raise InvalidArgumentError(
                f"The 'formula' parameter of SmallCountRounding must be a formula, a list of crossings or a "
                f"Publication. Got {type(formula).__name__}."
            )
        self.formula = formula
        self.base = base
        self.max_iter_rows = max_iter_rows
        self.max_iter = max_iter

    def round(self, table: CountTable, rng: RNGLike = None) -> RoundingResult:
        """Round ``table`` (a frequency table with integer counts).

        Returns
        -------
        RoundingResult
        """
        if not isinstance(table, CountTable):
            raise InvalidArgumentError(f"SmallCountRounding.round needs a CountTable. Got {type(table).__name__}.")
        if not table.is_integer:
            raise DataError("small count rounding needs integer counts; this table holds fractional counts.")
        pub = publication_for(table, self.formula)
        published_original = pub.aggregate(table)  # refuses non-zero cells outside the inner cells
        y0 = pub.inner_counts(table).astype(np.int64)
        y, n_iter, still = round_small_counts(
            y0, pub.X, self.base, rng=rng, max_iter_rows=self.max_iter_rows, max_iter=self.max_iter
        )
        return RoundingResult(
            publication=pub,
            base=int(self.base),
            inner_original=y0,
            inner_rounded=y,
            published_original=published_original,
            published_rounded=pub.aggregate(y),
            n_iter=n_iter,
            still_small=still,
        )

    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None) -> list[CountTable]:
        """``m`` rounded inner tables (independent tie-breaking)."""
        m = check_integer(m, "m", "SmallCountRounding.sample", low=1)
        gen = as_generator(rng)
        out = []
        for _ in range(m):
            res = self.round(table, rng=gen)
            out.append(table.with_counts(res.publication.inner_index, res.inner_rounded))
        return out
