"""Table-based utility: Voas-Williamson, Freeman-Tukey, Jensen-Shannon and standardized pMSE.

For a set of variables, the original and synthetic records are cross-tabulated (numeric columns
with more than ``ngroups`` distinct values are first cut into ``ngroups`` quantile groups with
breaks from both data sets pooled).  Cells empty in both tables are dropped; with ``o_j``, ``s_j``
the counts of the ``K`` remaining cells, ``N = sum(o + s)``, ``c = sum(s) / N`` and ``df = K - 1``:

- ``VW = sum (s_j - o_j c/(1-c))^2 / ((o_j + s_j) c)`` (Voas-Williamson; with equal sizes
  ``sum (s - o)^2 / ((o + s)/2)``);
- ``FT = 4 sum (sqrt(s_j) - sqrt(o_j c/(1-c)))^2`` (Freeman-Tukey);
- ``pMSE = VW (1-c)^2 c / N``: the pMSE of the saturated logistic model on the cells;
- ``S_pMSE = S_VW = VW / df``, ``S_FT = FT / df``: each ~ chi-square(df) / df, so 1 if the
  synthesizer is correct;
- ``JSD``: Jensen-Shannon divergence (base 2) of the two tables' relative frequencies, and
  ``S_JSD = 2 N JSD / (df ln 2)``, the scaling that synthpop's ``utility.tab`` reports.

:func:`table_utility` computes them for one table, :func:`table_utilities` for every one-, two-
or three-way table of a set of variables (as synthpop's ``utility.tables``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..._results import Result, json_ready
from ..._validation import check_in, check_integer
from ...exceptions import InvalidArgumentError
from ._data import as_frame_pair, check_columns, is_categorical, joint_codes, numeric_values

__all__ = ["TableUtility", "table_utility", "table_utilities", "coded_columns"]

_STATS = ("VW", "FT", "JSD", "pMSE", "S_VW", "S_FT", "S_JSD", "S_pMSE", "df", "nempty")


@dataclass(frozen=True)
class TableUtility(Result):
    """Utility statistics of one cross-tabulation (see the module notes for the formulas).

    Attributes
    ----------
    variables : tuple of str
    VW, FT, JSD, pMSE : float
    S_VW, S_FT, S_JSD, S_pMSE : float
        Standardized by ``df`` (expected 1 for a correct synthesizer).
    df : int
        Non-empty cells minus 1.
    nempty : int
        Cells empty in both tables.
    """

    variables: tuple[str, ...]
    VW: float
    FT: float
    JSD: float
    pMSE: float
    S_VW: float
    S_FT: float
    S_JSD: float
    S_pMSE: float
    df: int
    nempty: int

    def to_dict(self) -> dict[str, Any]:
        return json_ready({"variables": list(self.variables), **{k: getattr(self, k) for k in _STATS}})


def _cut_codes(xo: np.ndarray, xs: np.ndarray, ngroups: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Quantile groups of a numeric column, breaks from both data sets pooled; NaN is its own group."""
    pooled = np.concatenate([xo, xs])
    ok = pooled[~np.isnan(pooled)]
    breaks = np.unique(np.quantile(ok, np.linspace(0, 1, ngroups + 1))) if ok.size else np.zeros(1)
    inner = breaks[1:-1]

    def cut(x: np.ndarray) -> np.ndarray:
        g = np.searchsorted(inner, x, side="right").astype(np.int64)
        g[np.isnan(x)] = inner.size + 1
        return g

    return cut(xo), cut(xs), inner.size + 2


def coded_columns(
    orig: pd.DataFrame, syn: pd.DataFrame, cols: Sequence[str], ngroups: int, categorical: Sequence[str] | None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, int]]:
    """Integer codes of each column in both frames (numeric columns grouped), and code counts."""
    co: dict[str, np.ndarray] = {}
    cs: dict[str, np.ndarray] = {}
    size: dict[str, int] = {}
    for c in cols:
        if is_categorical(orig[c], categorical) or is_categorical(syn[c], categorical):
            (a, b), uniq = joint_codes([orig[c], syn[c]])
            co[c], cs[c], size[c] = a, b, len(uniq)
            continue
        xo = numeric_values(orig[c], "table_utility")
        xs = numeric_values(syn[c], "table_utility")
        distinct = np.unique(np.concatenate([xo, xs]))
        if distinct.size <= ngroups:
            (a, b), uniq = joint_codes([orig[c], syn[c]])
            co[c], cs[c], size[c] = a, b, len(uniq)
        else:
            co[c], cs[c], size[c] = _cut_codes(xo, xs, ngroups)
    return co, cs, size


def _stats_from_counts(o: np.ndarray, s: np.ndarray, n_cells: int, variables: tuple[str, ...]) -> TableUtility:
    keep = (o + s) > 0
    nempty = int(n_cells - keep.sum())
    o = o[keep].astype(np.float64)
    s = s[keep].astype(np.float64)
    n = o.sum() + s.sum()
    c = s.sum() / n
    df = int(o.size - 1)
    expect = (o + s) * c
    diff = s - o * c / (1 - c)
    vw = float(np.sum(diff**2 / expect))
    ft = float(4 * np.sum((np.sqrt(s) - np.sqrt(o * c / (1 - c))) ** 2))
    po, ps = o / o.sum(), s / s.sum()
    half = 0.5 * (po + ps)
    with np.errstate(divide="ignore", invalid="ignore"):
        jsd = 0.5 * float(np.sum(np.where(po > 0, po * np.log2(po / half), 0.0)))
        jsd += 0.5 * float(np.sum(np.where(ps > 0, ps * np.log2(ps / half), 0.0)))
    pmse = vw * c * (1 - c) ** 2 / n
    if df > 0:
        s_vw, s_ft, s_jsd = vw / df, ft / df, jsd * 2 * n / df / np.log(2)
    else:
        s_vw = s_ft = s_jsd = np.nan
    return TableUtility(variables, vw, ft, jsd, pmse, s_vw, s_ft, float(s_jsd), s_vw, df, nempty)


def _table_counts(
    co: dict[str, np.ndarray], cs: dict[str, np.ndarray], size: dict[str, int], variables: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, int]:
    fo = np.zeros(next(iter(co.values())).size, dtype=np.int64)
    fs = np.zeros(next(iter(cs.values())).size, dtype=np.int64)
    n_cells = 1
    for v in variables:
        fo = fo * size[v] + co[v]
        fs = fs * size[v] + cs[v]
        n_cells *= size[v]
    if n_cells <= 4 * (fo.size + fs.size) + 1024:
        return np.bincount(fo, minlength=n_cells), np.bincount(fs, minlength=n_cells), n_cells
    # sparse: tabulate only the cells that occur
    uniq, inv = np.unique(np.concatenate([fo, fs]), return_inverse=True)
    o = np.bincount(inv[: fo.size], minlength=uniq.size)
    s = np.bincount(inv[fo.size :], minlength=uniq.size)
    return o, s, n_cells


def table_utility(
    original: Any,
    synthetic: Any,
    variables: Sequence[str],
    *,
    ngroups: int = 5,
    categorical: Sequence[str] | None = None,
) -> TableUtility:
    """Voas-Williamson, Freeman-Tukey, Jensen-Shannon and pMSE statistics of one cross-table.

    Parameters
    ----------
    original, synthetic : DataFrame
    variables : sequence of str
        The variables to cross.
    ngroups : int
        Numeric columns with more distinct values are cut into this many quantile groups.
    categorical : sequence of str, optional
        Numeric columns to tabulate by value without grouping.

    Returns
    -------
    TableUtility

    Notes
    -----
    Definitions as synthpop's ``utility.tab`` reports them (module notes); pMSE and S_pMSE are
    those of the saturated logistic propensity model on the table's cells (Snoke et al. 2018),
    the tabular case of :func:`propensity_metrics`.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": list("xxyy")})
    >>> s = pd.DataFrame({"a": list("xyyy")})
    >>> round(table_utility(o, s, ["a"]).VW, 4)  # 1/1.5 + 1/2.5
    1.0667
    """
    ngroups = check_integer(ngroups, "ngroups", "table_utility", low=2)
    orig, syn = as_frame_pair(original, synthetic, "table_utility")
    vars_ = check_columns({"original": orig, "synthetic": syn}, list(variables), "table_utility")
    co, cs, size = coded_columns(orig, syn, vars_, ngroups, categorical)
    o, s, n_cells = _table_counts(co, cs, size, vars_)
    return _stats_from_counts(o, s, n_cells, tuple(vars_))


def table_utilities(
    original: Any,
    synthetic: Any,
    columns: Sequence[str] | None = None,
    *,
    tables: str = "twoway",
    third_var: str | None = None,
    ngroups: int = 5,
    categorical: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table utility over all one-, two- or three-way tables of a set of variables.

    Parameters
    ----------
    original, synthetic : DataFrame
    columns : sequence of str, optional
        Variables to combine (default: all shared columns).
    tables : {"oneway", "twoway", "threeway"}
        Which tables: every variable, every pair, or every triple (every pair with ``third_var``
        when it is given, as synthpop's ``utility.tables``).
    third_var : str, optional
        For three-way tables, the variable crossed with each pair of the others.
    ngroups, categorical
        As :func:`table_utility`.

    Returns
    -------
    pandas.DataFrame
        One row per table: ``variables`` (a " x "-joined name) and the statistics VW, FT, JSD,
        pMSE, S_VW, S_FT, S_JSD, S_pMSE, df, nempty; sorted as the combinations are generated.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"a": list("xxyy"), "b": list("uvuv")})
    >>> table_utilities(o, o, tables="twoway")["S_pMSE"].tolist()
    [0.0]
    """
    tables = check_in(tables, "tables", "table_utilities", ("oneway", "twoway", "threeway"))
    ngroups = check_integer(ngroups, "ngroups", "table_utilities", low=2)
    orig, syn = as_frame_pair(original, synthetic, "table_utilities")
    cols = check_columns({"original": orig, "synthetic": syn}, columns, "table_utilities")
    if third_var is not None:
        if tables != "threeway":
            raise InvalidArgumentError("table_utilities: third_var is only used with tables='threeway'.")
        check_columns({"original": orig, "synthetic": syn}, [third_var], "table_utilities")
    co, cs, size = coded_columns(orig, syn, list(dict.fromkeys(cols + ([third_var] if third_var else []))), ngroups, categorical)
    if tables == "oneway":
        combos: list[tuple[str, ...]] = [(c,) for c in cols]
    elif tables == "twoway":
        combos = list(itertools.combinations(cols, 2))
    elif third_var is not None:
        others = [c for c in cols if c != third_var]
        combos = [(a, b, third_var) for a, b in itertools.combinations(others, 2)]
    else:
        combos = list(itertools.combinations(cols, 3))
    if not combos:
        raise InvalidArgumentError(f"table_utilities: {tables} tables need more columns than {cols}.")
    rows = []
    for combo in combos:
        o, s, n_cells = _table_counts(co, cs, size, combo)
        r = _stats_from_counts(o, s, n_cells, combo)
        rows.append({"variables": " x ".join(combo), **{k: getattr(r, k) for k in _STATS}})
    return pd.DataFrame(rows, columns=["variables", *_STATS])
