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
from typing import Any, Iterator

import numpy as np
from scipy.special import gammaln

from .._params import Param
from .._privacy import PrivacyLoss
from .._registry import register
from .._validation import check_integer, check_real
from ._domain import (
    DEFAULT_MAX_SYNTH_CELLS,
    check_domain_size,
    check_integer_table,
    check_positive_values,
    dense_block,
    dense_outputs,
    non_structural_index,
)
from ..exceptions import DataError
from ..table import INDEX_DTYPE, CountTable
from ._base import table_blocks
from ._dp import DPMechanism
from ._fixed_total import FixedTotalMechanism, GammaBlock, GammaBlocks, fixed_total_loss

__all__ = ["MultinomialDirichletSynthesizer"]

_OWNER = "MultinomialDirichletSynthesizer"
_MATERIALIZE = 1 << 22  # domains up to this many cells keep their blocks in memory across implicates


@register("mechanism", "dirichlet")
class MultinomialDirichletSynthesizer(DPMechanism, FixedTotalMechanism):
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

    Sampling visits the non-structural cells block by block (the flat-index blocks of
    :mod:`cellsafe._random`): theta ~ Dir(y + alpha) is a vector of gamma variates normalized, so
    one implicate is the two-pass scheme of :mod:`cellsafe.mechanisms._fixed_total` with weights
    Gamma(y_i + alpha_i): block sums (:meth:`block_weight_sums`), the total split over blocks
    (:meth:`split_total`), then within each block (:meth:`release_block`).  This is the law of one
    multinomial on the normalized gammas, with memory bounded by the block size, and the same
    ``rng`` gives the same table however the blocks are processed.

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

    def _privacy_loss(self, relation: str, table: Any, delta: Any) -> PrivacyLoss:
        """:meth:`epsilon` of the table's total under replace-one; none under add-remove (the exact total)."""
        return fixed_total_loss(self, relation, table)

    # ------------------------------------------------------------------ sampling (the kernels are inherited)
    _purpose = 0x4D44  # "MD"

    def _check_sample_table(self, table: CountTable) -> int:
        check_integer_table(table, f"{_OWNER}.sample")
        check_domain_size(table, self.max_cells, _OWNER)
        self._check_alpha_length(table)
        return int(table.total)

    def gamma_blocks(self, table: CountTable) -> "GammaBlocks | list[GammaBlock]":
        """Every block's non-structural cells with shapes y_i + alpha_i (scale 1).

        Built once when the domain is small (at most 2**22 cells), otherwise rebuilt on each pass,
        one block at a time, so that memory stays bounded by the block size.
        """
        if table.n_cells - table.n_structural_zeros <= _MATERIALIZE:
            return list(self._iter_gamma_blocks(table))
        return GammaBlocks(lambda: self._iter_gamma_blocks(table))

    def _iter_gamma_blocks(self, table: CountTable) -> Iterator[GammaBlock]:
        alpha = None if np.ndim(self.alpha) == 0 else np.asarray(self.alpha, dtype=float)
        for block in table_blocks(table, with_empty=True):
            cells = np.arange(block.lo, block.hi, dtype=INDEX_DTYPE)
            if block.structural_zeros.size:
                possible = np.ones(cells.size, dtype=bool)
                possible[block.structural_zeros - block.lo] = False
                cells = cells[possible]
            if not cells.size:
                continue
            shape = np.full(cells.size, float(self.alpha)) if alpha is None else alpha[cells]
            shape[np.searchsorted(cells, block.index)] += block.counts
            yield GammaBlock(block.number, cells, shape, np.ones(1))

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
