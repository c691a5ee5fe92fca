"""Univariate comparison of original and synthetic microdata.

:func:`compare_univariate` tabulates, for categorical columns, the frequencies and relative
frequencies of every category in both data sets, and for numeric columns the first four moments
(mean, standard deviation, skewness, excess kurtosis), percentiles and the share of zeros
(course 002, section 3.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._results import Result, json_ready
from ._data import as_frame_pair, check_columns, is_categorical, joint_codes, numeric_values

__all__ = ["UnivariateComparison", "compare_univariate"]

_PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


@dataclass(frozen=True)
class UnivariateComparison(Result):
    """Univariate summaries of an original and a synthetic data set.

    Attributes
    ----------
    frequencies : pandas.DataFrame
        One row per (categorical variable, category): ``n_original``, ``n_synthetic``,
        ``p_original``, ``p_synthetic`` (relative frequencies) and ``difference``
        (``p_synthetic - p_original``).
    statistics : pandas.DataFrame
        One row per (numeric variable, statistic): ``original``, ``synthetic`` and
        ``difference``.  Statistics: mean, sd, skewness, kurtosis (excess), p1 ... p99, share_zero.
    total_variation : dict
        Per categorical variable, half the sum of absolute differences of relative frequencies.
    """

    frequencies: pd.DataFrame = field(repr=False)
    statistics: pd.DataFrame = field(repr=False)
    total_variation: dict[str, float]

    def to_frame(self) -> pd.DataFrame:
        """The categorical frequencies (a copy of :attr:`frequencies`; the moments are :attr:`statistics`)."""
        return self.frequencies.copy()

    def to_dict(self) -> dict[str, Any]:
        """Total variation per categorical variable, and both tables as records."""
        return json_ready(
            {
                "total_variation": dict(self.total_variation),
                "frequencies": self.frequencies.to_dict(orient="records"),
                "statistics": self.statistics.to_dict(orient="records"),
            }
        )

    def summary(self) -> str:
        """Total variation of each categorical variable; mean and sd of each numeric one."""
        lines = ["Univariate comparison"]
        lines += [f"  total variation {k:<16} {v:.4f}" for k, v in self.total_variation.items()]
        moments = self.statistics[self.statistics["statistic"].isin(["mean", "sd"])]
        if len(moments):
            lines += ["", moments.to_string(index=False, float_format=lambda x: f"{x:.6g}")]
        return "\n".join(lines)

    def __repr__(self) -> str:
        tv = ", ".join(f"{k}={v:.4f}" for k, v in self.total_variation.items())
        n_num = self.statistics["variable"].nunique() if len(self.statistics) else 0
        return f"UnivariateComparison(total_variation={{{tv}}}, numeric_variables={n_num})"


def _moments(x: np.ndarray) -> dict[str, float]:
    x = x[~np.isnan(x)]
    out: dict[str, float] = {}
    if x.size == 0:
        return {k: np.nan for k in ["mean", "sd", "skewness", "kurtosis", *[f"p{q}" for q in _PERCENTILES], "share_zero"]}
    mean = float(x.mean())
    dev = x - mean
    m2 = float(np.mean(dev**2))
    out["mean"] = mean
    out["sd"] = float(np.std(x, ddof=1)) if x.size > 1 else np.nan
    out["skewness"] = float(np.mean(dev**3) / m2**1.5) if m2 > 0 else np.nan
    out["kurtosis"] = float(np.mean(dev**4) / m2**2 - 3.0) if m2 > 0 else np.nan
    for q, v in zip(_PERCENTILES, np.percentile(x, _PERCENTILES)):
        out[f"p{q}"] = float(v)
    out["share_zero"] = float(np.mean(x == 0))
    return out


def compare_univariate(
    original: Any,
    synthetic: Any,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
) -> UnivariateComparison:
    """Compare the one-way distributions of an original and a synthetic data set.

    Parameters
    ----------
    original, synthetic : DataFrame
        pandas (or polars / pyarrow) frames with the columns to compare.
    columns : sequence of str, optional
        Columns to compare (default: all columns the two frames share).
    categorical : sequence of str, optional
        Columns to treat as categorical although numeric (category, object, string and boolean
        columns always are).

    Returns
    -------
    UnivariateComparison

    Notes
    -----
    Course 002, section 3.3: frequencies and relative frequencies for categorical variables; the
    first four moments, percentiles and the number of zero values for numeric ones.  Skewness and
    kurtosis are the moment estimators ``m3 / m2^1.5`` and ``m4 / m2^2 - 3``.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"sex": ["F", "M", "M"], "age": [20.0, 30.0, 40.0]})
    >>> s = pd.DataFrame({"sex": ["F", "F", "M"], "age": [25.0, 30.0, 35.0]})
    >>> u = compare_univariate(o, s)
    >>> round(u.total_variation["sex"], 4)
    0.3333
    """
    orig, s = as_frame_pair(original, synthetic, "compare_univariate")
    cols = check_columns({"original": orig, "synthetic": s}, columns, "compare_univariate")
    freq_rows: list[pd.DataFrame] = []
    stat_rows: list[dict[str, Any]] = []
    tv: dict[str, float] = {}
    for c in cols:
        if is_categorical(orig[c], categorical) or is_categorical(s[c], categorical):
            (co, cs), cats = joint_codes([orig[c], s[c]])
            n = len(cats)
            no = np.bincount(co, minlength=n)
            ns = np.bincount(cs, minlength=n)
            po, ps = no / no.sum(), ns / ns.sum()
            freq_rows.append(
                pd.DataFrame(
                    {
                        "variable": c,
                        "category": cats,
                        "n_original": no,
                        "n_synthetic": ns,
                        "p_original": po,
                        "p_synthetic": ps,
                        "difference": ps - po,
                    }
                )
            )
            tv[c] = float(0.5 * np.abs(ps - po).sum())
        else:
            mo = _moments(numeric_values(orig[c], "compare_univariate"))
            ms = _moments(numeric_values(s[c], "compare_univariate"))
            for k in mo:
                stat_rows.append(
                    {"variable": c, "statistic": k, "original": mo[k], "synthetic": ms[k], "difference": ms[k] - mo[k]}
                )
    freq = (
        pd.concat(freq_rows, ignore_index=True)
        if freq_rows
        else pd.DataFrame(
            columns=["variable", "category", "n_original", "n_synthetic", "p_original", "p_synthetic", "difference"]
        )
    )
    stats = pd.DataFrame(stat_rows, columns=["variable", "statistic", "original", "synthetic", "difference"])
    return UnivariateComparison(frequencies=freq, statistics=stats, total_variation=tv)
