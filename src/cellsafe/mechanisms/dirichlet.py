"""The multinomial-Dirichlet synthesizer (Machanavajjhala et al. 2008, as restated in 004 section 2.1).

Given the original counts y over the K non-structural cells of a table and a prior
alpha > 0, one implicate is

    theta ~ Dirichlet(y + alpha),    z ~ Multinomial(z., theta),    z. = y.,

that is z follows the Dirichlet-multinomial law DM(z.; y + alpha) (004 eq. 2).  The released total
equals the original total (taken as public).  For neighbouring tables that move one event between
two cells the privacy loss is at most log((z. + min alpha) / min alpha), and that bound is attained,
so ``alpha >= z. / (e^epsilon - 1)`` in every cell is necessary and sufficient for epsilon-DP
(004 eq. 5).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import gammaln

from .._params import Param
from .._random import RNGLike, as_seed_sequence, stream
from .._registry import register
from .._validation import check_integer, check_real
from ._domain import (
    DEFAULT_MAX_SYNTH_CELLS,
    blocks,
    check_domain_size,
    check_integer_table,
    check_positive_values,
    dense_block,
    dense_outputs,
    non_structural_index,
)
from ..exceptions import DataError
from ..table import INDEX_DTYPE, CountTable
from ._base import Mechanism

__all__ = ["MultinomialDirichletSynthesizer"]

_OWNER = "MultinomialDirichletSynthesizer"
_PURPOSE = 0x4D44  # stream key of this synthesizer ("MD")


@register("mechanism", "dirichlet")
class MultinomialDirichletSynthesizer(Mechanism):
    """Fixed-total synthesis from the Dirichlet-multinomial posterior predictive.

    Parameters
    ----------
    alpha : float or array_like
        The Dirichlet prior: one positive value for every cell, or an array with one positive
        value per cell of the table (length K, flat-index order; structural zeros ignored).
    max_cells : int, default 50,000,000
        The largest number of non-structural cells :meth:`sample` accepts.  With alpha > 0 every
        such cell can receive events, so each implicate costs time proportional to K.

    Attributes
    ----------
    alpha, max_cells
        As given.

    Notes
    -----
    One implicate is theta ~ Dir(y + alpha) followed by z ~ Mult(z., theta), with z. = y. (004
    section 2.1, eq. 2).  For neighbours x, y with x_1 = y_1 - 1 and x_2 = y_2 + 1 the likelihood
    ratio is (004 eq. 4)

        p(z | y) / p(z | x) = (alpha_2 + y_2) / (alpha_1 + y_1 - 1) * (z_1 + alpha_1 + y_1 - 1) / (z_2 + alpha_2 + y_2),

    largest at z_1 = z., z_2 = 0, y_1 = 1, where it equals (z. + alpha_1) / alpha_1.  Hence the
    guarantee ``epsilon = log(1 + z. / min alpha)`` (004 eq. 5), exact whenever the table has at
    least two cells; :func:`cellsafe.dp.verify_epsilon` confirms it by enumeration on small tables.

    Sampling visits the non-structural cells in blocks of 2**20 flat indices: the Dirichlet draw is
    a vector of gamma variates, the total is first split between blocks by a multinomial on the
    block sums and then within each block, regenerating the block's gammas from its keyed stream.
    This is the same law as one multinomial on the normalized gammas, with memory bounded by the
    block size, and the same ``rng`` gives the same table however the work is split.

    Examples
    --------
    >>> from cellsafe.mechanisms.dirichlet import MultinomialDirichletSynthesizer
    >>> s = MultinomialDirichletSynthesizer.for_epsilon(7.0, total=10_000)
    >>> round(s.alpha, 3)
    9.127
    >>> round(s.epsilon(10_000), 6)
    7.0
    """

    _params = (
        Param("alpha", kind="object", doc="the Dirichlet prior: one positive value, or one per cell"),
        Param("max_cells", kind="integer", low=1, default=DEFAULT_MAX_SYNTH_CELLS, doc="largest domain accepted"),
    )

    def __init__(self, alpha: Any, *, max_cells: int = DEFAULT_MAX_SYNTH_CELLS) -> None:
        check_positive_values(alpha, "alpha", _OWNER)
        check_integer(max_cells, "max_cells", _OWNER, low=1)
        self.alpha = alpha
        self.max_cells = max_cells

    # ------------------------------------------------------------------ calibration
    @classmethod
    def for_epsilon(cls, epsilon: float, total: int, **kwargs: Any) -> "MultinomialDirichletSynthesizer":
        """The synthesizer with the smallest common alpha that gives epsilon-DP for this total.

        Parameters
        ----------
        epsilon : float
            Target privacy loss, > 0.
        total : int
            The released total z. (= the original total y.).

        Returns
        -------
        MultinomialDirichletSynthesizer
            With ``alpha = total / (e^epsilon - 1)`` (004 eq. 5).

        Examples
        --------
        >>> round(MultinomialDirichletSynthesizer.for_epsilon(7, 10_000).alpha, 2)
        9.13
        """
        eps = check_real(epsilon, "epsilon", f"{_OWNER}.for_epsilon", low=0.0, low_open=True)
        n = check_integer(total, "total", f"{_OWNER}.for_epsilon", low=1)
        return cls(n / math.expm1(eps), **kwargs)

    def epsilon(self, total: "int | CountTable") -> float:
        """The privacy loss guaranteed for a released total (004 eq. 5).

        Parameters
        ----------
        total : int or CountTable
            The total z.; a table gives its total (and, for a per-cell alpha, excludes its
            structural zeros from the minimum).

        Returns
        -------
        float
            ``log(1 + total / min alpha)``.
        """
        if isinstance(total, CountTable):
            check_integer_table(total, f"{_OWNER}.epsilon")
            n = int(total.total)
            a_min = self._alpha_min(total)
        else:
            n = check_integer(total, "total", f"{_OWNER}.epsilon", low=0)
            a_min = float(np.min(self.alpha))
        return math.log1p(n / a_min)

    # ------------------------------------------------------------------ sampling
    def sample(self, table: CountTable, m: int = 1, rng: RNGLike = None) -> list[CountTable]:
        """Draw ``m`` synthetic tables with the same total.

        Parameters
        ----------
        table : CountTable
            Integer counts.
        m : int, default 1
            Number of implicates.
        rng : None, int, SeedSequence, Generator or "secure"

        Returns
        -------
        list of CountTable
            On the same variables and structural zeros.

        Notes
        -----
        Each implicate is a release from the same data: ``m`` implicates cost ``m * epsilon``
        by sequential composition (002 section 7.7.1).  Calibrate with epsilon / m per implicate.
        """
        check_integer_table(table, f"{_OWNER}.sample")
        m = check_integer(m, "m", f"{_OWNER}.sample", low=1)
        check_domain_size(table, self.max_cells, _OWNER)
        self._check_alpha_length(table)
        root = as_seed_sequence(rng)
        total = int(table.total)
        out = []
        for k in range(m):
            idx, cnt = self._one(table, total, root, k)
            out.append(table.with_counts(idx, cnt))
        return out

    def _gammas(self, table: CountTable, root: np.random.SeedSequence, k: int, b: int, lo: int, hi: int) -> np.ndarray:
        y, ok = dense_block(table, lo, hi)
        alpha = self.alpha if np.ndim(self.alpha) == 0 else np.asarray(self.alpha, dtype=float)[lo:hi]
        shape = (y + alpha)[ok]
        g = np.zeros(hi - lo)
        g[ok] = stream(root, _PURPOSE, k, b).standard_gamma(shape)
        return g

    def _one(
        self, table: CountTable, total: int, root: np.random.SeedSequence, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        spans = list(blocks(table.n_cells))
        if len(spans) == 1:
            g = self._gammas(table, root, k, 0, 0, table.n_cells)
            z = stream(root, _PURPOSE, k, 1 << 40).multinomial(total, g / g.sum())
            nz = np.flatnonzero(z)
            return nz.astype(INDEX_DTYPE), z[nz].astype(np.int64)
        sums = np.array([self._gammas(table, root, k, b, lo, hi).sum() for b, lo, hi in spans])
        per_block = stream(root, _PURPOSE, k, 1 << 40).multinomial(total, sums / sums.sum())
        idx_parts, cnt_parts = [], []
        for (b, lo, hi), zb in zip(spans, per_block):
            if zb == 0:
                continue
            g = self._gammas(table, root, k, b, lo, hi)
            z = stream(root, _PURPOSE, k, (1 << 40) + 1 + b).multinomial(int(zb), g / g.sum())
            nz = np.flatnonzero(z)
            idx_parts.append(nz.astype(INDEX_DTYPE) + lo)
            cnt_parts.append(z[nz].astype(np.int64))
        return np.concatenate(idx_parts), np.concatenate(cnt_parts)

    # ------------------------------------------------------------------ exact likelihood
    def log_pmf(self, z: Any, table: CountTable) -> np.ndarray:
        """log P(synthetic counts z | original table), exactly (004 eq. 2).

        Parameters
        ----------
        z : array_like of int, shape (..., K)
            Candidate outputs as dense count vectors over all K cells (flat-index order).
        table : CountTable
            The original table (small: K dense cells are built).

        Returns
        -------
        ndarray of shape (...)
            ``-inf`` where z has the wrong total or counts in structural zeros.
        """
        check_integer_table(table, f"{_OWNER}.log_pmf")
        z = dense_outputs(z, table, float)
        self._check_alpha_length(table)
        y, ok = dense_block(table, 0, table.n_cells)
        w = (y + np.broadcast_to(np.asarray(self.alpha, dtype=float), y.shape))[ok]
        zz = z[..., ok]
        total = table.total
        out = (
            gammaln(total + 1.0)
            - gammaln(zz + 1.0).sum(-1)
            + gammaln(w.sum())
            - gammaln(w).sum()
            + gammaln(zz + w).sum(-1)
            - gammaln(total + w.sum())
        )
        bad = (np.abs(z.sum(-1) - total) > 0.5) | (z[..., ~ok] != 0).any(-1) | (z < 0).any(-1)
        return np.where(bad, -np.inf, out)

    # ------------------------------------------------------------------ helpers
    def _support_cells(self, table: CountTable) -> np.ndarray:
        """Flat indices of the cells that can hold events (the non-structural ones)."""
        check_domain_size(table, self.max_cells, _OWNER)
        return non_structural_index(table)

    def _check_alpha_length(self, table: CountTable) -> None:
        if np.ndim(self.alpha) and np.size(self.alpha) != table.n_cells:
            raise DataError(
                f"alpha has {np.size(self.alpha)} values but the table has {table.n_cells} cells; "
                "give one value per cell in flat-index order, or a single value."
            )

    def _alpha_min(self, table: CountTable) -> float:
        if np.ndim(self.alpha) == 0:
            return float(self.alpha)
        self._check_alpha_length(table)
        a = np.asarray(self.alpha, dtype=float)
        if table.n_structural_zeros:
            a = np.delete(a, table.structural_zeros)
        return float(a.min())

    def __repr__(self) -> str:
        a = f"{self.alpha:.6g}" if np.ndim(self.alpha) == 0 else f"array of {np.size(self.alpha)}"
        return f"MultinomialDirichletSynthesizer(alpha={a})"
