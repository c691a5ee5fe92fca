"""Utility: expected squared error, synthetic total, Hellinger distance and share within p%."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._frames import MetricGrid, pd
from .._results import Result
from .._validation import check_integer, check_real
from ..exceptions import InvalidArgumentError
from ..mechanisms import CellwiseMechanism
from ._fractional import hellinger_rows
from ._rows import TAIL_TOL, Moments, _closed_form_tails, _exact_row_sums, _moments, _range_mass, _row_sums
from ._sizes import DEFAULT_P, CellSizes, _check_mechanism, _check_percentages, cell_sizes

# Windows of 'within p%' summed term by term up to this many counts in all (else by sf).
_WINDOW_TERMS = 4_000_000


def _expit_neg(x: float) -> float:
    """1 / (1 + exp(x)) for x >= 0: scipy.special.expit(-x) to the bit (the same division of the same exp), 0
    where exp(x) overflows."""
    return 0.0 if x > 709.0 else 1.0 / (1.0 + math.exp(x))


# ---------------------------------------------------------------------- squared error and total
@dataclass(frozen=True)
class SquaredError(Result):
    """Expected squared error L1 = E sum_i (f_i - f_i^syn)^2 (000 section 3.4.2).

    Attributes
    ----------
    per_implicate : float
        L1 for one released table: sum_j w_j (Var(j) + bias(j)^2).
    mean_of_implicates : float
        The same for the cell-wise mean of ``m`` implicates: the variance part divided by m.
    m : int
        Number of implicates averaged.
    variance : float
        The variance part, sum_j w_j Var(released | j).
    bias : float
        The squared-bias part, sum_j w_j (E(released | j) - j)^2 (alpha^2 per random zero).
    n_cells : float
        Number of non-structural cells.
    """

    per_implicate: float
    mean_of_implicates: float
    m: int
    variance: float
    bias: float
    n_cells: float

    @property
    def mse(self) -> float:
        """Mean squared error per cell, L1 / n_cells."""
        return self.per_implicate / self.n_cells

    def utility(self) -> float:
        """1 - invlogit(MSE per cell), 000 Figure 7 (1 = no error)."""
        return _expit_neg(self.mse)

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_implicate": self.per_implicate,
            "mean_of_implicates": self.mean_of_implicates,
            "m": int(self.m),
            "variance": self.variance,
            "bias": self.bias,
            "n_cells": self.n_cells,
            "mse_per_cell": self.mse,
            "mse_utility": self.utility(),
        }


def expected_squared_error(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, m: int = 1) -> SquaredError:
    """Expected squared error of a release, per implicate and for the mean of ``m`` implicates.

    Notes
    -----
    L1 = sum_i Var(f_i^syn) + sum_i (E f_i^syn - f_i)^2, computed over distinct counts (000
    section 3.4.2; methods.md section 4: the bias term is alpha^2 per random zero).

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> expected_squared_error({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), m=2).mean_of_implicates
    7.0
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_squared_error")
    m = check_integer(m, "m", "expected_squared_error", low=1)
    return _squared_error(cs, mech, m)


def _squared_error(cs: CellSizes, mech: CellwiseMechanism, m: int, moments: Moments | None = None) -> SquaredError:
    mean, var = moments if moments is not None else _moments(mech, cs.values)
    v = float(var @ cs.cells)
    b = float(((mean - cs.values) ** 2) @ cs.cells)
    return SquaredError(
        per_implicate=v + b, mean_of_implicates=v / m + b, m=m, variance=v, bias=b, n_cells=cs.n_cells
    )


@dataclass(frozen=True)
class TotalDistribution(Result):
    """Distribution of the released grand total n_syn (000 section 3.4.3).

    Attributes
    ----------
    original : float
        The original total n.
    expected : float
        E[n_syn] = n + alpha x (number of random zeros) for the saturated synthesizer.
    sd : float
        sd(n_syn) = sqrt(sum_j w_j Var(released | j)).
    """

    original: float
    expected: float
    sd: float

    @property
    def bias(self) -> float:
        """E[n_syn] - n."""
        return self.expected - self.original

    def prob_within(self, d: Any) -> Any:
        """P(|n_syn - n| < d) under the normal approximation.

        Phi((d - b) / sd) - Phi((-d - b) / sd) with b = E[n_syn] - n, which is
        2 Phi(d / sd) - 1 when the total is unbiased (000's last line drops the "- 1").
        """
        d = np.asarray(d, dtype=np.float64)
        if np.any(~np.isfinite(d) | (d < 0)):
            raise InvalidArgumentError(f"The 'd' parameter of prob_within must be >= 0. Got {d!r} instead.")
        b = self.bias
        if self.sd == 0:
            out = (np.abs(b) < d).astype(np.float64)
        else:
            from scipy import special  # imported here: only this normal approximation needs scipy in this module

            out = special.ndtr((d - b) / self.sd) - special.ndtr((-d - b) / self.sd)
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict[str, Any]:
        return {"original": self.original, "expected": self.expected, "sd": self.sd, "bias": self.bias}


def total_distribution(table_or_cell_sizes: Any, mechanism: CellwiseMechanism) -> TotalDistribution:
    """Mean and standard deviation of the released grand total.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> tot = total_distribution({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()))
    >>> tot.expected, round(tot.sd ** 2, 6), round(tot.prob_within(5), 4)
    (14.0, 14.0, 0.8186)
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "total_distribution")
    return _total(cs, mech)


def _total(cs: CellSizes, mech: CellwiseMechanism, moments: Moments | None = None) -> TotalDistribution:
    mean, var = moments if moments is not None else _moments(mech, cs.values)
    return TotalDistribution(original=cs.total, expected=float(mean @ cs.cells), sd=math.sqrt(float(var @ cs.cells)))


# ---------------------------------------------------------------------- Hellinger
@dataclass(frozen=True)
class ExpectedHellinger(Result):
    """Expected Hellinger distance and utility of a release (001 eqs. 3-4).

    Attributes
    ----------
    distance : float
        E[HD(f, f^syn)], HD = sqrt(1/2 sum_i (sqrt f_i - sqrt f_i^syn)^2).
    utility : float
        1 - E[HD] / sqrt(n).
    distance_squared : float
        E[HD^2], exact.
    sd_distance_squared : float
        sd of HD^2 (the cells are independent).
    """

    distance: float
    utility: float
    distance_squared: float
    sd_distance_squared: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "distance": self.distance,
            "utility": self.utility,
            "distance_squared": self.distance_squared,
            "sd_distance_squared": self.sd_distance_squared,
        }


def expected_hellinger(
    table_or_cell_sizes: Any, mechanism: CellwiseMechanism, tol: float = TAIL_TOL
) -> ExpectedHellinger:
    """Expected Hellinger distance and utility between the original and one released table.

    Notes
    -----
    S = HD^2 = (1/2) sum_i D_i with D_i = (sqrt f_i - sqrt f_i^syn)^2 independent across cells,
    so E[S] and Var[S] are exact sums over the distinct counts of E[D | j] and Var[D | j].
    For Poisson, NBI and PIG noise, E[D | j] and E[D^2 | j] come from E K, E K^2 and the
    fractional moments E K^(1/2), E K^(3/2), each one integral of the closed-form probability
    generating function (a fixed cost per distinct count however wide its row; relative error
    below 1e-9, about 1e-13 for NBI and PIG sigma 1); rows where those terms would cancel (close to
    Poisson, far from zero), the random zeros and other families sum the transition rows over counts.
    E[HD] = E[sqrt S] uses the second-order expansion sqrt(E S) - Var S / (8 (E S)^(3/2)),
    whose error is of order (sd S / E S)^3: negligible for tables with many non-zero cells.

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> h = expected_hellinger({0: 9000, 1: 600, 2: 400}, SaturatedSynthesizer(Poisson()))
    >>> round(h.utility, 3)
    0.605
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_hellinger")
    tol = check_real(tol, "tol", "expected_hellinger", low=0.0, high=1e-3, low_open=True)
    return _hellinger(cs, mech, tol)


def _hellinger(
    cs: CellSizes, mech: CellwiseMechanism, tol: float, moments: Moments | None = None
) -> ExpectedHellinger:
    def d1(k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return np.square(np.sqrt(k) - np.sqrt(j))

    def d2(k: np.ndarray, j: np.ndarray) -> np.ndarray:
        return np.square(d1(k, j))  # two squarings: a fourth power by pow() costs ten times more

    mean, var = moments if moments is not None else _moments(mech, cs.values)
    e1, e2, ok = hellinger_rows(mech, cs.values, (mean, var))
    rest = np.flatnonzero(~ok)
    if rest.size:  # no closed-form pgf, or rows close to Poisson far from zero: sums over counts
        e1[rest], e2[rest] = _row_sums(mech, cs.values[rest], tol, (d1, d2), moments=(mean[rest], var[rest]))
    mean_s = 0.5 * float(e1 @ cs.cells)
    var_s = 0.25 * float(np.maximum(e2 - e1**2, 0.0) @ cs.cells)
    if mean_s > 0:
        dist = math.sqrt(mean_s) - var_s / (8.0 * mean_s**1.5)
        dist = max(dist, 0.0)
    else:
        dist = 0.0
    n = cs.total
    util = 1.0 - dist / math.sqrt(n) if n > 0 else math.nan
    return ExpectedHellinger(
        distance=dist, utility=util, distance_squared=mean_s, sd_distance_squared=math.sqrt(var_s)
    )


# ---------------------------------------------------------------------- within p%
def _within_bounds(j: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Released counts k with |k - j| <= p% of j: k in [lo, hi] (j = 0: only k = 0)."""
    d = j.astype(np.float64) * (p / 100.0)
    slack = 1e-9 * np.maximum(1.0, j)
    lo = np.maximum(np.ceil(j - d - slack), 0).astype(np.int64)
    hi = np.floor(j + d + slack).astype(np.int64)
    return lo, hi


def expected_within(table_or_cell_sizes: Any, mechanism: CellwiseMechanism, p: Any = DEFAULT_P) -> pd.DataFrame:
    """Expected share of cells released within p% of their original count (003 Table 3).

    Parameters
    ----------
    p : float or sequence of float, default (0.5, 1, 5, 10, 50)
        Percentages.  A cell of count j > 0 is within p% when |released - j| <= p j / 100; a
        random zero only when it stays zero (003 Table 3 counts a zero released as non-zero as
        more than 50% away).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``p`` with columns ``all`` (share of all non-structural cells) and
        ``nonzero`` (share of the cells with a non-zero original count).

    Notes
    -----
    P(lo <= released <= hi | j) is sf(lo - 1) - sf(hi) where the mechanism's sf is a closed form
    (Poisson, NBI, GAF) or the windows of all distinct counts hold more than 4 million counts; for
    PIG noise cdf(hi) - cdf(lo - 1) from the mixing distribution where both ends lie far enough from 0
    (:meth:`~cellsafe.distributions.PIG.cdf_by_gamma_mixture`, to 1e-12); the pmf summed over the
    window otherwise (exact).

    Examples
    --------
    >>> from cellsafe.distributions import Poisson
    >>> from cellsafe.mechanisms.saturated import SaturatedSynthesizer
    >>> expected_within({0: 90, 1: 6, 2: 4}, SaturatedSynthesizer(Poisson()), p=[50]).round(4).to_dict("index")
    {50.0: {'all': 0.9509, 'nonzero': 0.5094}}
    """
    cs = cell_sizes(table_or_cell_sizes)
    mech = _check_mechanism(mechanism, "expected_within")
    pp = _check_percentages(p, "expected_within")
    return _within(cs, mech, pp)


def _within(cs: CellSizes, mech: CellwiseMechanism, pp: np.ndarray) -> pd.DataFrame:
    return _within_grid(cs, mech, pp).frame()


def _within_grid(cs: CellSizes, mech: CellwiseMechanism, pp: np.ndarray) -> MetricGrid:
    j = cs.values
    nz = j > 0
    n_nz = float(cs.cells[nz].sum())
    rows_all, rows_nz = [], []
    for p in pp:
        lo, hi = _within_bounds(j, float(p))
        prob = np.clip(_window_mass(mech, j, lo, hi), 0.0, 1.0)
        rows_all.append(float(prob @ cs.cells) / cs.n_cells)
        rows_nz.append(float(prob[nz] @ cs.cells[nz]) / n_nz if n_nz > 0 else math.nan)
    return MetricGrid("p", pp, ("all", "nonzero"), np.column_stack([rows_all, rows_nz]))


def _window_mass(mech: CellwiseMechanism, j: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo <= released <= hi | j): sf(lo - 1) - sf(hi) where sf is a closed form or the windows
    hold more than _WINDOW_TERMS counts in all; else cdf(hi) - cdf(lo - 1) by the mixing distribution
    where the distribution has one (PIG) and it holds at both ends, and the pmf summed over the
    window (exact, no truncation) for the rest."""
    lens = hi - lo + 1
    if _closed_form_tails(mech) or int(lens.sum()) > _WINDOW_TERMS:
        return _range_mass(mech, j, lo, hi)
    out = np.full(j.shape, np.nan)
    cdf = _mixture_cdf(mech)
    if cdf is not None:  # windows with both ends far from 0: two cdfs by the mixture
        rows = np.flatnonzero((j > 0) & (lo > 0))
        mu = mech._mu(j[rows])
        both = cdf(np.concatenate([hi[rows], lo[rows] - 1]).astype(np.float64), np.concatenate([mu, mu]))
        out[rows] = both[: rows.size] - both[rows.size :]
    rest = np.flatnonzero(np.isnan(out))
    if rest.size:
        one = (lambda k, jj: np.ones_like(k),)
        out[rest] = _exact_row_sums(mech, j[rest], lo[rest], hi[rest], one)[0]
    return out


def _mixture_cdf(mech: CellwiseMechanism) -> Any:
    """The distribution's cdf by its mixing distribution (PIG: ``cdf_by_gamma_mixture``, NaN where it does not
    hold), for saturated mechanisms; else None."""
    cdf = getattr(getattr(mech, "distribution", None), "cdf_by_gamma_mixture", None)
    return cdf if cdf is not None and hasattr(mech, "_mu") else None
