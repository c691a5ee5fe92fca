"""Independent negative binomials conditioned on their sum: exact sampler and exact log pmf.

This is the output law of the Poisson-gamma synthesizer of 004 (Quick 2021, section 2.2, eq. 9):
the posterior predictive negative binomials of the cells conditioned on the original total.  It
lives here, beside the other count distributions, because it is a distribution; the synthesizer in
:mod:`cellsafe.mechanisms.poisson_gamma` only chooses its parameters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._random import RNGLike, as_generator
from .._validation import check_integer
from ..exceptions import InvalidArgumentError

__all__ = ["ConditionedNegativeBinomial", "sample_conditioned_nb", "conditioned_nb_log_pmf"]

_OWNER = "ConditionedNegativeBinomial"


def _check_parameters(r: Any, q: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Sizes r > 0 and probabilities q in (0, 1) as two float vectors of one length."""
    r = np.asarray(r, dtype=float)
    q = np.asarray(q, dtype=float)
    if r.ndim != 1 or r.size == 0 or q.shape != r.shape:
        raise InvalidArgumentError(
            f"The 'r' and 'q' parameters of {owner} must be non-empty one-dimensional arrays of one length "
            f"(one size and one probability per variable). Got shapes {r.shape} and {q.shape} instead."
        )
    bad_r = ~np.isfinite(r) | (r <= 0)
    if bad_r.any():
        j = int(np.flatnonzero(bad_r)[0])
        raise InvalidArgumentError(
            f"The 'r' parameter of {owner} must hold floats in (0, inf). Got {r[j]!r} at position {j} instead."
        )
    bad_q = ~(q > 0) | ~(q < 1)
    if bad_q.any():
        j = int(np.flatnonzero(bad_q)[0])
        raise InvalidArgumentError(
            f"The 'q' parameter of {owner} must hold floats in (0, 1). Got {q[j]!r} at position {j} instead."
        )
    return r, q


def _tilt(r: np.ndarray, q: np.ndarray, total: int) -> np.ndarray:
    """Gamma scales s_i = t q_i / (1 - t q_i) with t chosen so that sum r_i s_i = total.

    Any t in (0, 1 / max q) gives the same conditional law (the joint pmf changes by the factor
    t**total, constant on the constraint); this one centres the proposal's total on the target.
    """
    qmax = q.max()
    c = q / qmax

    def excess(u: float) -> float:
        return float(np.sum(r * (u * c) / (1.0 - u * c))) - total

    hi = 1.0 - 1e-15
    from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

    u = brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-12) if excess(hi) > 0 else hi
    return u * c / (1.0 - u * c)


class ConditionedNegativeBinomial:
    """Independent negative binomials conditioned on their sum, with an exact sampler.

    Parameters
    ----------
    r : array_like
        Sizes (> 0) of the negative binomials, one per variable.
    q : array_like
        Their "failure" probabilities in (0, 1): P(Z_i = z) proportional to
        Gamma(z + r_i) / z! * q_i**z (scipy's ``nbinom(r_i, 1 - q_i)``).
    total : int
        The conditioning value of sum_i Z_i (>= 0).

    Attributes
    ----------
    r, q, total
        As given (``r`` and ``q`` as float arrays).

    Notes
    -----
    004 section 2.2 (eq. 9) conditions the posterior predictive negative binomials of the
    Poisson-gamma model on the original total.  Write NB(r, q') as a Poisson with a
    Gamma(r, scale s = q' / (1 - q')) mean mu.  Given sum Z = z., the means have density
    proportional to prod Gamma(mu_i) * S**z. e**-S (S the sum of the mu_i), and
    Z | mu ~ Mult(z., mu / S).  :meth:`draw` draws mu from the product of gammas and accepts it
    with probability (S / z.)**z. e**(z. - S) <= 1 (largest at S = z.), which is exact rejection
    sampling, then draws the multinomial.  The q_i are first scaled by a common factor so that
    E[S] = z.: the joint pmf changes by that factor to the power z., a constant on the constraint,
    so the conditional law is unchanged.  The acceptance rate is then about
    (1 + sum r s**2 / z.)**-1/2, above 1/2 when counts are spread over many cells.  Proposals are
    drawn in batches sized from that rate; the first accepted one is kept.

    Examples
    --------
    >>> import numpy as np
    >>> law = ConditionedNegativeBinomial([0.7, 2.5, 1.2], [0.3, 0.05, 0.6], total=5)
    >>> z = law.draw(rng=1)
    >>> int(z.sum()), z.dtype.name
    (5, 'int64')
    >>> support = np.array([[5, 0, 0], [0, 5, 0], [0, 0, 5]])
    >>> bool(np.all(np.exp(law.log_pmf(support)) < 1))
    True
    """

    def __init__(self, r: Any, q: Any, total: int) -> None:
        self.r, self.q = _check_parameters(r, q, _OWNER)
        self.total = check_integer(total, "total", _OWNER, low=0)
        if self.total > 0 and self.r.shape[0] > 1:
            self._scale = _tilt(self.r, self.q, self.total)
            rate = math.sqrt(self.total / (self.total + float(np.sum(self.r * self._scale**2))))
            self._batch = int(min(max(1, math.ceil(2.0 / rate)), max(1, 4_000_000 // self.r.shape[0])))
        else:
            self._scale, self._batch = np.ones_like(self.r), 1

    @property
    def proposal_scale(self) -> np.ndarray:
        """Scales s_i of the rejection sampler's proposal mu_i = s_i Gamma(r_i), tilted so that E[sum mu] = total.

        A sampler that draws the proposal elsewhere (in blocks of cells, say) uses these scales and
        accepts a proposal with probability (S / total)**total e**(total - S), S = sum mu (Notes).
        """
        return self._scale

    def draw(self, rng: RNGLike = None) -> np.ndarray:
        """One exact draw.

        Parameters
        ----------
        rng : None, int, SeedSequence, Generator or "secure"

        Returns
        -------
        ndarray of int64
            One count per variable, summing to ``total``.
        """
        gen = as_generator(rng)
        total = self.total
        if total == 0:
            return np.zeros(self.r.shape[0], dtype=np.int64)
        if self.r.shape[0] == 1:
            return np.array([total], dtype=np.int64)
        rr = np.broadcast_to(self.r, (self._batch, self.r.shape[0]))
        while True:
            mu = gen.standard_gamma(rr) * self._scale
            big_s = mu.sum(axis=1)
            with np.errstate(divide="ignore"):
                log_w = total * np.log(big_s / total) - big_s + total
            hit = np.flatnonzero(np.log(gen.random(self._batch)) < log_w)
            if hit.size:
                mu = mu[hit[0]]
                return gen.multinomial(total, mu / mu.sum()).astype(np.int64)

    def log_pmf(self, z: Any) -> np.ndarray:
        """Exact log pmf at outputs ``z`` (..., I); see :func:`conditioned_nb_log_pmf`."""
        return conditioned_nb_log_pmf(z, self.r, self.q)

    def __repr__(self) -> str:
        return f"{_OWNER}(variables={self.r.shape[0]}, total={self.total})"


def sample_conditioned_nb(r: Any, q: Any, total: int, rng: RNGLike = None) -> np.ndarray:
    """One exact draw of independent NB(r_i, q_i) conditioned on their sum.

    See :class:`ConditionedNegativeBinomial`, which also serves repeated draws.

    Examples
    --------
    >>> int(sample_conditioned_nb([1.0, 2.0], [0.2, 0.4], 7, rng=3).sum())
    7
    """
    return ConditionedNegativeBinomial(r, q, total).draw(rng)


def conditioned_nb_log_pmf(z: Any, r: Any, q: Any) -> np.ndarray:
    """Exact log pmf of independent NB(r_i, q_i) conditioned on their sum, at outputs ``z`` (..., I).

    Parameters
    ----------
    z : array_like of int
        Outputs, the last axis over the I variables; every output must have the same total.
    r, q : array_like
        As for :class:`ConditionedNegativeBinomial`.

    Returns
    -------
    ndarray
        log P(Z = z | sum Z = z.), shape ``z.shape[:-1]``.

    Notes
    -----
    The normalizer P(sum Z = z.) is computed by convolving the marginal pmfs truncated at z.
    (intended for small totals, as in verification by enumeration; 004 eq. 9).

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2, 0], [1, 1], [0, 2]])
    >>> p = np.exp(conditioned_nb_log_pmf(z, [1.0, 1.0], [0.5, 0.5]))
    >>> [round(float(x), 6) for x in p]
    [0.333333, 0.333333, 0.333333]
    """
    from scipy import stats

    r, q = _check_parameters(r, q, "conditioned_nb_log_pmf")
    z = np.asarray(z, dtype=np.int64)
    if z.ndim == 0 or z.shape[-1] != r.shape[0]:
        raise InvalidArgumentError(
            f"The 'z' parameter of conditioned_nb_log_pmf must have {r.shape[0]} counts in its last axis "
            f"(one per variable). Got shape {z.shape} instead."
        )
    totals = np.unique(z.sum(-1))
    if totals.size != 1:
        raise InvalidArgumentError(
            "The 'z' parameter of conditioned_nb_log_pmf must hold outputs with one common total. "
            f"Got totals {totals[:5].tolist()} instead."
        )
    total = int(totals[0])
    k = np.arange(total + 1)
    logp = stats.nbinom.logpmf(k[None, :], r[:, None], 1.0 - q[:, None])  # (I, total+1)
    conv = np.exp(logp[0] - logp[0].max())
    shift = logp[0].max()
    for i in range(1, r.shape[0]):
        m = logp[i].max()
        conv = np.convolve(conv, np.exp(logp[i] - m))[: total + 1]
        shift += m
    log_norm = math.log(conv[total]) + shift
    lp = stats.nbinom.logpmf(z, r, 1.0 - q).sum(-1)
    return lp - log_norm
