"""Empirical risk and utility of released tables against the original (003 sections 3.3, 4.3).

:func:`table_metrics` compares an original :class:`~cellsafe.CountTable` with one or several
released tables (implicates) on the same variables: tau1..tau4(k), the share of cells within p%
of the original (003 Table 3), the trimmed mean percentage difference, the squared error, and
the Hellinger distance and utility (001 eqs. 3-4); each per implicate, with the mean and spread
over implicates.

Only the union of the non-zero cells of the tables is touched; cells that are zero in every table
enter as a count (n_cells - structural zeros - union size), so a table of 10^12 cells costs
memory only for its non-zero ones.  Every metric is a sum over cells of a function of the cell's
(original, released) pair, so it is computed from the number of cells of each distinct pair
(:class:`cellsafe.engines.CellPairs`): the local engine and Spark pair the tables where they live,
and :func:`table_metrics_from_pairs` gives the same numbers for both.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._frames import tau_dict, within_dict
from .._results import Result
from .._validation import check_real
from ..exceptions import InvalidArgumentError
from ..engines import CellPairs, cell_pairs
from ..table import CountTable, check_same_variables, check_table

__all__ = ["TableMetrics", "table_metrics", "table_metrics_from_pairs", "empirical_tau", "tau"]

_DEFAULT_K = (0, 1, 2, 3)
_DEFAULT_P = (0.5, 1.0, 5.0, 10.0, 50.0)


def _as_tables(
    original: Any, synthetic: Any, owner: str, name: str = "synthetic"
) -> tuple[CountTable, list[CountTable]]:
    """The original and the released tables (one or a non-empty list), all CountTables on one set of variables."""
    check_table(original, owner, "original")
    syn = [synthetic] if isinstance(synthetic, CountTable) else list(synthetic)
    if not syn:
        raise InvalidArgumentError(
            f"The {name!r} parameter of {owner} must be a CountTable or a non-empty list of CountTables. "
            "Got an empty list instead."
        )
    for i, s in enumerate(syn):
        check_table(s, owner, f"{name}[{i}]")
        check_same_variables(s, original, f"synthetic table {i}")
    return original, syn


def _counts_arg(k: Any) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(k))
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.number):
        raise InvalidArgumentError(f"The 'k' parameter must be a non-empty list of integer counts >= 0. Got {k!r}.")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise InvalidArgumentError(f"The 'k' parameter must hold integer counts >= 0. Got {arr[bad][0]!r} instead.")
    return arr.astype(np.int64)


def _percent_arg(p: Any) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(p, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0 or np.any(~np.isfinite(arr) | (arr < 0)):
        raise InvalidArgumentError(f"The 'p' parameter must be a non-empty list of percentages >= 0. Got {p!r}.")
    return arr


def _non_structural(table: CountTable) -> int:
    return table.n_cells - table.n_structural_zeros


def _tau_one(f: np.ndarray, g: np.ndarray, w: np.ndarray, n_zz: int, n: int, kk: np.ndarray) -> np.ndarray:
    """(len(k), 4) array of tau1..tau4 for one implicate, from its pairs (f, g) of ``w`` cells each."""
    out = np.empty((kk.size, 4))
    for i, k in enumerate(kk.tolist()):
        extra = n_zz if k == 0 else 0
        fk, gk = f == k, g == k
        c_orig = int(w[fk].sum()) + extra
        c_syn = int(w[gk].sum()) + extra
        c_both = int(w[fk & gk].sum()) + extra
        out[i] = (
            c_syn / n,
            c_orig / n,
            c_both / c_orig if c_orig else math.nan,
            c_both / c_syn if c_syn else math.nan,
        )
    return out


def _within_one(f: np.ndarray, g: np.ndarray, w: np.ndarray, n_zz: int, n: int, pp: np.ndarray) -> np.ndarray:
    """(len(p), 2): share within p% among all cells and among non-zero original cells."""
    nz = f > 0
    fn, gn, wn = f[nz].astype(np.float64), g[nz].astype(np.float64), w[nz]
    n_nz = int(wn.sum())
    out = np.empty((pp.size, 2))
    for i, p in enumerate(pp.tolist()):
        ok = np.abs(gn - fn) <= fn * (p / 100.0) + 1e-9 * np.maximum(fn, 1.0)
        within = int(wn[ok].sum())
        out[i] = ((within + n_zz) / n, within / n_nz if n_nz else math.nan)
    return out


def _weighted_trim_mean(values: np.ndarray, weights: np.ndarray, trim: float) -> float:
    """scipy.stats.trim_mean of the values each repeated ``weights`` times: cut int(trim n) from each end."""
    n = int(weights.sum())
    if n == 0:
        return math.nan
    cut = int(trim * n)
    order = np.argsort(values, kind="stable")
    v, c = values[order], weights[order].astype(np.int64)
    ends = np.cumsum(c)
    starts = ends - c
    kept = np.minimum(ends, n - cut) - np.maximum(starts, cut)  # how many of each value survive the cuts
    kept = np.maximum(kept, 0)
    return float(np.dot(kept.astype(np.float64), v) / (n - 2 * cut))


@dataclass(frozen=True)
class TableMetrics(Result):
    """Empirical risk and utility of ``m`` released tables against the original.

    Attributes
    ----------
    m : int
        Number of released tables (implicates).
    n_cells : int
        Non-structural cells.
    total : float
        Original grand total.
    tau : pandas.DataFrame
        Mean over implicates of tau1..tau4, indexed by k.
    tau_sd : pandas.DataFrame
        Their standard deviation over implicates (NaN when m = 1).
    within : pandas.DataFrame
        Mean share within p% (columns ``all``, ``nonzero``), indexed by p.
    per_implicate : pandas.DataFrame
        One row per implicate: ``squared_error``, ``hellinger_distance``, ``hellinger_utility``,
        ``trimmed_mean_pct_diff``, ``total``, and ``tau1(k)``..``tau4(k)``,
        ``within_all(p)``, ``within_nonzero(p)``.
    squared_error_of_mean : float
        sum_i (f_i - mean of the implicates' f_i)^2.
    trim : float
        Proportion cut from each end for the trimmed mean percentage difference.
    """

    m: int
    n_cells: int
    total: float
    tau: pd.DataFrame = field(repr=False)
    tau_sd: pd.DataFrame = field(repr=False)
    within: pd.DataFrame = field(repr=False)
    per_implicate: pd.DataFrame = field(repr=False)
    squared_error_of_mean: float
    trim: float

    def mean(self, name: str) -> float:
        """Mean over implicates of a column of :attr:`per_implicate`."""
        return float(self._column(name).mean())

    def sd(self, name: str) -> float:
        """Standard deviation over implicates (NaN for m = 1)."""
        col = self._column(name)
        return float(col.std(ddof=1)) if col.size > 1 else math.nan

    def se(self, name: str) -> float:
        """Standard error of the mean over implicates, sd / sqrt(m)."""
        return self.sd(name) / math.sqrt(self.m)

    def _column(self, name: str) -> pd.Series:
        if name not in self.per_implicate.columns:
            raise InvalidArgumentError(
                f"unknown metric {name!r}; choose one of {', '.join(map(repr, self.per_implicate.columns))}."
            )
        return self.per_implicate[name]

    @property
    def squared_error(self) -> float:
        """sum_i (f_i - g_i)^2, averaged over implicates."""
        return self.mean("squared_error")

    @property
    def hellinger_distance(self) -> float:
        """Hellinger distance, averaged over implicates."""
        return self.mean("hellinger_distance")

    @property
    def hellinger_utility(self) -> float:
        """1 - HD / sqrt(n), averaged over implicates."""
        return self.mean("hellinger_utility")

    @property
    def trimmed_mean_pct_diff(self) -> float:
        """Trimmed mean of 100 (g - f) / f over non-zero original cells, averaged over implicates."""
        return self.mean("trimmed_mean_pct_diff")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the keys of ``cellsafe evaluate --json``)."""

        def spread(name: str) -> dict[str, float]:
            return {"mean": self.mean(name), "sd": self.sd(name)}

        return {
            "m": self.m,
            "n_cells": self.n_cells,
            "tau": tau_dict(self.tau),
            "tau_sd": tau_dict(self.tau_sd),
            "squared_error": self.squared_error,
            "squared_error_sd": self.sd("squared_error"),
            "squared_error_of_mean": self.squared_error_of_mean,
            "total": {"original": self.total, "expected": self.mean("total"), "sd": self.sd("total")},
            "hellinger_distance": self.hellinger_distance,
            "hellinger_utility": self.hellinger_utility,
            "hellinger_utility_sd": self.sd("hellinger_utility"),
            "trimmed_mean_pct_diff": spread("trimmed_mean_pct_diff"),
            "within_p": within_dict(self.within),
        }

    def to_frame(self) -> pd.DataFrame:
        """The risk table: mean tau1..tau4 over implicates by k (a copy of :attr:`tau`)."""
        return self.tau.copy()

    def _title(self) -> str:
        return f"Empirical metrics over m = {self.m} released table(s)"

    def summary(self) -> str:
        """A plain-text report."""
        fmt = lambda x: f"{x:.4f}"  # noqa: E731
        return "\n".join(
            [
                f"Empirical metrics over m = {self.m} released table(s); {self.n_cells:,} cells, total {self.total:,.0f}",
                "",
                self.tau.to_string(float_format=fmt),
                "",
                f"squared error           {self.squared_error:,.6g} per implicate; {self.squared_error_of_mean:,.6g} for the mean",
                f"Hellinger               distance {self.hellinger_distance:.6g}, utility {self.hellinger_utility:.6f}",
                f"trimmed mean % diff     {self.trimmed_mean_pct_diff:.4g} (top and bottom {100 * self.trim:g}% cut)",
                f"synthetic total         mean {self.mean('total'):,.6g}, original {self.total:,.6g}",
                "",
                "share within p% of the original",
                self.within.to_string(float_format=fmt),
            ]
        )


def table_metrics(
    original: CountTable,
    synthetic: CountTable | Sequence[CountTable],
    *,
    k: Any = _DEFAULT_K,
    p: Any = _DEFAULT_P,
    trim: float = 0.1,
) -> TableMetrics:
    """Empirical risk and utility of released tables against the original.

    Parameters
    ----------
    original : CountTable
        The original table.
    synthetic : CountTable or sequence of CountTable
        Released tables (implicates) on the same variables.
    k : sequence of int, default (0, 1, 2, 3)
        Counts for tau1..tau4.
    p : sequence of float, default (0.5, 1, 5, 10, 50)
        Percentages for the share of cells within p% of the original.  A cell of original count
        f > 0 is within p% when |g - f| <= p f / 100; a random zero only when it stays zero.
    trim : float in [0, 0.5), default 0.1
        Share cut from each end for the trimmed mean of 100 (g - f) / f over the non-zero
        original cells (003 Table 5 cuts 10%).

    Returns
    -------
    TableMetrics

    Notes
    -----
    tau1(k) = share of released cells equal to k; tau2(k) = share of original cells equal to k;
    tau3(k) = share of original k-cells released as k; tau4(k) = share of released k-cells that
    were k (003 section 3.3).  Over non-structural cells; k = 0 means random zeros.  Hellinger
    distance and utility as in 001 eqs. 3-4.

    Examples
    --------
    >>> import numpy as np
    >>> from cellsafe import CountTable, Variable
    >>> v = [Variable("a", (0, 1, 2, 3))]
    >>> f = CountTable(v, [0, 1, 2], [1, 2, 5])
    >>> g = CountTable(v, [0, 2, 3], [1, 5, 1])
    >>> r = table_metrics(f, g, k=[0, 1])
    >>> r.tau.loc[1].to_dict()
    {'tau1': 0.5, 'tau2': 0.25, 'tau3': 1.0, 'tau4': 0.5}
    >>> r.squared_error
    5.0
    """
    original, syn = _as_tables(original, synthetic, "table_metrics")
    return table_metrics_from_pairs(cell_pairs(original, syn), k=k, p=p, trim=trim)


def table_metrics_from_pairs(pairs: CellPairs, *, k: Any = _DEFAULT_K, p: Any = _DEFAULT_P, trim: float = 0.1) -> TableMetrics:
    """:func:`table_metrics` from the cells of each (original, released) pair, as either engine pairs them.

    Parameters
    ----------
    pairs : cellsafe.engines.CellPairs
        From :func:`cellsafe.engines.cell_pairs` (tables in this process) or
        :func:`cellsafe.engines.spark.cell_pairs` (tables in Spark): the same pairs give the same
        metrics, bit for bit.
    k, p, trim
        As for :func:`table_metrics`.

    Returns
    -------
    TableMetrics
    """
    kk = _counts_arg(k)
    pp = _percent_arg(p)
    trim = check_real(trim, "trim", "table_metrics", low=0.0, high=0.5, high_open=True)
    if not isinstance(pairs, CellPairs) or pairs.m == 0:
        raise InvalidArgumentError(f"table_metrics_from_pairs needs the CellPairs of at least one released table. Got {pairs!r}.")
    n = int(pairs.n_open)
    total = float(pairs.total)
    rows, taus, withins = [], [], []
    for f, g, w in zip(pairs.f, pairs.g, pairs.cells):
        w = np.asarray(w, dtype=np.int64)
        n_zz = n - int(w.sum())
        taus.append(_tau_one(f, g, w, n_zz, n, kk))
        withins.append(_within_one(f, g, w, n_zz, n, pp))
        ff, gf = f.astype(np.float64), g.astype(np.float64)
        nz = f > 0
        pct = 100.0 * (gf[nz] - ff[nz]) / ff[nz]
        if np.issubdtype(f.dtype, np.integer) and np.issubdtype(g.dtype, np.integer):
            squared = float(int(np.dot(w, (g - f) ** 2)))  # exact
            released_total = float(int(np.dot(w, g)))
        else:
            squared = float(np.dot(w, (gf - ff) ** 2))
            released_total = float(np.dot(w, gf))
        hd = math.sqrt(0.5 * float(np.dot(w, (np.sqrt(ff) - np.sqrt(gf)) ** 2)))
        row = {
            "squared_error": squared,
            "hellinger_distance": hd,
            "hellinger_utility": 1.0 - hd / math.sqrt(total) if total > 0 else math.nan,
            "trimmed_mean_pct_diff": _weighted_trim_mean(pct, w[nz], trim),
            "total": released_total,
        }
        for i, kv in enumerate(kk.tolist()):
            for c in range(4):
                row[f"tau{c + 1}({kv})"] = float(taus[-1][i, c])
        for i, pv in enumerate(pp.tolist()):
            row[f"within_all({pv:g})"] = float(withins[-1][i, 0])
            row[f"within_nonzero({pv:g})"] = float(withins[-1][i, 1])
        rows.append(row)
    tau_arr = np.array(taus)
    within_arr = np.array(withins)
    cols = ["tau1", "tau2", "tau3", "tau4"]
    kidx = pd.Index(kk, name="k")
    with warnings.catch_warnings():  # all-NaN columns (no cell of size k) stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        tau_mean = np.nanmean(tau_arr, axis=0)
        tau_sd = np.nanstd(tau_arr, axis=0, ddof=1) if pairs.m > 1 else np.full(tau_arr.shape[1:], np.nan)
    return TableMetrics(
        m=pairs.m,
        n_cells=n,
        total=total,
        tau=pd.DataFrame(tau_mean, index=kidx, columns=cols),
        tau_sd=pd.DataFrame(tau_sd, index=kidx, columns=cols),
        within=pd.DataFrame(within_arr.mean(axis=0), index=pd.Index(pp, name="p"), columns=["all", "nonzero"]),
        per_implicate=pd.DataFrame(rows, index=pd.RangeIndex(1, pairs.m + 1, name="implicate")),
        squared_error_of_mean=float(pairs.squared_error_of_mean),
        trim=trim,
    )


def empirical_tau(original: CountTable, synthetic: CountTable | Sequence[CountTable], k: Any = _DEFAULT_K) -> pd.DataFrame:
    """tau1..tau4(k) of released tables, averaged over implicates (see :func:`table_metrics`)."""
    return table_metrics(original, synthetic, k=k, p=[50.0]).tau


#: ``cellsafe.metrics.tau(original, synthetic, k)``: the same as :func:`empirical_tau`.
tau = empirical_tau
