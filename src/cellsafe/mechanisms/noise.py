"""Differentially private noise as cell-wise mechanisms: geometric and discrete Gaussian.

Each cell's count j is released as max(0, j + N) with independent integer noise N, drawn exactly
(:class:`~cellsafe.distributions.DiscreteLaplace`, :class:`~cellsafe.distributions.DiscreteGaussian`).
Clamping at 0 is post-processing, so it keeps the privacy guarantee, and it is part of the
transition probabilities: P(0 | j) = P(N <= -j).  Random zeros get noise too (a random zero is
released as k > 0 with probability P(N >= 1)), which the generic block kernel draws as a binomial
count of cells with values from N given N >= 1.

Privacy is per cell of a table whose cells change by at most ``sensitivity`` (adding or removing
one record changes one count by 1: sensitivity 1).  Replacing one record changes two counts, so
under replace-one neighbours the loss doubles for geometric noise and rho doubles for discrete
Gaussian noise (:meth:`~cellsafe.mechanisms.DPMechanism.privacy_loss`).  Both sample only tables on a
public domain (``domain=``, or a table built by :class:`cellsafe.Domain`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._catalog import declared
from .._privacy import ADD_REMOVE, PrivacyLoss
from .._registry import register
from ..distributions import DiscreteGaussian, DiscreteLaplace
from ..exceptions import DataError
from ..table import CountTable
from ._base import CellwiseMechanism
from ._dp import DPMechanism

__all__ = ["GeometricNoise", "DiscreteGaussianNoise"]

_INT64_MAX = np.iinfo(np.int64).max


def _released(counts: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """max(0, counts + noise) in int64; a positive sum beyond 64 bits is refused, never wrapped."""
    counts = np.asarray(counts).astype(np.int64)
    if np.any((noise > 0) & (counts > _INT64_MAX - noise)):
        raise DataError("a count plus its noise exceeds the 64-bit integer range; the counts are too large.")
    return np.maximum(counts + noise, 0)


def _integer_table(table: CountTable, owner: str) -> None:
    c = table.counts
    if c.size and not np.issubdtype(c.dtype, np.integer):
        bad = np.flatnonzero(c != np.floor(c))
        if bad.size:
            raise DataError(
                f"{owner} adds integer noise to integer counts; the table has the fractional count {c[bad[0]]!r} "
                f"at flat index {table.index[bad[0]]}. Round the table or use a synthesizer for fitted tables."
            )


def _grid(k: Any, j: Any) -> tuple[np.ndarray, np.ndarray]:
    k, j = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(j, dtype=np.float64))
    return k, j


class _ClampedNoise(CellwiseMechanism):
    """Shared transition probabilities of released = max(0, j + N) for symmetric integer noise N."""

    _noise: Any  # the noise distribution, set by each subclass's constructor

    @property
    def noise(self) -> Any:
        """The noise distribution N (a DiscreteLaplace or DiscreteGaussian)."""
        return self._noise

    def _transition_pmf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released = k | original = j): P(N = k - j) for k >= 1, P(N <= -j) for k = 0."""
        k, j = _grid(k, j)
        integer = k == np.floor(k)
        out = np.where((k > 0) & integer, self._noise.pmf(np.where(integer, k - j, 0.0)), 0.0)
        return np.where(k == 0, self._noise.cdf(-j), out)

    def _transition_sf(self, k: np.ndarray, j: np.ndarray) -> np.ndarray:
        """P(released > k | original = j) = P(N > floor(k) - j) for k >= 0, and 1 below 0."""
        k, j = _grid(k, j)
        kf = np.floor(k)
        return np.where(kf < 0, 1.0, self._noise.sf(np.maximum(kf, 0.0) - j))

    def transition_logpmf(self, k: Any, j: Any) -> np.ndarray:
        """log P(released = k | original = j), finite where the probability underflows."""
        k, j = _grid(*self._released_and_original(k, j, "transition_logpmf"))
        integer = (k == np.floor(k)) & (k >= 0)
        out = np.where(integer & (k > 0), self._noise.logpmf(np.where(integer, k - j, 0.0)), -np.inf)
        return np.where(k == 0, self._noise.logcdf(-j), out)

    def _check_sample_table(self, table: CountTable) -> None:
        _integer_table(table, type(self).__name__)

    def _draw(self, counts: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        return _released(counts, self._noise.sample(counts.shape[0], rng=gen))

    def _draw_from_zero(self, size: int, gen: np.random.Generator) -> np.ndarray:
        # a random zero released as positive: exactly N given N >= 1
        return self._noise.sample_positive(size, rng=gen)


@register("mechanism", "geometric")
class GeometricNoise(DPMechanism, _ClampedNoise):
    """Two-sided geometric (discrete Laplace) noise on every cell, released counts clamped at 0.

    Parameters
    ----------
    epsilon : float
        Privacy loss per cell, > 0 (and at least ``sensitivity / 2**56``: below that the noise
        does not fit 64-bit integers).
    sensitivity : int, default 1
        The largest change of one cell's count between neighbouring data sets.

    Notes
    -----
    The noise N has P(n) = (1 - q) / (1 + q) q^|n| with q = exp(-epsilon / sensitivity), so that
    P(k | j) / P(k | j') <= exp(epsilon) whenever |j - j'| <= sensitivity (Ghosh, Roughgarden and
    Sundararajan 2012); the clamp max(0, .) is post-processing.  The noise is drawn exactly
    (Canonne, Kamath and Steinke 2020, Algorithm 2) with the rate epsilon / sensitivity taken as a
    rational with 62-bit numerator and denominator, never above the given value:
    :attr:`guaranteed_epsilon` is the epsilon that rational gives (equal to ``epsilon`` for
    epsilons such as 0.5, 1 or 2**-10; within a relative 1e-9 down to epsilon = 1e-9).

    Closed forms, with Q = q^(j + 1)::

        P(k | j) = (1 - q) / (1 + q) q^|k - j|  (k >= 1),     P(0 | j) = q^j / (1 + q)
        P(released > k | j) = q^(k - j + 1) / (1 + q)  (k >= j),  1 - q^(j - k) / (1 + q)  (0 <= k < j)
        E = j + Q / (1 - q^2),     E[released^2] = j^2 + (2 q - Q) / (1 - q)^2.

    Examples
    --------
    >>> import cellsafe
    >>> mech = cellsafe.mechanisms.GeometricNoise(epsilon=1.0)
    >>> round(float(mech.transition_pmf(0, 0)), 6)     # P(0 | 0) = 1 / (1 + e^-1)
    0.731059
    >>> t = cellsafe.CountTable([cellsafe.Variable("a", ["x", "y", "z"])], [0, 2], [5, 1])
    >>> [s] = mech.sample(t, rng=1, domain=cellsafe.Domain({"a": ["x", "y", "z"]}))
    >>> s.counts.dtype
    dtype('int64')
    >>> mech.privacy_loss("add-remove").epsilon, mech.privacy_loss("replace-one").epsilon
    (1.0, 2.0)
    """

    _purpose = 0x4745  # "GE"
    _params = declared("mechanism", "geometric")

    def __init__(self, epsilon: float, sensitivity: int = 1) -> None:
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self._check_params()
        self._noise = DiscreteLaplace.for_epsilon(epsilon, sensitivity)

    def _privacy_loss(self, relation: str, table: Any, delta: Any) -> PrivacyLoss:
        """epsilon per release under add-remove (one count changes by at most ``sensitivity``), 2 epsilon
        under replace-one (two counts change: one record leaves a cell and enters another)."""
        eps = self.guaranteed_epsilon * (1.0 if relation == ADD_REMOVE else 2.0)
        return PrivacyLoss.pure(eps, relation)

    @property
    def guaranteed_epsilon(self) -> float:
        """The epsilon the exact noise guarantees: sensitivity / exact scale (<= epsilon)."""
        exact = self.sensitivity / self._noise.exact_scale
        value = float(exact)
        return value if value <= exact else math.nextafter(value, 0.0)

    def _transition_mean(self, j: np.ndarray, tol: float) -> np.ndarray:
        """E[released | j] = j + q^(j+1) / (1 - q^2)."""
        j = j.astype(np.float64)
        r = self._noise.rate
        one_minus_q = -math.expm1(-r)
        return j + np.exp(-r * (j + 1.0)) / (one_minus_q * (1.0 + math.exp(-r)))

    def _transition_var(self, j: np.ndarray, tol: float) -> np.ndarray:
        """Var[released | j] = j^2 + (2q - q^(j+1)) / (1 - q)^2 - E^2."""
        j = j.astype(np.float64)
        r = self._noise.rate
        q = math.exp(-r)
        one_minus_q = -math.expm1(-r)
        big_q = np.exp(-r * (j + 1.0))
        a = big_q / (one_minus_q * (1.0 + q))  # E - j
        # Var = E[(j+N)^2 1{j+N>0}] - E^2 = (2q - Q)/(1-q)^2 - 2 j a - a^2, arranged without j^2 cancelling
        return (2.0 * q - big_q) / one_minus_q**2 - 2.0 * j * a - a**2


@register("mechanism", "discrete-gaussian")
class DiscreteGaussianNoise(DPMechanism, _ClampedNoise):
    """Discrete Gaussian noise on every cell, released counts clamped at 0.

    Parameters
    ----------
    sigma : float
        The noise's scale, in (0, 2**50]: P(n) proportional to exp(-n^2 / (2 sigma^2)).

    Notes
    -----
    Canonne, Kamath and Steinke (2020): on counts that change by at most 1 between neighbours the
    noise is rho-zCDP with rho = 1 / (2 sigma^2); the Renyi divergence of order alpha between the
    release distributions of j and j + 1 is at most alpha / (2 sigma^2), with equality for the
    unclamped noise (Proposition 14), and clamping can only lower it.  (epsilon, delta)-DP follows
    by :func:`cellsafe.dp.discrete_gaussian_sigma`.  The noise is drawn exactly by their
    Algorithm 3; :attr:`rho` is computed from the exact sigma^2 the sampler uses (never below the
    given sigma^2).  P(k | j) comes from the distribution's pmf and direct tails; the transition
    mean and variance are sums over the support (no closed form).

    Examples
    --------
    >>> import cellsafe
    >>> mech = cellsafe.mechanisms.DiscreteGaussianNoise(sigma=2.0)
    >>> mech.rho
    0.125
    >>> mech.privacy_loss("replace-one").rho
    0.25
    """

    _purpose = 0x4447  # "DG"
    _params = declared("mechanism", "discrete-gaussian")

    def __init__(self, sigma: float) -> None:
        self.sigma = sigma
        self._check_params()
        self._noise = DiscreteGaussian(sigma)

    @property
    def rho(self) -> float:
        """The zCDP parameter 1 / (2 sigma^2) guaranteed per cell (sensitivity 1)."""
        return self._noise.rho

    def _privacy_loss(self, relation: str, table: Any, delta: Any) -> PrivacyLoss:
        """rho = 1 / (2 sigma^2) under add-remove (one count changes by 1), 1 / sigma^2 under replace-one
        (two counts change by 1: L2 sensitivity sqrt 2); (epsilon, delta) at ``delta`` by the conversion
        of Canonne, Kamath and Steinke."""
        rho = self.rho * (1.0 if relation == ADD_REMOVE else 2.0)
        return PrivacyLoss.zcdp(rho, relation, delta)

    def renyi_divergence(self, alpha: float) -> float:
        """The bound alpha / (2 sigma^2) on the order-alpha Renyi divergence between neighbouring cells."""
        return float(alpha) * self.rho
