"""Missing values kept: the share of missing values per column, and within the categories of others.

:func:`compare_missingness` sets the share of missing values of each column in the original
records beside its mean over the synthetic implicates, with the Monte Carlo standard error of that
mean (the standard deviation over implicates divided by ``sqrt(m)``; with one implicate the
binomial ``sqrt(p (1 - p) / n_syn)``), and the same within each category of every categorical
column with few categories ("by predictor"): a synthesizer that models missingness keeps both
(synthpop's approach, a missing indicator drawn from the predictors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._results import Result
from ._data import as_frames, check_columns, is_categorical

__all__ = ["MissingnessComparison", "compare_missingness"]

_OWNER = "compare_missingness"


@dataclass(frozen=True)
class MissingnessComparison(Result):
    """Shares of missing values in original and synthetic records.

    Attributes
    ----------
    columns : pandas.DataFrame
        One row per column: ``original`` share, ``synthetic`` mean share over implicates,
        ``mc_se`` (its Monte Carlo standard error) and ``z = (synthetic - original) / mc_se``.
    by_category : pandas.DataFrame
        One row per (column with missing values, categorical column ``by``, category):
        ``original`` and ``synthetic`` shares of missing values among those records, and the
        original's number of records in the category ``n``.
    m : int
    """

    columns: pd.DataFrame = field(repr=False)
    by_category: pd.DataFrame = field(repr=False)
    m: int

    def to_dict(self) -> dict[str, Any]:
        """Per column with missing values its shares and z; the largest difference by category."""
        rows = self.columns[(self.columns["original"] > 0) | (self.columns["synthetic"] > 0)]
        out: dict[str, Any] = {
            "m": int(self.m),
            "columns": {
                str(k): {"original": float(v["original"]), "synthetic": float(v["synthetic"]), "mc_se": float(v["mc_se"]), "z": float(v["z"])}
                for k, v in rows.iterrows()
            },
        }
        if len(self.by_category):
            diff = (self.by_category["synthetic"] - self.by_category["original"]).abs()
            worst = self.by_category.assign(difference=diff).sort_values("difference", ascending=False).head(5)
            out["by_category_worst"] = worst.to_dict("records")
        return out

    def summary(self) -> str:
        d = self.to_dict()
        if not d["columns"]:
            return "Missing values: none in the original or the synthetic records"
        lines = [f"Missing values (share of records; original vs mean of {self.m} implicate(s) +- Monte Carlo SE)"]
        for name, v in d["columns"].items():
            lines.append(f"  {name:<20} {v['original']:.4f} vs {v['synthetic']:.4f} +- {v['mc_se']:.4f}   (z {v['z']:+.2f})")
        for w in d.get("by_category_worst", [])[:3]:
            lines.append(
                f"  {w['column']} where {w['by']} = {w['category']!s}: {w['original']:.4f} vs {w['synthetic']:.4f} (n = {w['n']})"
            )
        return "\n".join(lines)


def compare_missingness(
    original: Any,
    synthetic: Any,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    max_categories: int = 20,
) -> MissingnessComparison:
    """The share of missing values per column and within categories, original against synthetic.

    Parameters
    ----------
    original : DataFrame
    synthetic : DataFrame or list of DataFrame
    columns : sequence of str, optional
        Default: all shared columns.
    categorical : sequence of str, optional
        Numeric columns to treat as categorical (they then split the shares too).
    max_categories : int
        Categorical columns with more categories than this do not split the shares.

    Returns
    -------
    MissingnessComparison

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> o = pd.DataFrame({"sex": ["F", "M"] * 50, "x": [1.0, np.nan, 2.0, 3.0] * 25})
    >>> r = compare_missingness(o, [o, o])
    >>> float(r.columns.loc["x", "original"]), float(r.columns.loc["x", "synthetic"])
    (0.25, 0.25)
    """
    orig, syns = as_frames(original, synthetic, _OWNER)
    frames = {"original": orig, **{f"synthetic[{i}]": s for i, s in enumerate(syns)}}
    cols = check_columns(frames, columns, _OWNER)
    m = len(syns)
    o_share = orig[cols].isna().mean()
    s_shares = pd.DataFrame([s[cols].isna().mean() for s in syns])
    mean = s_shares.mean()
    if m > 1:
        se = s_shares.std(ddof=1) / np.sqrt(m)
    else:
        n_syn = len(syns[0])
        se = np.sqrt(mean * (1 - mean) / n_syn)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (mean - o_share) / se
    z = z.where(se > 0, np.where(mean == o_share, 0.0, np.inf))
    table = pd.DataFrame({"original": o_share, "synthetic": mean, "mc_se": se, "z": z})
    with_missing = [c for c in cols if o_share[c] > 0 or mean[c] > 0]
    rows = []
    for by in cols:
        if not is_categorical(orig[by], categorical) or orig[by].nunique(dropna=False) > max_categories:
            continue
        o_groups = orig[by].astype(object).where(orig[by].notna(), "NA")
        o_counts = o_groups.value_counts()
        for target in with_missing:
            if target == by:
                continue
            o_rate = orig[target].isna().groupby(o_groups).mean()
            s_rates = []
            for s in syns:
                g = s[by].astype(object).where(s[by].notna(), "NA")
                s_rates.append(s[target].isna().groupby(g).mean())
            s_rate = pd.concat(s_rates, axis=1).mean(axis=1)
            for cat, share in o_rate.items():
                rows.append(
                    {
                        "column": target,
                        "by": by,
                        "category": cat,
                        "n": int(o_counts.get(cat, 0)),
                        "original": float(share),
                        "synthetic": float(s_rate.get(cat, np.nan)),
                    }
                )
    by_cat = pd.DataFrame(rows, columns=["column", "by", "category", "n", "original", "synthetic"])
    return MissingnessComparison(table, by_cat, m)
