"""Confidence-interval overlap and combining rules for estimates from synthetic data.

* :func:`ci_overlap`: the interval overlap of Karr et al. (2006), 003 eq. (12), clamped at zero or
  signed (negative when the intervals do not meet, as in the course 002 section 3.11);
* :func:`compare_intervals`: overlap, same sign, same significance and their conjunction, the
  sign, significance and overlap (SSO) match of Barrientos et al. (2021) as defined in 002
  section 3.10; the one definition every specific-utility comparison uses;
* :func:`combine_fully_synthetic`: the variance of Raab, Nowok and Dibben (2016) used by 003
  eq. (13), valid from a single implicate, or that of Raghunathan, Reiter and Rubin (2003),
  which needs several;
* :func:`combine_partially_synthetic`: Reiter's (2003) rule for partially synthetic data.

All functions are vectorized: estimates and variances of ``p`` parameters from ``m`` implicates
are arrays of shape ``(m, p)`` (or ``(m,)`` for one parameter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._results import Result, json_ready
from .._validation import check_real
from ..exceptions import InvalidArgumentError

__all__ = [
    "CombinedEstimate",
    "ci_overlap",
    "compare_intervals",
    "check_level",
    "combine_fully_synthetic",
    "combine_partially_synthetic",
]


def check_level(level: Any, owner: str) -> float:
    """The confidence level of an interval, a float in (0, 1) such as 0.95 (R's and statsmodels' ``level``)."""
    return check_real(level, "level", owner, low=0.0, high=1.0, low_open=True, high_open=True)


def ci_overlap(lower_o: Any, upper_o: Any, lower_s: Any, upper_s: Any, clamp: bool = True) -> Any:
    """Overlap of an original and a synthetic confidence interval.

    Parameters
    ----------
    lower_o, upper_o : array_like
        The interval from the original data.
    lower_s, upper_s : array_like
        The interval from the synthetic data (broadcast against the original).
    clamp : bool, default True
        Report 0 when the intervals do not meet (003's eq. 12 as a share); with ``False`` the
        value is negative, measuring the gap (002 section 3.11).

    Returns
    -------
    float or ndarray
        ``I = ((u_i - l_i)/(u_o - l_o) + (u_i - l_i)/(u_s - l_s)) / 2`` with ``l_i = max(l_o, l_s)``
        and ``u_i = min(u_o, u_s)``: 1 for identical intervals, 0 for intervals that just touch,
        about 1/2 when one interval is far wider and contains the other.  NaN where an interval
        is missing or has zero length.

    Notes
    -----
    003 section 4.4, eq. (12) (Karr et al., 2006).

    Examples
    --------
    >>> float(ci_overlap(0.0, 2.0, 1.0, 3.0))
    0.5
    >>> float(ci_overlap(0.0, 1.0, 2.0, 3.0, clamp=False))
    -1.0
    """
    lo, uo, ls, us = (np.asarray(a, dtype=np.float64) for a in (lower_o, upper_o, lower_s, upper_s))
    li = np.maximum(lo, ls)
    ui = np.minimum(uo, us)
    with np.errstate(divide="ignore", invalid="ignore"):
        length_o = uo - lo
        length_s = us - ls
        ok = (length_o > 0) & (length_s > 0)
        val = 0.5 * ((ui - li) / np.where(ok, length_o, np.nan) + (ui - li) / np.where(ok, length_s, np.nan))
    if clamp:
        val = np.where(np.isnan(val), np.nan, np.maximum(val, 0.0))
    return val if val.ndim else float(val)


def compare_intervals(
    estimate_o: Any, lower_o: Any, upper_o: Any, estimate_s: Any, lower_s: Any, upper_s: Any
) -> dict[str, np.ndarray]:
    """Compare original and synthetic estimates and their confidence intervals, parameter by parameter.

    Parameters
    ----------
    estimate_o, lower_o, upper_o : array_like
        Estimates and interval limits from the original data.
    estimate_s, lower_s, upper_s : array_like
        The same from the synthetic data (combined over implicates), on the same parameters and
        at the same confidence level.

    Returns
    -------
    dict of str to ndarray
        ``overlap`` (:func:`ci_overlap`, clamped at 0), ``overlap_signed`` (negative for a gap),
        ``same_sign``, ``same_significance`` and ``sso``.  A parameter with a missing or infinite
        value on either side is not comparable: NaN overlaps, False for the three matches.

    Notes
    -----
    002 section 3.10 asks three questions of each estimate and combines them into the sign,
    significance and overlap (SSO) match of Barrientos et al. (2021):

    * same sign: ``sign(estimate_o) == sign(estimate_s)``;
    * same significance at the common level: both intervals exclude 0, or both include it (a test
      of ``H0: beta = 0`` at ``1 - level``, as in 002's exercise 3.13);
    * overlap: the intervals overlap, that is the signed overlap of 002 section 3.11 is
      positive (0 means "adjacent but not overlapping", which does not count).

    ``sso`` is the conjunction of the three.  003 section 3.3 (eq. 12) reports the overlap itself.

    Examples
    --------
    >>> r = compare_intervals([2.79], [2.31], [3.28], [2.08], [1.51], [2.66])  # 002 exercise 3.13
    >>> bool(r["same_sign"][0]), bool(r["same_significance"][0]), bool(r["sso"][0])
    (True, True, True)
    >>> r = compare_intervals([1.0], [0.0], [1.0], [2.0], [1.0], [3.0])  # adjacent: no overlap
    >>> float(r["overlap_signed"][0]), bool(r["sso"][0])
    (0.0, False)
    """
    given = (estimate_o, lower_o, upper_o, estimate_s, lower_s, upper_s)
    eo, lo, uo, es, ls, us = np.broadcast_arrays(*(np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in given))
    ok = np.isfinite(eo) & np.isfinite(lo) & np.isfinite(uo) & np.isfinite(es) & np.isfinite(ls) & np.isfinite(us)
    signed = np.where(ok, ci_overlap(lo, uo, ls, us, clamp=False), np.nan)
    same_sign = ok & (np.sign(eo) == np.sign(es))
    same_significance = ok & (((lo > 0) | (uo < 0)) == ((ls > 0) | (us < 0)))
    return {
        "overlap": np.where(np.isnan(signed), np.nan, np.maximum(signed, 0.0)),
        "overlap_signed": signed,
        "same_sign": same_sign,
        "same_significance": same_significance,
        "sso": same_sign & same_significance & (signed > 0),
    }


@dataclass(frozen=True)
class CombinedEstimate(Result):
    """Point estimates and variances combined over ``m`` synthetic implicates.

    Attributes
    ----------
    estimate : ndarray
        ``q_bar``, the mean of the implicates' estimates (one per parameter).
    variance : ndarray
        The combined variance ``T``.
    se : ndarray
        ``sqrt(T)``.
    df : ndarray
        Degrees of freedom for intervals (``inf``: use the normal distribution).
    m : int
        Number of implicates.
    rule : str
        ``'fully'`` (Raab et al. 2016) or ``'partially'`` (Reiter 2003).
    """

    estimate: np.ndarray
    variance: np.ndarray
    se: np.ndarray
    df: np.ndarray
    m: int
    rule: str

    def conf_int(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper limits at confidence ``level`` (t with ``df`` degrees of freedom; normal when infinite)."""
        from scipy import stats

        level = check_level(level, "CombinedEstimate.conf_int")
        q = stats.t.isf((1.0 - level) / 2, np.where(np.isfinite(self.df), self.df, np.inf))
        return self.estimate - q * self.se, self.estimate + q * self.se

    def to_frame(self) -> pd.DataFrame:
        """One row per parameter: ``estimate``, ``variance``, ``se`` and ``df``."""
        return pd.DataFrame(
            {name: np.atleast_1d(getattr(self, name)) for name in ("estimate", "variance", "se", "df")}
        )

    def to_dict(self) -> dict[str, Any]:
        """The rule, ``m`` and the per-parameter arrays as lists (an infinite ``df`` stays ``inf``)."""
        out: dict[str, Any] = {"rule": self.rule, "m": int(self.m), "n_parameters": int(np.size(self.estimate))}
        for name in ("estimate", "variance", "se", "df"):
            out[name] = json_ready(np.atleast_1d(getattr(self, name)))
        return out

    def __repr__(self) -> str:
        p = int(np.size(self.estimate))
        return f"CombinedEstimate(rule={self.rule!r}, m={self.m}, n_parameters={p})"


def _as_mp(estimates: Any, variances: Any) -> tuple[np.ndarray, np.ndarray]:
    q = np.asarray(estimates, dtype=np.float64)
    u = np.asarray(variances, dtype=np.float64)
    if q.shape != u.shape:
        raise InvalidArgumentError(f"estimates and variances must have the same shape. Got {q.shape} and {u.shape}.")
    if q.ndim == 0 or q.ndim > 2 or q.shape[0] == 0:
        raise InvalidArgumentError(
            f"estimates must have shape (m,) or (m, p) with m >= 1 implicates. Got shape {q.shape}."
        )
    if np.any(u < 0):
        raise InvalidArgumentError("variances must be non-negative.")
    return q, u


def combine_fully_synthetic(
    estimates: Any, variances: Any, n_original: Any, n_synthetic: Any, *, rule: str = "raab"
) -> CombinedEstimate:
    """Combine estimates from ``m`` fully synthetic implicates.

    Parameters
    ----------
    estimates, variances : array_like, shape (m,) or (m, p)
        Each implicate's estimates and their (naive) variances.
    n_original : float
        ``n``, the size of the original data (the table's grand total).
    n_synthetic : float or array_like of shape (m,)
        ``n_syn``, the size of the synthetic data; several values are averaged.
    rule : {"raab", "rrr"}
        ``"raab"``: Raab, Nowok and Dibben (2016), valid from one implicate (synthpop's
        population inference for completely synthesized data with ``proper = FALSE``).
        ``"rrr"``: Raghunathan, Reiter and Rubin (2003), from the spread between implicates
        (``m >= 2``; it holds for data synthesized *properly*, from draws of the models'
        parameters, e.g. ``SequentialSynthesizer(proper=True)``).

    Returns
    -------
    CombinedEstimate
        ``estimate = q_bar``.  Raab: ``variance = v_bar (n_syn / n + 1/m)``, ``df = inf``.
        RRR: ``T_f = (1 + 1/m) b_m - v_bar`` with ``b_m`` the between-implicate variance
        (divisor ``m - 1``) and ``df = (m - 1) (1 - v_bar / ((1 + 1/m) b_m))^2``; where
        ``T_f <= 0`` it is replaced by ``(n_syn / n) v_bar`` (Reiter 2002) and ``df`` is infinite.

    Notes
    -----
    003 section 4.4, eq. (13); methods.md section 5.  Raab's rule is valid from one implicate:
    with ``m = 1`` and ``n_syn = n`` the variance is twice the implicate's own.  Raghunathan,
    Reiter and Rubin (2003), "Multiple imputation for statistical disclosure limitation",
    J. Official Statistics 19, 1-16, eq. (3)-(4); Reiter (2002), "Satisfying disclosure
    restrictions with synthetic data sets", J. Official Statistics 18, 531-543, for the
    adjustment of a negative ``T_f``.

    Examples
    --------
    >>> c = combine_fully_synthetic([1.0], [0.04], 100, 100)
    >>> float(c.estimate[0]), round(float(c.variance[0]), 12)
    (1.0, 0.08)
    >>> c = combine_fully_synthetic([1.0, 2.0, 3.0], [0.1, 0.1, 0.1], 100, 100, rule="rrr")
    >>> round(float(c.variance[0]), 6), round(float(c.df[0]), 6)   # (4/3) 1 - 0.1; 2 (1 - 0.1 / (4/3))^2
    (1.233333, 1.71125)
    """
    if rule not in ("raab", "rrr"):
        raise InvalidArgumentError(f"The 'rule' parameter of combine_fully_synthetic must be 'raab' or 'rrr'. Got {rule!r} instead.")
    q, u = _as_mp(estimates, variances)
    m = q.shape[0]
    n = float(n_original)
    n_syn = float(np.mean(np.asarray(n_synthetic, dtype=np.float64)))
    if not n > 0 or not n_syn >= 0:
        raise InvalidArgumentError(f"n_original must be positive and n_synthetic non-negative. Got {n} and {n_syn}.")
    q_bar = q.mean(axis=0)
    v_bar = u.mean(axis=0)
    if rule == "rrr":
        if m < 2:
            raise InvalidArgumentError("the Raghunathan-Reiter-Rubin rule needs at least two implicates; use rule='raab' for one.")
        b = np.atleast_1d(q.var(axis=0, ddof=1))
        v_bar = np.atleast_1d(v_bar)
        t = (1.0 + 1.0 / m) * b - v_bar
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (m - 1) * (1.0 - v_bar / ((1.0 + 1.0 / m) * b)) ** 2
        negative = t <= 0
        t = np.where(negative, (n_syn / n) * v_bar, t)
        df = np.where(negative | ~np.isfinite(df), np.inf, df)
        return CombinedEstimate(np.atleast_1d(q_bar), t, np.sqrt(t), df, m, "fully-rrr")
    t = v_bar * (n_syn / n + 1.0 / m)
    return CombinedEstimate(
        estimate=np.atleast_1d(q_bar),
        variance=np.atleast_1d(t),
        se=np.atleast_1d(np.sqrt(t)),
        df=np.full(np.atleast_1d(q_bar).shape, np.inf),
        m=m,
        rule="fully",
    )


def combine_partially_synthetic(estimates: Any, variances: Any) -> CombinedEstimate:
    """Combine estimates from ``m >= 2`` partially synthetic implicates (Reiter 2003).

    Parameters
    ----------
    estimates, variances : array_like, shape (m,) or (m, p)

    Returns
    -------
    CombinedEstimate
        ``estimate = q_bar``, ``variance = T_p = v_bar + b_m / m`` where ``b_m`` is the
        between-implicate variance (divisor ``m - 1``), and
        ``df = (m - 1) (1 + v_bar / (b_m / m))^2``.  With ``m = 1`` the between variance is not
        defined and ``variance``, ``se`` and ``df`` are NaN.

    Notes
    -----
    Reiter (2003), cited by 003 section 3.2 and section 4.4 as the alternative to eq. (13).

    Examples
    --------
    >>> c = combine_partially_synthetic([1.0, 3.0], [0.5, 0.5])
    >>> float(c.estimate[0]), float(c.variance[0])
    (2.0, 1.5)
    """
    q, u = _as_mp(estimates, variances)
    m = q.shape[0]
    q_bar = np.atleast_1d(q.mean(axis=0))
    v_bar = np.atleast_1d(u.mean(axis=0))
    if m < 2:
        nan = np.full(q_bar.shape, np.nan)
        return CombinedEstimate(q_bar, nan, nan.copy(), nan.copy(), m, "partially")
    b = np.atleast_1d(q.var(axis=0, ddof=1))
    t = v_bar + b / m
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (m - 1) * (1.0 + v_bar / (b / m)) ** 2
    df = np.where(b > 0, df, np.inf)
    return CombinedEstimate(q_bar, t, np.sqrt(t), df, m, "partially")
