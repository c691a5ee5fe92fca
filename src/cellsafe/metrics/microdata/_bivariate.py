"""Bivariate fit: differences of correlation matrices (numeric) and of Cramer's V (categorical).

The difference matrices are summarized over their lower triangles by the mean absolute
difference (course 002, sections 3.4 and 3.7) and the root mean squared difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._results import Result
from ...exceptions import InvalidArgumentError
from ._data import as_frame_pair, check_columns, is_categorical, joint_codes, numeric_values

__all__ = ["BivariateComparison", "MatrixDifference", "compare_bivariate", "matrix_difference", "cramers_v"]


@dataclass(frozen=True)
class MatrixDifference(Result):
    """The difference of two symmetric association matrices and its summaries.

    Attributes
    ----------
    original, synthetic, difference : pandas.DataFrame
        The two matrices and ``synthetic - original``.
    mae : float
        Mean absolute difference over the lower triangle (diagonal excluded).
    rmse : float
        Root mean squared difference over the lower triangle.
    """

    original: pd.DataFrame = field(repr=False)
    synthetic: pd.DataFrame = field(repr=False)
    difference: pd.DataFrame = field(repr=False)
    mae: float
    rmse: float

    def to_frame(self) -> pd.DataFrame:
        """The difference matrix ``synthetic - original`` (a copy)."""
        return self.difference.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"variables": [str(c) for c in self.difference.columns], "mae": float(self.mae), "rmse": float(self.rmse)}


@dataclass(frozen=True)
class BivariateComparison(Result):
    """Correlation fit for numeric columns and Cramer's V fit for categorical ones.

    Attributes
    ----------
    correlation : MatrixDifference or None
        Pearson correlations of the numeric columns (None with fewer than two).
    cramers_v : MatrixDifference or None
        Cramer's V of the categorical columns (None with fewer than two).
    """

    correlation: MatrixDifference | None
    cramers_v: MatrixDifference | None

    def to_dict(self) -> dict[str, Any]:
        """MAE and RMSE of each matrix (None where there are fewer than two columns of its kind)."""
        out: dict[str, Any] = {}
        for name, diff in (("correlation", self.correlation), ("cramers_v", self.cramers_v)):
            out[f"{name}_mae"] = float(diff.mae) if diff is not None else None
            out[f"{name}_rmse"] = float(diff.rmse) if diff is not None else None
        return out


def matrix_difference(original: Any, synthetic: Any) -> MatrixDifference:
    """Summarize ``synthetic - original`` of two square association matrices.

    Parameters
    ----------
    original, synthetic : array_like or DataFrame
        Square matrices of the same shape (correlations, Cramer's V ...).

    Returns
    -------
    MatrixDifference

    Notes
    -----
    Course 002, section 3.7: MAE = mean |d| and RMSE = sqrt(mean d^2) over the elements below the
    diagonal of the difference matrix d.

    Examples
    --------
    >>> s = [[1, .5, .75], [.5, 1, .8], [.75, .8, 1]]
    >>> o = [[1, .35, .1], [.35, 1, .9], [.1, .9, 1]]
    >>> d = matrix_difference(o, s)
    >>> round(d.mae, 6), round(d.rmse, 6)
    (0.3, 0.389444)
    """
    o = pd.DataFrame(original)
    s = pd.DataFrame(synthetic)
    if o.shape != s.shape or o.shape[0] != o.shape[1]:
        raise InvalidArgumentError(
            f"matrix_difference needs two square matrices of the same shape. Got {o.shape} and {s.shape}."
        )
    s.index, s.columns = o.index, o.columns
    d = s - o
    k = o.shape[0]
    low = np.tril_indices(k, -1)
    vals = d.to_numpy(dtype=float)[low]
    vals = vals[~np.isnan(vals)]
    mae = float(np.mean(np.abs(vals))) if vals.size else np.nan
    rmse = float(np.sqrt(np.mean(vals**2))) if vals.size else np.nan
    return MatrixDifference(original=o, synthetic=s, difference=d, mae=mae, rmse=rmse)


def cramers_v(codes_a: np.ndarray, codes_b: np.ndarray, na: int, nb: int) -> float:
    """Cramer's V of two integer-coded categorical vectors (``na``, ``nb`` codes)."""
    n = codes_a.size
    tab = np.bincount(codes_a * nb + codes_b, minlength=na * nb).reshape(na, nb).astype(float)
    tab = tab[tab.sum(1) > 0][:, tab.sum(0) > 0]
    r, c = tab.shape
    if n == 0 or min(r, c) < 2:
        return np.nan
    expected = np.outer(tab.sum(1), tab.sum(0)) / n
    chi2 = float(np.sum((tab - expected) ** 2 / expected))
    return float(np.sqrt(chi2 / (n * (min(r, c) - 1))))


def _cramer_matrix(codes: list[np.ndarray], sizes: list[int], names: list[str]) -> pd.DataFrame:
    k = len(codes)
    m = np.eye(k)
    for i in range(k):
        for j in range(i):
            m[i, j] = m[j, i] = cramers_v(codes[i], codes[j], sizes[i], sizes[j])
    return pd.DataFrame(m, index=names, columns=names)


def compare_bivariate(
    original: Any,
    synthetic: Any,
    columns: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
) -> BivariateComparison:
    """Compare pairwise associations in an original and a synthetic data set.

    Parameters
    ----------
    original, synthetic : DataFrame
    columns : sequence of str, optional
        Columns to use (default: all shared columns).
    categorical : sequence of str, optional
        Numeric columns to treat as categorical.

    Returns
    -------
    BivariateComparison
        Pearson correlation fit over the numeric columns, Cramer's V fit over the categorical ones.

    Notes
    -----
    Course 002, section 3.4 (correlation fit, summarized by the mean absolute difference); for
    categorical variables the same summary of Cramer's V, ``sqrt(chi^2 / (n (min(r, c) - 1)))``.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"x": [1., 2, 3, 4], "y": [1., 2, 3, 5]})
    >>> round(compare_bivariate(o, o).correlation.mae, 6)
    0.0
    """
    orig, s = as_frame_pair(original, synthetic, "compare_bivariate")
    cols = check_columns({"original": orig, "synthetic": s}, columns, "compare_bivariate")
    cat = [c for c in cols if is_categorical(orig[c], categorical) or is_categorical(s[c], categorical)]
    num = [c for c in cols if c not in cat]
    corr = None
    if len(num) >= 2:
        xo = np.column_stack([numeric_values(orig[c], "compare_bivariate") for c in num])
        xs = np.column_stack([numeric_values(s[c], "compare_bivariate") for c in num])
        with np.errstate(invalid="ignore", divide="ignore"):
            co = pd.DataFrame(xo, columns=num).corr().to_numpy()
            cs = pd.DataFrame(xs, columns=num).corr().to_numpy()
        corr = matrix_difference(pd.DataFrame(co, index=num, columns=num), pd.DataFrame(cs, index=num, columns=num))
    cv = None
    if len(cat) >= 2:
        co_list, cs_list, sizes = [], [], []
        for c in cat:
            (a, b), uniq = joint_codes([orig[c], s[c]])
            co_list.append(a)
            cs_list.append(b)
            sizes.append(len(uniq))
        cv = matrix_difference(_cramer_matrix(co_list, sizes, cat), _cramer_matrix(cs_list, sizes, cat))
    return BivariateComparison(correlation=corr, cramers_v=cv)
