"""Specific utility: compare a log-linear model fitted to original and synthetic tables.

:func:`specific_utility` fits the same Poisson log-linear model (:func:`cellsafe.fitting.fit_loglinear`)
to the original table and to each synthetic implicate and compares the parameters: confidence
interval overlap (003 eq. 12, clamped and signed), standardized and percentage differences with
003 Table 5's trimmed mean, and the sign, significance and overlap (SSO) match of 002 section 3.10
(one definition for every comparison: :func:`cellsafe.metrics.compare_intervals`).

Synthetic estimates are combined over the ``m`` implicates with the rule of Raab, Nowok and
Dibben (2016) for fully synthetic data (003 eq. 13, valid for ``m = 1``) or Reiter's (2003) rule for
partially synthetic data (``m >= 2``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtri

from .._results import Result, json_ready
from .._validation import check_real
from ..exceptions import CellsafeWarning, InvalidArgumentError
from ..fitting import fit_loglinear
from ..formula import Formula
from ..table import CountTable
from ._overlap import check_level, ci_overlap, combine_fully_synthetic, combine_partially_synthetic, compare_intervals
from ._tables import _as_tables

__all__ = ["SpecificUtility", "specific_utility"]


@dataclass(frozen=True)
class SpecificUtility(Result):
    """Result of :func:`specific_utility`.

    Attributes
    ----------
    parameters : pandas.DataFrame
        One row per model parameter (R's names): original estimate, se and interval; combined
        synthetic estimate, se (the chosen rule) and interval; ``overlap`` (clamped at 0),
        ``overlap_signed``, ``std_diff`` ((synthetic - original) / se_original), ``pct_diff``
        (100 (synthetic - original) / original), ``same_sign``, ``same_significance``, ``sso``,
        ``se_fully`` and ``se_partially`` (both rules), ``estimable`` (finite in the original and in
        every implicate) and ``compared`` (the rows that enter the means: finite in the original,
        and with ``not_estimable='exclude'`` also in every implicate).  Rows not estimable hold NaN
        differences; with ``not_estimable='zero'`` their overlap is 0 and ``sso`` False.
    overlap_implicates : ndarray, shape (m, n_parameters)
        Clamped overlap of each implicate alone (its variance by eq. 13 with m = 1), as plotted in
        003 Figs. 4-5.
    formula, level, rule, m, n_original, n_synthetic
        The comparison's settings: model, confidence level of the intervals, combining rule (``'fully'`` or
        ``'partially'``), number of implicates, and the grand totals.
    trim : float
        Share cut from each end for :attr:`trimmed_mean_pct_diff`.
    not_estimable : str
        ``'zero'`` or ``'exclude'``: how parameters finite in the original but infinite in a
        synthetic implicate enter the overlap.
    """

    parameters: pd.DataFrame
    overlap_implicates: np.ndarray
    formula: str
    level: float
    rule: str
    m: int
    n_original: float
    n_synthetic: tuple[float, ...]
    trim: float = 0.1
    not_estimable: str = "zero"

    @property
    def n_parameters(self) -> int:
        return int(self.parameters.shape[0])

    @property
    def n_compared(self) -> int:
        """Parameters entering the overlap means (see ``compared`` in :attr:`parameters`)."""
        return int(self.parameters["compared"].sum())

    @property
    def mean_overlap(self) -> float:
        """Mean clamped CI overlap over the compared parameters."""
        return float(np.nanmean(self.parameters["overlap"])) if self.n_compared else float("nan")

    @property
    def median_overlap(self) -> float:
        return float(np.nanmedian(self.parameters["overlap"])) if self.n_compared else float("nan")

    @property
    def mean_overlap_signed(self) -> float:
        return float(np.nanmean(self.parameters["overlap_signed"])) if self.n_compared else float("nan")

    @property
    def trimmed_mean_pct_diff(self) -> float:
        """Mean percentage difference with the top and bottom ``trim`` shares cut (003 Table 5)."""
        from scipy.stats import trim_mean

        x = self.parameters["pct_diff"].to_numpy()
        x = x[np.isfinite(x)]
        return float(trim_mean(x, self.trim)) if x.size else float("nan")

    @property
    def sso_rate(self) -> float:
        """Share of compared parameters with the same sign, significance and overlapping intervals."""
        s = self.parameters.loc[self.parameters["compared"], "sso"]
        return float(s.mean()) if s.size else float("nan")

    def overview(self) -> pd.Series:
        """The headline numbers as a Series."""
        return pd.Series(
            {
                "n_parameters": self.n_parameters,
                "n_compared": self.n_compared,
                "m": self.m,
                "rule": self.rule,
                "mean_overlap": self.mean_overlap,
                "median_overlap": self.median_overlap,
                "mean_overlap_signed": self.mean_overlap_signed,
                "trimmed_mean_pct_diff": self.trimmed_mean_pct_diff,
                "sso_rate": self.sso_rate,
                "mean_abs_std_diff": float(np.nanmean(np.abs(self.parameters["std_diff"])))
                if self.n_compared
                else float("nan"),
            },
            name="specific_utility",
        )

    def to_frame(self) -> pd.DataFrame:
        """The per-parameter comparison (a copy of :attr:`parameters`, indexed by term)."""
        return self.parameters.copy()

    def to_dict(self) -> dict[str, Any]:
        """The settings, the headline numbers of :meth:`overview` and one record per parameter."""
        records = [{"term": str(term), **row} for term, row in self.parameters.to_dict(orient="index").items()]
        return json_ready(
            {
                "formula": self.formula,
                "level": self.level,
                "not_estimable": self.not_estimable,
                "trim": self.trim,
                "n_original": self.n_original,
                "n_synthetic": list(self.n_synthetic),
                **self.overview().to_dict(),
                "parameters": records,
            }
        )

    def summary(self, n: int = 10) -> str:
        """A plain-text report: the settings, the headline numbers and the ``n`` parameters of smallest overlap."""
        lines = [
            f"Specific utility of {self.formula}",
            f"original total {self.n_original:,.0f}; {self.m} synthetic implicate(s), totals "
            + ", ".join(f"{x:,.0f}" for x in self.n_synthetic)
            + f"; {self.rule} synthesis rule, {100 * self.level:g}% intervals",
        ]
        for k, v in self.overview().items():
            lines.append(f"  {k:<22} {v:.4f}" if isinstance(v, float) else f"  {k:<22} {v}")
        worst = self.parameters[self.parameters["estimable"]].sort_values("overlap").head(n)
        if len(worst):
            cols = ["estimate_original", "estimate_synthetic", "overlap", "std_diff", "sso"]
            lines += ["", "parameters with the smallest overlap:", worst[cols].to_string(float_format=lambda x: f"{x:.4f}")]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return self.overview().to_frame().to_html() + self.parameters.to_html(float_format=lambda x: f"{x:.4g}")

    def __repr__(self) -> str:
        return (
            f"SpecificUtility(formula={self.formula!r}, m={self.m}, rule={self.rule!r}, "
            f"n_parameters={self.n_parameters}, n_compared={self.n_compared}, "
            f"mean_overlap={self.mean_overlap:.4f}, trimmed_mean_pct_diff={self.trimmed_mean_pct_diff:.2f}, "
            f"sso_rate={self.sso_rate:.3f})"
        )


def specific_utility(
    original: CountTable,
    synthetic_list: CountTable | Sequence[CountTable],
    formula: str | Formula,
    *,
    level: float = 0.95,
    rule: str = "fully",
    trim: float = 0.1,
    not_estimable: str = "zero",
) -> SpecificUtility:
    """Compare a log-linear model's parameters between original and synthetic tables.

    Parameters
    ----------
    original : CountTable
    synthetic_list : CountTable or sequence of CountTable
        The ``m`` implicates, on the original's variables and categories.
    formula : str or Formula
        The model, e.g. ``'ethnicity*age + ethnicity*language + age*language'``.
    level : float, default 0.95
        Confidence level of the intervals (a test of each parameter against 0 at ``1 - level``
        decides its significance).
    rule : {'fully', 'partially'}, default 'fully'
        Combining rule for the synthetic intervals: Raab et al. (2016), 003 eq. (13), valid for
        any ``m``; or Reiter (2003), which needs ``m >= 2``.
    trim : float, default 0.1
        Share cut from each end for the trimmed mean percentage difference (003 Table 5 uses 10%).
    not_estimable : {'zero', 'exclude'}, default 'zero'
        A parameter finite in the original but infinite in a synthetic implicate (a margin the
        synthesis emptied): ``'zero'`` counts its overlap as 0 (the synthetic data give no finite
        interval), ``'exclude'`` leaves it out of the means.  Parameters infinite in the original
        are always left out.

    Returns
    -------
    SpecificUtility
        ``to_frame()`` gives the per-parameter frame, ``overview()`` the headline numbers and
        ``summary()`` a text report.

    Notes
    -----
    Overlap ``I = ((u_i - l_i)/(u_o - l_o) + (u_i - l_i)/(u_s - l_s)) / 2`` (003 eq. 12), reported
    clamped at 0 (``overlap``) and signed (``overlap_signed``, negative for a gap, as in 002).
    Zero margins make some estimates infinite (see :func:`~cellsafe.fitting.fit_loglinear`).  R
    reports them as estimates near -20 with huge standard errors, whose overlap then tends to 1/2
    (003 section 4.4.1).  Here a parameter infinite in the original is left out, and one infinite
    only in the synthetic data has overlap 0 (or is left out, with ``not_estimable='exclude'``);
    differences and signed overlaps are computed only where both sides are finite.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe.table import CountTable, Variable
    >>> v = [Variable("a", ["x", "y"]), Variable("b", ["u", "v"])]
    >>> t = CountTable.from_dense(np.array([[10, 20], [30, 40]]), v)
    >>> res = specific_utility(t, [t], "a + b")
    >>> round(res.mean_overlap, 6), round(res.sso_rate, 4)  # synthetic intervals are sqrt(2) times wider
    (0.853553, 0.6667)
    """
    original, synth = _as_tables(original, synthetic_list, "specific_utility", "synthetic_list")
    if rule not in ("fully", "partially"):
        raise InvalidArgumentError(
            f"The 'rule' parameter of specific_utility must be 'fully' or 'partially'. Got {rule!r} instead."
        )
    level = check_level(level, "specific_utility")
    if not_estimable not in ("zero", "exclude"):
        raise InvalidArgumentError(
            "The 'not_estimable' parameter of specific_utility must be 'zero' or 'exclude'. "
            f"Got {not_estimable!r} instead."
        )
    check_real(trim, "trim", "specific_utility", low=0.0, high=0.5, high_open=True)
    m = len(synth)
    if rule == "partially" and m < 2:
        raise InvalidArgumentError(
            "Reiter's rule for partially synthetic data needs m >= 2 implicates; use rule='fully'."
        )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CellsafeWarning)
        fit_o = fit_loglinear(original, formula, level=level)
        fits = [fit_loglinear(s, formula, level=level) for s in synth]
    for w in caught:
        if not issubclass(w.category, CellsafeWarning) or "infinite because of zero margins" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    names = fit_o.params.index
    q_o = fit_o.params.to_numpy()
    se_o = fit_o.bse.to_numpy()
    q = np.vstack([f.params.to_numpy() for f in fits])
    se = np.vstack([f.bse.to_numpy() for f in fits])
    ok_o = np.isfinite(q_o) & np.isfinite(se_o)
    ok_i = ok_o & np.isfinite(q) & np.isfinite(se)  # (m, p)
    ok = np.all(ok_i, axis=0)
    zero = not_estimable == "zero"
    q = np.where(ok, q, np.nan)
    v = np.where(ok, se**2, np.nan)
    n = float(original.total)
    n_syn = np.array([float(s.total) for s in synth])

    full = combine_fully_synthetic(np.nan_to_num(q), np.nan_to_num(v), n, n_syn)
    se_full = np.where(ok, full.se, np.nan)
    q_bar = np.where(ok, full.estimate, np.nan)
    if m >= 2:
        part = combine_partially_synthetic(np.nan_to_num(q), np.nan_to_num(v))
        se_part = np.where(ok, part.se, np.nan)
    else:
        part = None
        se_part = np.full(q_o.shape, np.nan)
    z = ndtri((1.0 + level) / 2)  # the normal quantile z_((1 + level)/2)
    lo_all, up_all = q_o - z * se_o, q_o + z * se_o
    if rule == "fully":
        lo_s, up_s = q_bar - z * se_full, q_bar + z * se_full
        se_s = se_full
    else:
        assert part is not None
        lo_s, up_s = part.conf_int(level)
        lo_s, up_s = np.where(ok, lo_s, np.nan), np.where(ok, up_s, np.nan)
        se_s = se_part
    lo_o = np.where(ok, lo_all, np.nan)
    up_o = np.where(ok, up_all, np.nan)
    agree = compare_intervals(np.where(ok, q_o, np.nan), lo_o, up_o, q_bar, lo_s, up_s)
    overlap = agree["overlap"]
    if zero:
        overlap = np.where(ok_o & ~ok, 0.0, overlap)

    # each implicate alone: eq. (13) with m = 1
    lo_oi = np.where(ok_o, lo_all, np.nan)[None, :]
    up_oi = np.where(ok_o, up_all, np.nan)[None, :]
    se_i = np.sqrt(np.where(ok_i, se**2, np.nan) * (n_syn[:, None] / n + 1.0))
    q_i = np.where(ok_i, q, np.nan)
    overlap_i = ci_overlap(lo_oi, up_oi, q_i - z * se_i, q_i + z * se_i, clamp=True)
    if zero:
        overlap_i = np.where(ok_o[None, :] & ~ok_i, 0.0, overlap_i)

    with np.errstate(divide="ignore", invalid="ignore"):
        std_diff = np.where(ok, (q_bar - q_o) / se_o, np.nan)
        pct_diff = np.where(ok & (q_o != 0), 100.0 * (q_bar - q_o) / q_o, np.nan)
    frame = pd.DataFrame(
        {
            "estimate_original": q_o,
            "se_original": se_o,
            "lower_original": lo_o,
            "upper_original": up_o,
            "estimate_synthetic": q_bar,
            "se_synthetic": se_s,
            "lower_synthetic": lo_s,
            "upper_synthetic": up_s,
            "overlap": overlap,
            "overlap_signed": agree["overlap_signed"],
            "std_diff": std_diff,
            "pct_diff": pct_diff,
            "same_sign": agree["same_sign"],
            "same_significance": agree["same_significance"],
            "sso": agree["sso"],
            "se_fully": se_full,
            "se_partially": se_part,
            "estimable": ok,
            "compared": ok_o if zero else ok,
        },
        index=pd.Index(names, name="term"),
    )
    return SpecificUtility(
        parameters=frame,
        overlap_implicates=np.asarray(overlap_i),
        formula=str(getattr(formula, "text", formula)),
        level=level,
        rule=rule,
        m=m,
        n_original=n,
        n_synthetic=tuple(float(x) for x in n_syn),
        trim=float(trim),
        not_estimable=not_estimable,
    )
