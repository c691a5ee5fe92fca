"""Saturated count-model synthesis: the (sigma, alpha) mechanism of 003 and its GAF variant of 000.

Each non-structural cell i is replaced by an independent draw f_i^syn ~ D(mu_i), where mu_i is the
original count f_i for non-zero cells and the pseudocount alpha for random zeros.  000's alternative
for random zeros, ``zeros_to_ones = p``, turns each random zero into a 1 with probability p.
Structural zeros never change.

Work is proportional to the non-zero cells: the random zeros that become non-zero are drawn as a
binomial count, uniformly placed among the random zeros, with values from D(alpha) truncated to
k >= 1 (methods.md section 3).  Sampling is the generic block kernel of
:class:`~cellsafe.mechanisms.CellwiseMechanism` (streams keyed by purpose, implicate and block of
flat indices), so the output does not depend on how the work is chunked or distributed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .._catalog import declared
from .._registry import register
from ..distributions import CountDistribution
from ..exceptions import InvalidArgumentError
from ._base import CellwiseMechanism

__all__ = ["SaturatedSynthesizer"]

@register("mechanism", "saturated")
class SaturatedSynthesizer(CellwiseMechanism):
    """Synthesize a table cell by cell from a saturated count model.

    Parameters
    ----------
    distribution : CountDistribution
        The noise family: ``Poisson()``, ``NBI(sigma)``, ``PIG(sigma)`` or ``GAF(sigma, nu)``.
    alpha : float, default 0
        Pseudocount: the mean used for random zeros.  With ``alpha = 0`` random zeros stay zero.
    zeros_to_ones : float in [0, 1], default 0
        000's alternative to ``alpha``: each random zero becomes 1 with this probability.  Use one
        of ``alpha`` and ``zeros_to_ones``, not both.

    Notes
    -----
    003 section 3 (mechanism, pseudocount, structural zeros) and 000 section 3 (GAF noise, and
    the Bernoulli zeros-to-ones alternative for nu < 0, where a small alpha gives an exploding
    variance sigma^2 alpha^nu).  E[n_syn] = n + alpha x (number of random zeros): margins are
    unbiased only for alpha = 0.

    A table with fractional counts (for example a fitted log-linear table) is accepted: its counts
    are used as the cells' means mu.

    Examples
    --------
    >>> import cellsafe
    >>> t = cellsafe.datasets.esc_like()
    >>> synth = SaturatedSynthesizer(cellsafe.NBI(sigma=1.0))
    >>> [s] = synth.sample(t, rng=1)
    >>> s.n_cells == t.n_cells
    True
    """

    _purpose = 0x5341  # "SA"
    _params = declared("mechanism", "saturated")

    def __init__(self, distribution: CountDistribution, alpha: float = 0.0, zeros_to_ones: float = 0.0) -> None:
        self.distribution = distribution
        self.alpha = alpha
        self.zeros_to_ones = zeros_to_ones
        if not isinstance(distribution, CountDistribution):
            raise InvalidArgumentError(
                "The 'distribution' parameter of SaturatedSynthesizer must be a cellsafe count distribution "
                f"(Poisson(), NBI(sigma), PIG(sigma) or GAF(sigma, nu)). Got {distribution!r} instead."
            )
        self._check_params()
        if alpha > 0 and zeros_to_ones > 0:
            raise InvalidArgumentError(
                "alpha and zeros_to_ones are alternative treatments of random zeros; set one of them to 0. "
                f"Got alpha={alpha!r} and zeros_to_ones={zeros_to_ones!r}."
            )

    # ------------------------------------------------------------------ sampling hooks
    def _draw(self, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        # a table's non-zero counts are finite and positive: no re-checking per block
        return self.distribution.sample_positive(np.asarray(counts, dtype=np.float64), gen)

    def zero_release_probability(self) -> float:
        return self._zero_law().p_positive

    def _draw_from_zero(self, size: int, gen: np.random.Generator) -> np.ndarray:
        if self.zeros_to_ones > 0:
            return np.ones(size, dtype=np.int64)
        return self._zero_law().draw(self.distribution, float(self.alpha), size, gen)

    def _zero_law(self) -> "_PositiveZeroLaw":
        return _zero_law(self.distribution, float(self.alpha), float(self.zeros_to_ones))

    # ------------------------------------------------------------------ transition probabilities
    def _mu(self, j: np.ndarray) -> np.ndarray:
        # random zeros use alpha; when alpha = 0 any positive placeholder works (overwritten below)
        return np.where(j > 0, j, self.alpha if self.alpha > 0 else 1.0).astype(np.float64)

    def _transition_pmf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released = k | original = j); j = 0 is a random zero (mean alpha, or zeros_to_ones)."""
        out = np.asarray(self.distribution.pmf(k, self._mu(j)), dtype=np.float64)
        zero = j == 0
        if np.any(zero) and not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(zero, np.where(k == 0, 1.0 - p, np.where(k == 1, p, 0.0)), out)
        return out

    def transition_pmf_rows(self, k: Any, row: Any, j: Any) -> np.ndarray:
        """P(released = k_i | original = j[row_i]): many released counts on few original counts.

        Whole rows of the transition matrix, as the a priori metrics sum them; the distribution
        evaluates them from tables shared by the rows where it can
        (:meth:`~cellsafe.distributions.CountDistribution.pmf_rows`).  ``k`` and ``j`` are
        integers >= 0.
        """
        j = np.asarray(j, dtype=np.int64)
        row = np.asarray(row, dtype=np.intp)
        k = np.asarray(k)
        out = self.distribution.pmf_rows(k, row, self._mu(j))
        zero = j == 0
        if zero.any() and not self.alpha > 0:
            p = float(self.zeros_to_ones)
            at = zero[row]
            out = np.where(at, np.where(k == 0, 1.0 - p, np.where(k == 1, p, 0.0)), out)
        return out

    def transition_tails_closed_form(self) -> bool:
        """Whether :meth:`transition_sf` is a closed form (two evaluations price any range of counts)."""
        return bool(self.distribution.closed_form_tails)

    def _transition_sf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released > k | original = j)."""
        out = np.asarray(self.distribution.sf(k, self._mu(j)), dtype=np.float64)
        zero = j == 0
        if np.any(zero) and not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(zero, np.where(k < 0, 1.0, np.where(k < 1, p, 0.0)), out)
        return out

    def _transition_mean(self, j: np.ndarray, tol: float) -> np.ndarray:
        """E[released | original = j]: the distribution's mean at mu = j (alpha for j = 0)."""
        out = np.asarray(self.distribution.mean(self._mu(j)), dtype=np.float64)
        if not self.alpha > 0:
            out = np.where(j == 0, float(self.zeros_to_ones), out)
        return out

    def _transition_var(self, j: np.ndarray, tol: float) -> np.ndarray:
        """Var[released | original = j]."""
        out = np.asarray(self.distribution.var(self._mu(j)), dtype=np.float64)
        if not self.alpha > 0:
            p = float(self.zeros_to_ones)
            out = np.where(j == 0, p * (1.0 - p), out)
        return out


# ---------------------------------------------------------------------- helpers
@lru_cache(maxsize=64)
def _zero_law(dist: CountDistribution, alpha: float, zeros_to_ones: float) -> "_PositiveZeroLaw":
    # Once per configuration, not once per block: the tail sums behind it cost more than a
    # block's draws for long-tailed families.  Keyed by the (immutable, hashable) parameters,
    # outside the mechanism, so sampling leaves the mechanism unchanged.
    return _PositiveZeroLaw.of(dist, alpha, zeros_to_ones)


@dataclass(frozen=True)
class _PositiveZeroLaw:
    """How a random zero is released: P(released > 0), and D(alpha) given >= 1 for the draws.

    ``neg_sf`` holds -sf(k) / sf(0) for k = 1, 2, ... (increasing), the table that inversion
    searches; it is None where rejection is used (P(released > 0) >= 1/2) or not needed.
    """

    p_positive: float
    neg_sf: np.ndarray | None

    @classmethod
    def of(cls, dist: CountDistribution, alpha: float, zeros_to_ones: float) -> "_PositiveZeroLaw":
        if zeros_to_ones > 0:
            return cls(zeros_to_ones, None)
        if not alpha > 0:
            return cls(0.0, None)
        p_pos = float(dist.sf(0, alpha))
        if p_pos >= 0.5 or p_pos == 0.0:
            return cls(p_pos, None)
        hi = 64
        while float(dist.sf(hi, alpha)) > 1e-16 * p_pos and hi < 2**24:
            hi *= 2
        sf = np.asarray(dist.sf(np.arange(1, hi + 1), alpha), dtype=np.float64) / p_pos  # decreasing from < 1 to ~0
        return cls(p_pos, -sf)

    def draw(self, dist: CountDistribution, mu: float, size: int, gen: np.random.Generator) -> np.ndarray:
        """``size`` draws from D(mu) conditioned on being >= 1."""
        if self.neg_sf is None:  # rejection accepts at least half of the draws
            out = np.empty(0, dtype=np.int64)
            while out.size < size:
                n = int((size - out.size) / self.p_positive) + 16
                x = np.asarray(dist.sample(np.full(n, mu), rng=gen), dtype=np.int64)
                out = np.concatenate([out, x[x > 0]])
            return out[:size]
        # Inversion on the truncated distribution: k = smallest k >= 1 with sf(k) <= u sf(0).
        pos = np.searchsorted(self.neg_sf, -gen.random(size), side="left")
        return (np.minimum(pos, self.neg_sf.size - 1) + 1).astype(np.int64)
