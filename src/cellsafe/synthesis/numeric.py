"""Methods for skewed numbers: predictive mean matching and normal ranks.

``"pmm"``
    Predictive mean matching: a linear regression is fitted on the confidential records; each
    synthetic record's prediction ``x' beta`` is matched to the ``donors`` confidential records
    whose fitted values are nearest, and the value of one of them, drawn at random, is released
    (synthpop's ``syn.pmm``, Little 1988).  Values are observed values, so skewness, spikes and
    bounds of the data are kept.
``"normrank"``
    The ranks of the confidential values are turned into normal scores ``z = Phi^-1(r / (n + 1))``,
    a linear regression with normal errors is fitted to ``z``, a synthetic score is drawn as
    ``x' beta + sigma e`` and mapped back to the confidential value of rank
    ``round(Phi(z*) (n + 1))`` (synthpop's ``syn.normrank``).  The marginal distribution is the
    data's; the dependence on predictors is that of a Gaussian copula.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ..exceptions import DataError
from ..fitting import fit_ols

__all__ = ["PmmModel", "NormRankModel", "fit_pmm", "fit_normrank"]


@dataclass(frozen=True)
class PmmModel:
    """Fitted values and values of the confidential records, sorted by fitted value.

    Attributes
    ----------
    coef : numpy.ndarray
        Least-squares coefficients of the design columns.
    fitted, values : numpy.ndarray
        Confidential fitted values (sorted) and the values in the same order.
    donors : int
        Nearest confidential records a value is drawn from.
    """

    coef: np.ndarray
    fitted: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)
    donors: int = 3

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        pred = x @ self.coef
        n_obs, k = self.fitted.size, min(self.donors, self.fitted.size)
        pos = np.searchsorted(self.fitted, pred)
        # the k nearest lie among the k on either side of the insertion point
        window = pos[:, None] + np.arange(-k, k)[None, :]
        window = np.clip(window, 0, n_obs - 1)
        dist = np.abs(self.fitted[window] - pred[:, None])
        dist += gen.random(dist.shape) * 1e-12 * (1.0 + np.abs(pred[:, None]))  # random order among ties
        # a clipped window repeats its edge; those repeats must not count twice
        dup = np.zeros_like(window, dtype=bool)
        dup[:, 1:] = window[:, 1:] == window[:, :-1]
        dist[dup] = np.inf
        nearest = np.argpartition(dist, k - 1, axis=1)[:, :k]
        pick = nearest[np.arange(pred.size), gen.integers(0, k, size=pred.size)]
        return self.values[window[np.arange(pred.size), pick]]


def fit_pmm(y: np.ndarray, x: np.ndarray, donors: int = 3) -> PmmModel:
    """Least squares of ``y`` on ``x``; the confidential fitted values index the donors.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.column_stack([np.ones(6), np.arange(6.0)])
    >>> m = fit_pmm(np.array([1.0, 2, 3, 10, 11, 12]), x, donors=1)
    >>> m.draw(x[[0, 5]], np.random.default_rng(0))
    array([ 1., 12.])
    """
    if y.size <= x.shape[1]:
        raise DataError(f"{y.size} records cannot fit a linear regression with {x.shape[1]} coefficients.")
    fit = fit_ols(x, y)
    order = np.argsort(fit.fitted, kind="stable")
    return PmmModel(fit.coef, np.asarray(fit.fitted)[order], y[order], int(donors))


@dataclass(frozen=True)
class NormRankModel:
    """A normal linear model of the normal scores of the ranks, and the sorted confidential values."""

    coef: np.ndarray
    sigma: float
    sorted_values: np.ndarray = field(repr=False)

    def draw(self, x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        n = self.sorted_values.size
        z = x @ self.coef + self.sigma * gen.standard_normal(x.shape[0])
        rank = np.clip(np.round(special.ndtr(z) * (n + 1)).astype(np.int64), 1, n)
        return self.sorted_values[rank - 1]


def fit_normrank(y: np.ndarray, x: np.ndarray) -> NormRankModel:
    """Normal scores of the ranks of ``y`` (ties get their mean rank) regressed on ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> m = fit_normrank(np.exp(np.arange(9.0)), np.ones((9, 1)))
    >>> abs(round(float(m.coef[0]), 12)), float(m.sorted_values[0])
    (0.0, 1.0)
    """
    from scipy.stats import rankdata

    n = y.size
    if n <= x.shape[1]:
        raise DataError(f"{n} records cannot fit a linear regression with {x.shape[1]} coefficients.")
    z = special.ndtri(rankdata(y) / (n + 1))
    fit = fit_ols(x, z)
    sigma = float(np.sqrt(np.sum((z - fit.fitted) ** 2) / max(fit.df_resid, 1)))
    return NormRankModel(fit.coef, sigma, np.sort(y))
