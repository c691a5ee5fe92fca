"""Specific utility: a regression fitted to original and synthetic records, compared.

:func:`regression_utility` fits a linear (``family="gaussian"``), logistic (``family="binomial"``),
multinomial logit (``family="multinomial"``, R's ``nnet::multinom``) or proportional-odds
(``family="ordinal"``, R's ``MASS::polr``) regression given by an R-style formula
``y ~ a + b + a:b`` to the original data and to each synthetic implicate, combines the implicates
(Raab, Nowok and Dibben 2016 or Raghunathan, Reiter and Rubin 2003 for fully synthetic data,
Reiter 2003 for partially synthetic data), and reports per coefficient the
confidence-interval overlap and SSO: same sign, same significance (both intervals exclude zero or
both include it) and overlapping intervals (course 002, sections 3.10 to 3.13), as defined once in
:func:`cellsafe.metrics.compare_intervals`.

Categorical predictors get treatment contrasts with the original data's first level (in sorted
order) as the reference, and R's coefficient names (``sexM``, ``sexM:age``); a multinomial
model's coefficients are named ``level:term`` (as R's ``vcov`` names them) and an ordinal model's
cut points ``low|mid``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._results import Result
from ..._validation import check_in
from ...exceptions import DataError, InvalidArgumentError
from ...formula import parse_formula
from .._overlap import check_level, combine_fully_synthetic, combine_partially_synthetic, compare_intervals
from ._data import as_frames, check_columns, is_categorical, numeric_values
from ...fitting.regression import GLMFit, fit_logistic, fit_ols

__all__ = ["RegressionUtility", "regression_utility"]

_OWNER = "regression_utility"


@dataclass(frozen=True)
class RegressionUtility(Result):
    """Coefficient-by-coefficient comparison of a regression on original and synthetic data.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row per coefficient: ``estimate_original``, ``se_original``, ``lower_original``,
        ``upper_original``, ``estimate_synthetic``, ``se_synthetic``, ``lower_synthetic``,
        ``upper_synthetic``, ``overlap`` (signed: negative for a gap), ``same_sign``,
        ``same_significance``, ``sso``.
    mean_overlap : float
        Mean signed overlap over coefficients.
    sso_share : float
        Share of coefficients meeting SSO.
    family, formula, rule : str
    m : int
        Synthetic implicates combined.
    """

    coefficients: pd.DataFrame = field(repr=False)
    mean_overlap: float
    sso_share: float
    family: str
    formula: str
    rule: str
    m: int

    def to_frame(self) -> pd.DataFrame:
        """The per-coefficient comparison (a copy of :attr:`coefficients`)."""
        return self.coefficients.copy()

    def to_dict(self) -> dict[str, Any]:
        """The settings, the summaries and per coefficient its two estimates, overlap and SSO."""
        return {
            "formula": self.formula,
            "family": self.family,
            "rule": self.rule,
            "m": int(self.m),
            "mean_overlap": float(self.mean_overlap),
            "sso_share": float(self.sso_share),
            "coefficients": {
                str(k): {
                    "original": float(v["estimate_original"]),
                    "synthetic": float(v["estimate_synthetic"]),
                    "overlap": float(v["overlap"]),
                    "sso": bool(v["sso"]),
                }
                for k, v in self.coefficients.iterrows()
            },
        }

    def summary(self) -> str:
        lines = [
            f"Regression utility of {self.formula} ({self.family}, {self.rule} rule, m = {self.m})",
            f"  mean CI overlap {self.mean_overlap:.4f}, SSO {self.sso_share:.2%}",
            "",
            self.coefficients[["estimate_original", "estimate_synthetic", "overlap", "sso"]].to_string(
                float_format=lambda x: f"{x:.4f}"
            ),
        ]
        return "\n".join(lines)


def _levels(orig: pd.Series) -> list[Any]:
    vals = pd.unique(orig.astype(object).to_numpy())
    try:
        return sorted(vals)
    except TypeError:
        return sorted(vals, key=str)


def _blocks(
    frame: pd.DataFrame, variables: Sequence[str], levels: dict[str, list[Any] | None]
) -> dict[str, tuple[list[str], np.ndarray]]:
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    for v in variables:
        lev = levels[v]
        if lev is None:
            out[v] = ([v], numeric_values(frame[v], _OWNER)[:, None])
            continue
        vals = frame[v].astype(object).to_numpy()
        unknown = ~pd.Series(vals).isin(lev).to_numpy()
        if unknown.any():
            bad = vals[np.flatnonzero(unknown)[0]]
            raise DataError(
                f"{_OWNER}: variable {v!r} has the category {bad!r} in the synthetic data that the original data lack; "
                "recode it or drop those records."
            )
        cols = [(vals == lv).astype(np.float64) for lv in lev[1:]]
        out[v] = ([f"{v}{lv}" for lv in lev[1:]], np.column_stack(cols) if cols else np.zeros((len(frame), 0)))
    return out


def _design(frame: pd.DataFrame, terms: Sequence[tuple[str, ...]], intercept: bool, levels: Any) -> tuple[list[str], np.ndarray]:
    variables = sorted({v for t in terms for v in t})
    blocks = _blocks(frame, variables, levels)
    names: list[str] = ["(Intercept)"] if intercept else []
    cols: list[np.ndarray] = [np.ones((len(frame), 1))] if intercept else []
    for term in terms:
        tn, tx = blocks[term[0]]
        for v in term[1:]:
            vn, vx = blocks[v]
            tn = [f"{a}:{b}" for a in tn for b in vn]
            tx = (tx[:, :, None] * vx[:, None, :]).reshape(len(frame), -1)
        names.extend(tn)
        cols.append(tx)
    x = np.concatenate(cols, axis=1) if cols else np.zeros((len(frame), 0))
    return names, x


def _response(frame: pd.DataFrame, name: str, family: str, levels: list[Any] | None) -> np.ndarray:
    s = frame[name]
    if family in ("multinomial", "ordinal"):
        assert levels is not None
        vals = s.astype(object).to_numpy()
        index = pd.Index([str(v) for v in levels])
        codes = index.get_indexer([str(v) for v in vals])
        if np.any(codes < 0):
            bad = vals[np.flatnonzero(codes < 0)[0]]
            raise DataError(f"{_OWNER}: the response {name!r} has {bad!r}, which is not among its categories {list(levels)}.")
        return codes.astype(np.int64)
    if family == "gaussian":
        return numeric_values(s, _OWNER)
    if levels is not None:
        if len(levels) != 2:
            raise DataError(f"{_OWNER}: a binomial response needs two categories; {name!r} has {len(levels)}.")
        return (s.astype(object).to_numpy() == levels[1]).astype(np.float64)
    y = numeric_values(s, _OWNER)
    if not np.all(np.isin(y, [0.0, 1.0])):
        raise DataError(f"{_OWNER}: a binomial response must be 0/1 or have two categories; {name!r} does not.")
    return y


def _fit_categories(
    x: np.ndarray, y: np.ndarray, family: str, names: list[str], levels: list[Any]
) -> tuple[list[str], np.ndarray, np.ndarray, float]:
    """Coefficient names, estimates and variances of a multinomial or ordinal model, and df (inf)."""
    from ...synthesis import fit_multinomial, fit_polr

    k = len(levels)
    if family == "multinomial":
        model = fit_multinomial(y, k, x)
        if model.vcov is None:
            raise InvalidArgumentError(f"{_OWNER}: the multinomial model has too many coefficients for standard errors (at most 300).")
        labels = [f"{lv}:{t}" for lv in levels[1:] for t in names]
        est = model.coef[:, 1:].T.ravel()
        return labels, est, np.diag(model.vcov).copy(), np.inf
    if np.unique(y).size < k:
        raise DataError(f"{_OWNER}: an ordinal response needs every category in each data set; some of {list(levels)} do not occur.")
    ordinal = fit_polr(y, k, x)
    labels = list(names) + [f"{a}|{b}" for a, b in zip(levels[:-1], levels[1:])]
    assert ordinal.vcov is not None  # the ordinal model always has its standard errors
    return labels, np.concatenate([ordinal.coef, ordinal.zeta]), np.diag(ordinal.vcov).copy(), np.inf


def _fit(x: np.ndarray, y: np.ndarray, family: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Estimates and variances (NaN for columns that are constant zero in these data), and df."""
    p = x.shape[1]
    keep = np.ones(p, dtype=bool)
    for j in range(p):
        if not np.any(x[:, j] != 0):
            keep[j] = False
    f: GLMFit = fit_ols(x[:, keep], y) if family == "gaussian" else fit_logistic(x[:, keep], y)
    est = np.full(p, np.nan)
    var = np.full(p, np.nan)
    est[keep] = f.coef
    var[keep] = f.se**2
    return est, var, float(f.df_resid) if family == "gaussian" else np.inf


def regression_utility(
    original: Any,
    synthetic: Any,
    formula: str,
    *,
    family: str = "gaussian",
    synthesis: str = "fully",
    combining: str = "raab",
    level: float = 0.95,
    categorical: Sequence[str] | None = None,
    response_levels: Sequence[Any] | None = None,
) -> RegressionUtility:
    """Confidence-interval overlap and SSO of a regression on original and synthetic data.

    Parameters
    ----------
    original : DataFrame
    synthetic : DataFrame or list of DataFrame
        One synthetic data set or ``m`` implicates.
    formula : str
        ``"response ~ terms"`` in R's notation (``a*b``, ``a:b``, ``(a+b)^2``, ``- 1``).
    family : {"gaussian", "binomial", "multinomial", "ordinal"}
        Linear (least squares), logistic, multinomial logit or proportional-odds regression.
    synthesis : {"fully", "partially"}
        Fully synthetic data are combined by ``combining``; partially synthetic data by Reiter
        (2003), which needs at least two implicates.
    combining : {"raab", "rrr"}
        The rule for fully synthetic data: Raab et al. (2016), valid from one implicate, or
        Raghunathan, Reiter and Rubin (2003), which needs at least two
        (:func:`cellsafe.metrics.combine_fully_synthetic`).
    level : float
        Confidence level of the intervals.
    categorical : sequence of str, optional
        Numeric predictors to treat as categorical.
    response_levels : sequence, optional
        The categories of a multinomial or ordinal response in order (the first is the
        reference; an ordinal model's order).  Default: the categories of an ordered pandas
        categorical in their order, else sorted.

    Returns
    -------
    RegressionUtility

    Notes
    -----
    Course 002, section 3.11: overlap is 1 for identical intervals, 0 for adjacent ones and
    negative for a gap (here the signed form of :func:`cellsafe.metrics.ci_overlap`).
    Intervals from the original use t quantiles with the residual degrees of freedom (gaussian)
    or normal quantiles (binomial); combined synthetic intervals use the combining rule's
    degrees of freedom.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> g = np.random.default_rng(0)
    >>> o = pd.DataFrame({"x": g.normal(size=200)}); o["y"] = 1 + 2 * o.x + g.normal(size=200)
    >>> r = regression_utility(o, o, "y ~ x")
    >>> r.sso_share
    1.0
    """
    family = check_in(family, "family", _OWNER, ("gaussian", "binomial", "multinomial", "ordinal"))
    synthesis = check_in(synthesis, "synthesis", _OWNER, ("fully", "partially"))
    combining = check_in(combining, "combining", _OWNER, ("raab", "rrr"))
    level = check_level(level, _OWNER)
    if not isinstance(formula, str) or "~" not in formula:
        raise InvalidArgumentError(f"The 'formula' parameter of {_OWNER} must be a string 'y ~ x1 + x2'. Got {formula!r}.")
    lhs, rhs = formula.split("~", 1)
    response = lhs.strip().strip("`")
    orig, syns = as_frames(original, synthetic, _OWNER)
    frames = {"original": orig, **{f"synthetic[{i}]": s for i, s in enumerate(syns)}}
    check_columns(frames, [response], _OWNER)
    others = [c for c in orig.columns if c != response]
    f = parse_formula(rhs.strip() or "1", variables=others)
    if f.variables:
        check_columns(frames, list(f.variables), _OWNER)
    levels: dict[str, list[Any] | None] = {
        v: (_levels(orig[v]) if is_categorical(orig[v], categorical) else None) for v in f.variables
    }
    y_levels = _levels(orig[response]) if is_categorical(orig[response], categorical) else None
    if family in ("multinomial", "ordinal"):
        if response_levels is not None:
            y_levels = list(response_levels)
        elif isinstance(orig[response].dtype, pd.CategoricalDtype):
            y_levels = list(orig[response].cat.categories)
        elif y_levels is None:
            y_levels = _levels(orig[response])
        if len(y_levels) < 2:
            raise DataError(f"{_OWNER}: a {family} response needs at least two categories; {response!r} has {len(y_levels)}.")
    if synthesis == "partially" and len(syns) < 2:
        raise InvalidArgumentError(f"{_OWNER}: synthesis='partially' needs at least two implicates; got {len(syns)}.")
    if synthesis == "fully" and combining == "rrr" and len(syns) < 2:
        raise InvalidArgumentError(f"{_OWNER}: combining='rrr' needs at least two implicates; got {len(syns)}.")

    intercept = f.intercept and family != "ordinal"  # an ordinal model's cut points take the intercept's place
    names, xo = _design(orig, f.terms, intercept, levels)
    if family in ("multinomial", "ordinal"):
        assert y_levels is not None
        names, est_o, var_o, df_o = _fit_categories(xo, _response(orig, response, family, y_levels), family, names, y_levels)
    else:
        est_o, var_o, df_o = _fit(xo, _response(orig, response, family, y_levels), family)
    q = np.empty((len(syns), len(names)))
    u = np.empty_like(q)
    for i, s in enumerate(syns):
        sn, xs = _design(s, f.terms, intercept, levels)
        if family in ("multinomial", "ordinal"):
            assert y_levels is not None
            _, q[i], u[i], _ = _fit_categories(xs, _response(s, response, family, y_levels), family, sn, y_levels)
        else:
            q[i], u[i], _ = _fit(xs, _response(s, response, family, y_levels), family)
    if synthesis == "fully":
        comb = combine_fully_synthetic(q, u, len(orig), [len(s) for s in syns], rule=combining)
    else:
        comb = combine_partially_synthetic(q, u)
    from scipy import stats

    lo_s, up_s = comb.conf_int(level)
    tail = (1.0 - level) / 2
    zq = stats.t.isf(tail, df_o) if np.isfinite(df_o) else stats.norm.isf(tail)
    se_o = np.sqrt(var_o)
    lo_o, up_o = est_o - zq * se_o, est_o + zq * se_o
    agree = compare_intervals(est_o, lo_o, up_o, comb.estimate, lo_s, up_s)
    overlap, sso = agree["overlap_signed"], agree["sso"]
    table = pd.DataFrame(
        {
            "estimate_original": est_o,
            "se_original": se_o,
            "lower_original": lo_o,
            "upper_original": up_o,
            "estimate_synthetic": comb.estimate,
            "se_synthetic": comb.se,
            "lower_synthetic": lo_s,
            "upper_synthetic": up_s,
            "overlap": overlap,
            "same_sign": agree["same_sign"],
            "same_significance": agree["same_significance"],
            "sso": sso,
        },
        index=pd.Index(names, name="term"),
    )
    ok = ~np.isnan(overlap)
    return RegressionUtility(
        coefficients=table,
        mean_overlap=float(np.mean(overlap[ok])) if ok.any() else float("nan"),
        sso_share=float(np.mean(sso[ok])) if ok.any() else float("nan"),
        family=family,
        formula=formula,
        rule=comb.rule,
        m=len(syns),
    )
