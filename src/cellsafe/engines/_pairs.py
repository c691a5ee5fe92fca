"""Empirical table metrics from the joint distribution of (original, released) counts.

tau1..tau4(k), the share of cells within p%, the squared error, the total and the Hellinger
distance all sum a function of a cell's pair (f, g) over the cells, so the number of cells with
each distinct pair is all they need.  A distributed engine computes that small distribution
(``GROUP BY f, g``) and these functions finish on one machine, with the definitions of
:func:`cellsafe.metrics.table_metrics` (003 section 3.3 and Table 3; 001 eqs. 3-4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._frames import pd
from .._results import Result
from ..exceptions import InvalidArgumentError

__all__ = ["PairMetrics", "pair_metrics"]


@dataclass(frozen=True)
class PairMetrics(Result):
    """Empirical risk and utility of released tables from their (original, released) pair counts.

    Attributes
    ----------
    per_implicate : pandas.DataFrame
        One row per released table: tau1(k)..tau4(k), within_all(p), within_nonzero(p),
        squared_error, hellinger_distance, hellinger_utility, total.
    engine : str
        Which engine computed the pair counts.
    """

    per_implicate: pd.DataFrame
    engine: str = "spark"

    @property
    def mean(self) -> pd.Series:
        """Mean of each metric over the implicates."""
        return self.per_implicate.mean(axis=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "m": int(len(self.per_implicate)),
            "mean": {k: float(v) for k, v in self.mean.items()},
            "per_implicate": [{k: float(v) for k, v in row.items()} for _, row in self.per_implicate.iterrows()],
        }

    def to_frame(self) -> pd.DataFrame:
        return self.per_implicate

    def _title(self) -> str:
        return f"Empirical risk and utility ({self.engine} engine)"

    def summary(self) -> str:
        lines = [self._title(), "-" * len(self._title()), f"implicates  {len(self.per_implicate)}"]
        lines += [f"{k:<28}{v:.6g}" for k, v in self.mean.items()]
        return "\n".join(lines)


def _one(f: np.ndarray, g: np.ndarray, w: np.ndarray, n_zz: int, n: int, total: float, k: np.ndarray, p: np.ndarray) -> dict:
    row: dict[str, float] = {}
    for kv in k.tolist():
        extra = n_zz if kv == 0 else 0
        c_orig = float(w[f == kv].sum()) + extra
        c_syn = float(w[g == kv].sum()) + extra
        c_both = float(w[(f == kv) & (g == kv)].sum()) + extra
        row[f"tau1({kv})"] = c_syn / n
        row[f"tau2({kv})"] = c_orig / n
        row[f"tau3({kv})"] = c_both / c_orig if c_orig else math.nan
        row[f"tau4({kv})"] = c_both / c_syn if c_syn else math.nan
    nz = f > 0
    n_nz = float(w[nz].sum())
    for pv in p.tolist():
        fn, gn = f[nz].astype(np.float64), g[nz].astype(np.float64)
        ok = np.abs(gn - fn) <= fn * (pv / 100.0) + 1e-9 * np.maximum(fn, 1.0)
        within = float(w[nz][ok].sum())
        row[f"within_all({pv:g})"] = (within + n_zz) / n
        row[f"within_nonzero({pv:g})"] = within / n_nz if n_nz else math.nan
    diff = g.astype(np.float64) - f.astype(np.float64)
    row["squared_error"] = float(np.sum(w * diff**2))
    hd = math.sqrt(0.5 * float(np.sum(w * (np.sqrt(f.astype(np.float64)) - np.sqrt(g.astype(np.float64))) ** 2)))
    row["hellinger_distance"] = hd
    row["hellinger_utility"] = 1.0 - hd / math.sqrt(total) if total > 0 else math.nan
    row["total"] = float(np.sum(w * g))
    return row


def pair_metrics(
    pairs: list[pd.DataFrame], n_open: int, k: Any = (0, 1, 2, 3), p: Any = (0.5, 1.0, 5.0, 10.0, 50.0), *, engine: str = "spark"
) -> PairMetrics:
    """Metrics of released tables from their pair counts.

    Parameters
    ----------
    pairs : list of DataFrame
        One per released table, with columns ``f`` (original count), ``g`` (released count) and
        ``cells`` (number of cells with that pair), over the cells non-zero in either table.
    n_open : int
        Non-structural cells of the table (K less the structural zeros).
    k, p : sequences
        Counts for tau and percentages for the share within p%.

    Returns
    -------
    PairMetrics

    Examples
    --------
    >>> pairs = pd.DataFrame({"f": [1, 2, 5, 0], "g": [1, 0, 5, 1], "cells": [1, 1, 1, 1]})
    >>> r = pair_metrics([pairs], n_open=4, k=[0, 1])
    >>> r.per_implicate.loc[0, ["tau1(1)", "tau2(1)", "tau3(1)", "tau4(1)", "squared_error"]].tolist()
    [0.5, 0.25, 1.0, 0.5, 5.0]
    """
    kk = np.atleast_1d(np.asarray(k, dtype=np.int64))
    pp = np.atleast_1d(np.asarray(p, dtype=np.float64))
    if not pairs:
        raise InvalidArgumentError("pair_metrics needs the pair counts of at least one released table.")
    rows = []
    for frame in pairs:
        f = frame["f"].to_numpy(dtype=np.int64)
        g = frame["g"].to_numpy(dtype=np.int64)
        w = frame["cells"].to_numpy(dtype=np.int64)
        n_zz = int(n_open) - int(w.sum())
        total = float(np.sum(w * f))
        rows.append(_one(f, g, w, n_zz, int(n_open), total, kk, pp))
    return PairMetrics(pd.DataFrame(rows), engine=engine)
